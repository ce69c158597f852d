"""import writes its files in batches flushed to disk once (not an fsync per file),
each still atomically: a file that cannot be written is refused alone, with no temp
file or half-written memory left behind."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memex.storage import homes
from tests.conftest import BIN
from tests.helpers import invoke, invoke_json


def _export(repo: Path, tmp_path: Path, count: int) -> Path:
    for n in range(count):
        invoke_json("capture", f"Imported note number {n} about caches")
    archive = tmp_path / "export.jsonl"
    assert invoke("export", "--output", str(archive)).exit_code == 0
    return archive


def _import(repo: Path, archive: Path, home: Path, **extra: str
            ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_MEMEX_HOME=str(home), **extra)
    return subprocess.run([str(BIN / "git-memex"), "import", str(archive), "--json"],
                          cwd=repo, env=env, capture_output=True, text=True)


def _steps(log: Path) -> list[str]:
    return [line.split()[1] for line in log.read_text().splitlines()]


def test_one_flush_for_many_files(repo: Path, tmp_path: Path) -> None:
    archive = _export(repo, tmp_path, 5)
    log = tmp_path / "steps.log"
    done = _import(repo, archive, tmp_path / "other-home", GIT_MEMEX_FAULT_LOG=str(log))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["imported"]) == 5
    steps = _steps(log)
    assert steps.count("fsync") == 1 and steps.count("rename") == 5
    for item in report["imported"]:
        text = Path(item["path"]).read_text(encoding="utf-8")
        assert "Imported note number" in text and "review_state: draft" in text


def test_a_file_that_cannot_be_written_is_refused_alone(repo: Path, tmp_path: Path) -> None:
    archive = _export(repo, tmp_path, 4)
    log = tmp_path / "steps.log"
    _import(repo, archive, tmp_path / "dry-home", GIT_MEMEX_FAULT_LOG=str(log))
    second_rename = [n for n, step in enumerate(_steps(log), 1) if step == "rename"][1]
    home = tmp_path / "other-home"
    done = _import(repo, archive, home, GIT_MEMEX_FAULT=f"ENOSPC@{second_rename}")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert len(report["imported"]) == 3
    (rejected,) = report["rejected"]
    assert "No space left on device" in rejected["reason"]
    assert "nothing was changed" in rejected["reason"]
    ws = homes.workspace(repo, home=home)
    on_disk = sorted(p.name for p in ws.outbox_dir.iterdir())
    assert on_disk == sorted(Path(i["path"]).name for i in report["imported"])
    git_dir = repo / ".git"
    assert not [p for p in git_dir.rglob("*.memex-tmp")]  # no temp file left


def test_one_detector_pass_for_a_clean_entry_and_the_same_files_as_two(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean entry is scanned once (what is stored, whole); one with a secret in its
    title, body, aliases, another key or a comment is masked exactly as the import before
    stop 26 masked it (fields, then text: the same leaks' files and notices are compared
    with that code's in tests/test_import_same.py's golden expectations)."""
    from memex.core import redact
    from memex.workflows import portable
    from tests.test_portable import entry, make_text

    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-02T00:00:00Z")
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    texts = [make_text(f"clean note {n}") for n in range(3)]
    leaks = [make_text(f"the token is {token}"), make_text("title leak"),
             make_text("alias leak"), make_text("key leak"), make_text("comment leak")]
    leaks[1] = (leaks[1][0], leaks[1][1].replace("scope:", f"title: deploy {token}\nscope:"))
    leaks[2] = (leaks[2][0], leaks[2][1].replace("scope:", f"aliases: [{token}]\nscope:"))
    leaks[3] = (leaks[3][0], leaks[3][1].replace("scope:", f"x-deploy: {token}\nscope:"))
    leaks[4] = (leaks[4][0], leaks[4][1].replace("scope:", f"# {token}\nscope:"))
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join([json.dumps({"format": "git-memex-export", "version": 1}),
                                  *(entry(t, f"{i}.md") for i, t in texts + leaks)]) + "\n")

    def run(home: Path, importer: Any = portable.import_path
            ) -> tuple[dict[str, bytes], list[str]]:
        monkeypatch.setenv("GIT_MEMEX_HOME", str(home))
        report = importer(homes.workspace(), archive)
        assert len(report.imported) == 8 and not report.rejected, report.rejected
        files = {p.name: p.read_bytes() for p in (home / "personal").glob("*.md")}
        assert not any(token.encode() in data for data in files.values())
        return files, report.notices

    scans: list[int] = []
    real = redact.find_secrets
    monkeypatch.setattr(redact, "find_secrets", lambda text: scans.append(1) or real(text))
    one_pass = run(tmp_path / "one")
    assert len(scans) == 3 + 5  # once each: a leaking one is masked without a scan first
    files, notices = one_pass
    # title, body and alias: the fields masked and said; another key and a comment:
    # masked in the stored text only
    assert sum("masked 1 secret" in n for n in notices) == 3, notices
    assert all(b"ghp_xxxx" in data for name, data in files.items()
               if b"leak" in data or b"token is" in data)


def _personal_archive(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    from tests.test_portable import entry, make_text

    texts = [make_text(f"batch note {n}") for n in range(count)]
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join([json.dumps({"format": "git-memex-export", "version": 1}),
                                  *(entry(t, f"{i}.md") for i, t in texts)]) + "\n")
    return archive, [i for i, _ in texts]


def _left_over(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".memex-tmp")]


def test_a_batch_that_cannot_be_flushed_leaves_nothing_half_written(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flush of the second of three batches fails mid-import: its files are refused
    (no temp file, no target), the batches before and after it are written whole."""
    from memex.storage import store
    from memex.workflows import portable

    archive, ids = _personal_archive(tmp_path, 5)
    home = tmp_path / "home"
    monkeypatch.setenv("GIT_MEMEX_HOME", str(home))
    monkeypatch.setattr(portable, "IMPORT_BATCH", 2)
    calls: list[int] = []
    real = store.flush_files

    def flush(files: list[str], folders: Any) -> None:
        calls.append(len(files))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(files, folders)

    monkeypatch.setattr(store, "flush_files", flush)
    report = portable.import_path(homes.workspace(), archive)
    assert calls == [2, 2, 1]
    assert [i for i, _ in report.imported] == ids[:2] + ids[4:]
    assert [w for w, _ in report.rejected] and all(
        "No space left on device" in why for _, why in report.rejected)
    assert len(report.rejected) == 2
    on_disk = sorted(p.stem for p in (home / "personal").glob("*.md"))
    assert on_disk == sorted(ids[:2] + ids[4:])
    assert not _left_over(tmp_path) and not _left_over(repo)
    for path in (home / "personal").glob("*.md"):
        assert path.read_text(encoding="utf-8").startswith("---\n")


@pytest.mark.parametrize("fails", [False, True])
def test_where_there_is_no_syncfs_each_file_is_fsynced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fails: bool) -> None:
    """The fallback flush (no syncfs: not Linux) fsyncs every staged file; an fsync
    that fails refuses the whole batch and leaves no temp file or target."""
    from memex.storage import store

    monkeypatch.setattr(store, "_SYNCFS", [None])
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(fd)
        if fails and len(synced) == 3:
            raise OSError(5, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    folder = tmp_path / "mem"
    files = [(folder / f"{n}.md", f"text {n}\n") for n in range(6)]
    failed = store.write_new_files(files)
    assert len(synced) == 6 or fails
    if fails:
        assert sorted(p for p, _ in failed) == sorted(p for p, _ in files)
        assert not list(folder.iterdir())
    else:
        assert not failed
        assert sorted(p.read_text() for p in folder.iterdir()) == [t for _, t in files]


def test_the_fallback_fsyncs_a_descriptor_open_for_writing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows' fsync (FlushFileBuffers) refuses a read-only descriptor: the fallback
    flush, the one Windows takes, opens each file for writing."""
    fcntl = pytest.importorskip("fcntl")
    from memex.storage import store

    monkeypatch.setattr(store, "_SYNCFS", [None])
    modes: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        modes.append(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    assert not store.write_new_files([(tmp_path / "m" / "a.md", "text\n")])
    assert modes and os.O_RDONLY not in modes


def test_syncfs_is_what_flushes_on_linux_and_its_failure_refuses_the_batch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memex.storage import store

    if store._syncfs() is None:
        pytest.skip("no syncfs here (not Linux)")
    calls: list[int] = []
    monkeypatch.setattr(store, "_SYNCFS", [lambda fd: calls.append(fd) or 0])
    folder = tmp_path / "mem"
    assert not store.write_new_files([(folder / "a.md", "a\n"), (folder / "b.md", "b\n")])
    assert len(calls) == 1  # one file system, one flush
    monkeypatch.setattr(store, "_SYNCFS", [lambda fd: -1])
    failed = store.write_new_files([(folder / "c.md", "c\n")])
    assert [p.name for p, _ in failed] == ["c.md"]
    assert sorted(p.name for p in folder.iterdir()) == ["a.md", "b.md"]


def test_staged_temp_files_are_named_as_mkstemp_names_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk write names its temp files ".<name>.<pid>.<random>.memex-tmp" without
    mkstemp: clean_stale_temps reads the pid from them (a dead writer's are removed, a
    live one's kept); a name already taken falls back to atomic.create_temp's drawn
    name; every file gets the mode a single write gives it (0666 less the umask)."""
    from memex.storage import store

    folder = tmp_path / "mem"
    seen: list[str] = []
    real_replace = os.replace

    def replace(src: str, dst: Any) -> None:
        seen.append(os.path.basename(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    taken: list[str] = []
    real_create = store._create_temp

    def create(folder_: str, stem: str) -> tuple[int, str]:
        if not taken:  # the first name is taken: create_temp names that one
            taken.append(stem)
            open(os.path.join(folder_, stem + store.TEMP_SUFFIX), "w").close()
        return real_create(folder_, stem)

    monkeypatch.setattr(store, "_create_temp", create)
    files = [(folder / f"{n}.md", f"text {n}\n") for n in range(3)]
    assert not store.write_new_files(files)
    assert [p.read_text() for p, _ in files] == [t for _, t in files]
    umask = store._umask()
    assert {p.stat().st_mode & 0o777 for p, _ in files} == {0o666 & ~umask}
    pid = str(os.getpid())
    for name in seen:
        assert name.startswith(".") and name.endswith(store.TEMP_SUFFIX)
        parts = name[: -len(store.TEMP_SUFFIX)].rsplit(".", 2)
        assert parts[0].endswith(".md") and parts[1] == pid and parts[2], name
    assert len(set(seen)) == 3 and taken and f"{taken[0]}{store.TEMP_SUFFIX}" not in seen
    # a killed writer's leftover (a pid that is gone) is removed; a live writer's kept
    temps = Path(store.temp_dir(folder))
    os.unlink(temps / f"{taken[0]}{store.TEMP_SUFFIX}")
    dead = temps / seen[0].replace(f".{pid}.", ".999999999.")
    live = temps / seen[1]
    dead.write_text("x")
    live.write_text("x")
    store.clean_stale_temps(temps)
    assert not dead.exists() and live.exists()
