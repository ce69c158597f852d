"""Build memory files (any state a test needs) and git histories for tests."""

from __future__ import annotations

import json
import random
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


def hand_written(text: str, rng: random.Random, new_id: str | None = None) -> str:
    """The same memory as a person or another tool might write it: keys in another
    order, strings quoted, times quoted, lists in block style or quoted flow style,
    comments. Reads as the same memory (under NEW_ID when given); not git-memex's
    canonical form. bench/reindex.py times a store of them."""
    parsed = frontmatter.parse(text)
    items = list(({**parsed.data, "id": new_id} if new_id else parsed.data).items())
    rng.shuffle(items)
    lines = ["# written by hand"]
    for key, value in items:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if rng.random() < 0.5:
                lines.append(f"{key}:")
                lines.extend(f"  - {v}" if rng.random() < 0.5 else f"  - '{v}'"
                             for v in value)
            else:
                lines.append(f"{key}: [" + ", ".join(json.dumps(v) for v in value) + "]")
        elif isinstance(value, list):
            lines.append(f"{key}: {json.dumps(value)}")
        elif isinstance(value, bool):
            lines.append(f"{key}: {str(value).lower()}")
        elif isinstance(value, int):
            lines.append(f"{key}: {value}")
        elif isinstance(value, str):
            if key.endswith("_at"):
                lines.append(f'{key}: "{value}"  # when')
            elif rng.random() < 0.5:
                lines.append(f"{key}: {json.dumps(value, ensure_ascii=False)}")
            else:
                lines.append(f"{key}: '" + value.replace("'", "''") + "'")
        else:
            lines.append(f"{key}: {json.dumps(value)}")
    body = parsed.body
    return "---\n" + "\n".join(lines) + "\n---\n\n" + body + "\n"
