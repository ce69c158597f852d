"""Build memory files (any state a test needs) and git histories for tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memex.core import frontmatter, model
from memex.core.ulid import new_ulid
from memex.storage import homes
from tests.helpers import git_proc

T0 = "2026-01-01T00:00:00Z"
AT = "2026-11-01T06:00:00Z"


def memory(**fields: Any) -> model.Memory:
    values: dict[str, Any] = {
        "id": new_ulid(), "scope": "project", "title": "Use pnpm",
        "body": "We use pnpm.\n\nLine two.\n\nLine three.", "review_state": "proposed",
        "created_at": T0, "updated_at": T0, "tags": ["tooling"],
        "repo_id": "git-origin-sha256:abc",
    }
    values.update(fields)
    return model.Memory(**values)


def write(repo: Path, mem: model.Memory, folder: str = ".memex") -> Path:
    path = repo / folder / f"{mem.id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(frontmatter.emit(mem), encoding="utf-8")
    return path


def read(path: Path) -> model.Memory:
    return frontmatter.load(path.read_text(encoding="utf-8"))[0]




def commit_all(repo: Path, message: str) -> None:
    git_proc("add", "-A", cwd=repo)
    git_proc("commit", "-q", "-m", message, cwd=repo)


def edit(path: Path, **changes: Any) -> model.Memory:
    """Change fields of the memory at path, bumping revision (as a write would)."""
    mem = read(path)
    new = mem.copy(**changes)
    if "revision" not in changes:
        new.revision = mem.revision + 1
    path.write_text(frontmatter.emit(new), encoding="utf-8")
    return new


def put(folder: Path, body: str, scope: str = "project", **fields: Any) -> str:
    """Write a canonical memory file straight into `folder`; returns its id."""
    fields.setdefault("title", body.splitlines()[0][:80])
    fields.setdefault("created_at", AT)
    fields.setdefault("updated_at", fields["created_at"])
    if scope == "project":
        fields.setdefault("review_state", "draft")
        fields.setdefault("repo_id", "git-origin-sha256:test")
    mem = model.Memory(id=fields.pop("id", None) or new_ulid(), scope=scope, body=body,
                       **fields)
    model.validate(mem)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{mem.id}.md").write_text(frontmatter.emit(mem), encoding="utf-8")
    return mem.id


def outbox(cwd: Path | None = None) -> Path:
    return homes.workspace(cwd).outbox_dir


def personal() -> Path:
    return homes.workspace().personal_dir
