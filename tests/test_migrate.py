"""migrate: v1 files reported until migrated, converted with backups kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memex.adapters.cli import _common
from memex.core import frontmatter
from memex.core.ulid import new_ulid
from memex.workflows import migrate
from tests.helpers import invoke, invoke_json

V1 = """---
id: {id}
scope: user
type: instruction
priority: 9
title: Commit style
tags: [git]
created_at: 1727352000000
updated_at: 1727438400000
custom: kept
---

Write commit subjects in the imperative.
"""


def write_v1(folder: Path, memory_id: str | None = None, **replace: str) -> Path:
    mid = memory_id or new_ulid()
    text = V1.format(id=mid)
    for old, new in replace.items():
        text = text.replace(old, new)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{mid}.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_convert_rules() -> None:
    notes: list[str] = []
    out = migrate.convert({"scope": "user", "priority": 2, "type": "instruction",
                           "created_at": 1727352000000, "updated_at": "1727352000"}, notes)
    assert out["scope"] == "personal" and out["importance"] == "low"
    assert out["role"] == "instruction" and out["type"] == "knowledge"
    assert out["instruction_state"] == "draft" and "priority" not in out
    assert out["created_at"] == "2024-09-26T12:00:00Z"
    assert out["updated_at"] == "2024-09-26T12:00:00Z"  # seconds work too
    assert out["schema_version"] == 2 and notes
    for priority, importance in ((1, "low"), (3, "low"), (4, "normal"), (7, "normal"),
                                 (8, "high"), (10, "high")):
        assert migrate.importance_of(priority) == importance


def test_v1_reported_not_dropped_then_migrated(repo: Path, memex_home: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_v1(memex_home / "personal")
    original = path.read_bytes()
    listing = invoke("list")
    assert "v1 file: run git memex migrate" in listing.stderr
    dry = invoke("migrate", "--dry-run")
    assert dry.exit_code == 0 and str(path) in dry.stdout
    assert path.read_bytes() == original
    no_tty = invoke("migrate")
    assert "pass --yes" in no_tty.stderr and path.read_bytes() == original
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T10:00:00Z")
    out = invoke_json("migrate", "--yes")
    assert out["migrated"] is True
    memory, _ = frontmatter.load(path.read_text())
    assert memory.scope == "personal" and memory.importance == "high"
    assert memory.role == "instruction" and memory.instruction_state == "draft"
    assert memory.created_at == "2024-09-26T12:00:00Z" and memory.extra == {"custom": "kept"}
    assert memory.body == "Write commit subjects in the imperative."
    backup = Path(out["backup"])
    assert backup.parent == memex_home / ".migrate-backup"
    manifest = json.loads((backup / "manifest.json").read_text())
    assert Path(manifest[0]["backup"]).read_bytes() == original
    assert [m["id"] for m in invoke_json("list")] == [memory.id]
    assert invoke_json("migrate")["files"] == []  # nothing left to do
    assert invoke("migrate", "--drop-backups").exit_code == 2  # needs --yes without a tty
    assert backup.exists()
    assert invoke("migrate", "--drop-backups", "--yes").exit_code == 0
    assert not backup.exists()


def test_migrates_repo_and_other_outboxes_and_renames_bad_ids(
        repo: Path, memex_home: Path) -> None:
    shared = write_v1(repo / ".memex", **{"scope: user": "scope: project"})
    elsewhere = write_v1(memex_home / "outbox" / "git-origin-sha256-other",
                         **{"scope: user": "scope: project"})
    odd = memex_home / "personal" / "note-1.md"
    odd.parent.mkdir(parents=True)
    odd.write_text(V1.format(id="note-1"))
    out = invoke_json("migrate", "--yes")
    assert len(out["files"]) == 3 and all(f["error"] is None for f in out["files"])
    assert frontmatter.load(shared.read_text())[0].scope == "project"
    assert frontmatter.load(elsewhere.read_text())[0].schema_version == 2
    assert not odd.exists()
    renamed = [Path(f["new_path"]) for f in out["files"] if f["path"] == str(odd)][0]
    assert frontmatter.load(renamed.read_text())[0].extra["v1_id"] == "note-1"


def test_unconvertible_file_left_alone(repo: Path, memex_home: Path) -> None:
    path = write_v1(memex_home / "personal", **{"type: instruction": "type: banana"})
    before = path.read_bytes()
    result = invoke("migrate", "--yes")
    assert "cannot migrate" in result.stderr and "banana" in result.stderr
    assert path.read_bytes() == before


def test_prompt_on_a_terminal(repo: Path, memex_home: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_v1(memex_home / "personal")
    before = path.read_bytes()
    monkeypatch.setattr(_common, "stdin_is_tty", lambda: True)
    assert invoke("migrate", input="n\n").exit_code == 0
    assert path.read_bytes() == before
    assert invoke("migrate", input="y\n").exit_code == 0
    assert b"schema_version: 2" in path.read_bytes()


def test_migrated_instruction_hint_names_the_memory() -> None:
    mid = new_ulid()
    personal: list[str] = []
    migrate.convert({"id": mid, "scope": "user", "type": "instruction"}, personal)
    assert f"git memex promote {mid[:10]} --instruction" in " ".join(personal)
    draft: list[str] = []
    migrate.convert({"id": mid, "scope": "project", "type": "instruction"}, draft)
    assert "submit it and have it approved, then git memex promote" in " ".join(draft)
