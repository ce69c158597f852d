from __future__ import annotations

import os
from pathlib import Path

import pytest

from memex.core.errors import Ambiguous, MemexError, NotFound, UsageError
from memex.storage import homes, store
from tests.helpers import invoke, invoke_json


def personal_files(memex_home: Path) -> list[Path]:
    return sorted((memex_home / "personal").glob("*.md"))


def test_atomic_write_leaves_no_temp_files(repo: Path, memex_home: Path) -> None:
    out = invoke_json("capture", "--scope", "personal", "hello world")
    files = list((memex_home / "personal").iterdir())
    assert [f.name for f in files] == [f"{out['id']}.md"]


def test_quarantine_reports_and_never_rewrites(repo: Path, memex_home: Path) -> None:
    good = invoke_json("capture", "--scope", "personal", "a good memory")
    bad_yaml = memex_home / "personal" / "01JAAAAAAAAAAAAAAAAAAAAAAA.md"
    bad_yaml.write_text("---\nid: [oops\n---\nbody\n", encoding="utf-8")
    misnamed = memex_home / "personal" / "01JBBBBBBBBBBBBBBBBBBBBBBB.md"
    misnamed.write_text(
        (memex_home / "personal" / f"{good['id']}.md").read_text(encoding="utf-8"))
    junk = memex_home / "personal" / "01JCCCCCCCCCCCCCCCCCCCCCCC.md"
    junk.write_bytes(b"\x00\xff\xfe binary")
    before = {p: p.read_bytes() for p in (bad_yaml, misnamed, junk)}
    result = invoke("list", "--json")
    assert result.exit_code == 0
    assert "skipped 3 unreadable" in result.stderr
    assert "does not match its id" in result.stderr
    assert [m["id"] for m in __import__("json").loads(result.stdout)] == [good["id"]]
    assert {p: p.read_bytes() for p in before} == before


def test_read_only_memory_dir(repo: Path, memex_home: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    out = invoke_json("capture", "--scope", "personal", "first")
    folder = memex_home / "personal"
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):  # root writes anywhere: make the folder refuse
            from memex.storage import atomic

            def refuse(*a: object, **k: object) -> None:
                raise PermissionError(13, "Permission denied")

            monkeypatch.setattr(atomic, "create_temp", refuse)
        result = invoke("update", out["id"], "--body", "second")
        assert result.exit_code == 1
        assert "permission denied" in result.stderr.lower()
    finally:
        folder.chmod(0o755)
    assert "first" in (folder / f"{out['id']}.md").read_text()


def test_write_failure_keeps_old_file(repo: Path, memex_home: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    out = invoke_json("capture", "--scope", "personal", "original text")
    path = memex_home / "personal" / f"{out['id']}.md"
    before = path.read_bytes()

    def boom(*a: object, **k: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", boom)
    result = invoke("update", out["id"], "--body", "changed")
    assert result.exit_code == 1 and "No space left" in result.stderr
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir()] == [path.name]


def test_prefix_resolution(repo: Path) -> None:
    ws = homes.workspace()
    a = invoke_json("capture", "--scope", "personal", "alpha")
    b = invoke_json("capture", "--scope", "personal", "beta")
    common = os.path.commonprefix([a["id"], b["id"]])
    assert store.find(ws, a["id"].lower()).id == a["id"]
    with pytest.raises(Ambiguous) as info:
        store.find(ws, common)
    assert set(info.value.matches) == {a["id"], b["id"]}
    with pytest.raises(NotFound):
        store.find(ws, "7ZZZZZZZ")


@pytest.mark.parametrize("bad", ["../../etc/passwd", "/etc/passwd", "01J/../x", "", "ILOU"])
def test_id_that_is_a_path_is_refused(repo: Path, bad: str) -> None:
    with pytest.raises(UsageError):
        store.find(homes.workspace(), bad)
    result = invoke("show", bad)
    assert result.exit_code == 2
    assert "not a memory id" in result.stderr


def test_ambiguous_prefix_cli_lists_matches(repo: Path) -> None:
    a = invoke_json("capture", "--scope", "personal", "alpha")
    b = invoke_json("capture", "--scope", "personal", "beta")
    common = os.path.commonprefix([a["id"], b["id"]])
    result = invoke("show", common)
    assert result.exit_code == 2
    assert a["id"] in result.stderr and b["id"] in result.stderr


def test_unreadable_target_is_an_error_not_a_crash(repo: Path, memex_home: Path) -> None:
    path = memex_home / "personal" / "01JAAAAAAAAAAAAAAAAAAAAAAA.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nid: [\n---\n", encoding="utf-8")
    with pytest.raises(MemexError, match="left untouched"):
        store.find(homes.workspace(), "01JAAAA")


def test_memory_ids_are_the_memory_files_stems(tmp_path: Path) -> None:
    for name in ("01JAAAAAAAAAAAAAAAAAAAAAAA.md", "a.b.md", "README.md", ".hidden.md",
                 "_draft.md", "notes.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "folder.md").mkdir()
    assert store.memory_ids(tmp_path) == {p.stem for p in store.memory_files(tmp_path)}
    assert store.memory_ids(tmp_path) == {"01JAAAAAAAAAAAAAAAAAAAAAAA", "a.b"}
    assert store.memory_ids(tmp_path / "missing") == set()
