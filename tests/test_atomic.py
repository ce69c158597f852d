"""storage/atomic.py: the one temp-and-rename write behind store's files, codecache's
kept code and homes' kept verdict. A write that fails at any step, by an OS error or an
interrupt, leaves the target as it was and no temp file behind."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.storage import atomic, codecache, homes, iostep, store

STEPS = ("create-temp", "write", "fsync", "rename")


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """A folder of the test's own (tmp_path holds the fixtures' home)."""
    folder = tmp_path / "here"
    folder.mkdir()
    return folder


class _Boom(BaseException):
    """An interrupt (as KeyboardInterrupt is): not an OSError."""


@pytest.mark.parametrize("failure", [OSError, _Boom])
@pytest.mark.parametrize("at", STEPS)
def test_a_write_failing_at_any_step_leaves_the_old_file_and_no_temp(
        here: Path, at: str, failure: type[BaseException]) -> None:
    target = here / "kept"
    target.write_bytes(b"old")

    def step(name: str) -> None:
        if name == at:
            raise failure(f"failed at {name}")

    with pytest.raises(failure):
        atomic.replace(target, b"new", durable=True, step=step)
    assert target.read_bytes() == b"old"
    assert _listing(here) == ["kept"]


@settings(max_examples=50, deadline=None)
@given(data=st.binary(max_size=4096), mode=st.sampled_from([None, 0o600, 0o644, 0o640]))
def test_a_write_leaves_exactly_the_bytes_and_the_mode(data: bytes, mode: int | None) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "f"
        target.write_bytes(b"before")
        atomic.replace(target, data, mode=mode)
        assert target.read_bytes() == data
        assert stat.S_IMODE(target.stat().st_mode) == (0o600 if mode is None else mode)
        assert _listing(Path(folder)) == ["f"]


def test_the_temp_file_is_made_in_the_folder_given(here: Path) -> None:
    aside = here / "aside"
    aside.mkdir()
    seen: list[list[str]] = []
    atomic.replace(here / "f", b"x", folder=aside,
                   step=lambda name: seen.append(_listing(aside)) if name == "rename" else None)
    assert len(seen[0]) == 1 and seen[0][0].endswith(atomic.TEMP_SUFFIX)
    assert _listing(aside) == [] and (here / "f").read_bytes() == b"x"


def _failing_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    def rename(src: object, dst: object) -> None:
        raise _Boom("interrupted at the rename")

    monkeypatch.setattr(os, "replace", rename)


def test_an_interrupted_code_cache_write_leaves_no_temp(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """codecache.save caught only OSError: an interrupt at the rename left
    `<cache>.<pid>.tmp` in the package's __pycache__ (seen failing on main)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    before = codecache._state["path"]
    codecache.uninstall()
    path = here / "kept.marshal"
    path.write_bytes(b"old")
    try:
        codecache.install(str(path))
        codecache._state["new"] = 1
        _failing_rename(monkeypatch)
        with pytest.raises(_Boom):
            codecache.save()
    finally:
        monkeypatch.undo()
        codecache.uninstall()
        if before is not None:
            codecache.install(before)
    assert path.read_bytes() == b"old"
    assert _listing(here) == ["kept.marshal"]


def test_an_interrupted_home_verdict_write_leaves_no_temp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """homes' kept verdict caught only OSError: an interrupt at the rename left
    `.home-check.<pid>.tmp` in the home's index folder (seen failing on main)."""
    from tests.test_personal_boundary import _kept_dotfiles_verdict

    dotfiles, _, ws, _ = _kept_dotfiles_verdict(tmp_path, monkeypatch)
    folder = ws.home / "index"
    kept = folder / homes._HomeVerdict.NAME
    assert kept.is_file()
    kept.unlink()  # the next check keeps its verdict again
    listed = _listing(folder)
    _failing_rename(monkeypatch)
    with pytest.raises(_Boom):
        homes.check_home(ws)
    monkeypatch.setattr(os, "replace", os.rename)
    assert _listing(folder) == listed


def test_store_writes_keep_their_steps_and_errors(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """store.write_bytes_atomic through the helper: iostep sees the same four steps, an
    OS error is still a WriteFailed naming the file, and the file is as it was."""
    seen: list[str] = []
    real = iostep.step

    def step(name: str, fails: bool = True) -> None:
        seen.append(name)
        if name == "fsync":
            raise OSError(28, "No space left on device")
        real(name, fails)

    target = here / "m.md"
    target.write_bytes(b"old")
    monkeypatch.setattr(iostep, "step", step)
    with pytest.raises(store.WriteFailed, match="m.md"):
        store.write_bytes_atomic(target, b"new")
    assert seen == ["create-temp", "write", "fsync"]
    assert target.read_bytes() == b"old" and _listing(here) == ["m.md"]


def test_a_bare_file_name_is_written_through_the_current_folder(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`replace("name", ...)`: the temp file is made beside the target, in the current
    folder, not in $TMPDIR (dirname is ""; seen failing: it went to tempfile's folder,
    which may be on another device, where the rename fails)."""
    import tempfile

    elsewhere = here / "tmpdir"
    elsewhere.mkdir()
    work = here / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("TMPDIR", str(elsewhere))
    monkeypatch.setattr(tempfile, "tempdir", str(elsewhere))
    seen: list[list[str]] = []
    atomic.replace("kept", b"x",
                   step=lambda name: seen.append(_listing(work)) if name == "rename" else None)
    assert len(seen[0]) == 1 and seen[0][0].startswith(f".kept.{os.getpid()}.")
    assert seen[0][0].endswith(atomic.TEMP_SUFFIX)
    assert _listing(work) == ["kept"] and _listing(elsewhere) == []
    assert (work / "kept").read_bytes() == b"x"


def test_a_temp_name_that_is_taken_is_drawn_again(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """create_temp never opens a file that exists: a taken name (here the first two
    drawn) is passed over for a new one; the file left there is untouched."""
    draws = iter([b"\x00" * 6, b"\x00" * 6, b"\x01" * 6])
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    taken = here / f".f.1.{'00' * 6}{atomic.TEMP_SUFFIX}"
    taken.write_bytes(b"someone's")
    fd, path = atomic.create_temp(str(here), ".f.1.")
    os.close(fd)
    assert os.path.basename(path) == f".f.1.{'01' * 6}{atomic.TEMP_SUFFIX}"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert taken.read_bytes() == b"someone's"


def test_no_free_temp_name_is_an_os_error(
        here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "urandom", lambda n: b"\x00" * n)
    (here / f".f.{'00' * 6}{atomic.TEMP_SUFFIX}").write_bytes(b"")
    with pytest.raises(FileExistsError):
        atomic.create_temp(str(here), ".f.")
    assert _listing(here) == [f".f.{'00' * 6}{atomic.TEMP_SUFFIX}"]


def test_a_write_does_not_import_tempfile(here: Path) -> None:
    """tempfile imports shutil (and with it bz2, lzma): a search writes the home's kept
    verdict through replace, and a search loads no archive module."""
    import subprocess

    code = ("import sys; from memex.storage import atomic; atomic.replace(sys.argv[1], b'x');"
            "print(sorted({'tempfile', 'shutil'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code, str(here / "f")],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]" and (here / "f").read_bytes() == b"x"
