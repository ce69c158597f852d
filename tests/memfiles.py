"""Write memory files directly (any state a test needs), canonical unless asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memex import frontmatter, homes, model
from memex.ulid import new_ulid

AT = "2026-11-01T06:00:00Z"


def put(folder: Path, body: str, scope: str = "project", **fields: Any) -> str:
    fields.setdefault("title", body.splitlines()[0][:80])
    fields.setdefault("created_at", AT)
    fields.setdefault("updated_at", fields["created_at"])
    if scope == "project":
        fields.setdefault("review_state", "draft")
        fields.setdefault("repo_id", "git-origin-sha256:test")
    memory = model.Memory(id=fields.pop("id", None) or new_ulid(), scope=scope, body=body,
                          **fields)
    model.validate(memory)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
    return memory.id


def outbox(cwd: Path | None = None) -> Path:
    return homes.workspace(cwd).outbox_dir


def personal() -> Path:
    return homes.workspace().personal_dir
