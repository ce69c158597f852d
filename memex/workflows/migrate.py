"""Protocol v1 files to v2, with the originals kept as a backup until confirmed.

v1 -> v2 (seed 001, section 19): scope `user` -> `personal`; epoch times (ms, or s)
-> RFC 3339; `priority: 1-10` -> importance low (1-3) / normal (4-7) / high (8-10);
`type: instruction` -> a content type + `role: instruction` (instruction_state
draft: it must be approved again before it guides an agent). Until migrated, a v1
file is quarantined with the reason "v1 file: run git memex migrate", never dropped.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memex.core import clock, frontmatter, model, redact
from memex.core.errors import InvalidMemory, MemexError
from memex.core.ulid import is_ulid, new_ulid
from memex.storage import store, writelock
from memex.storage.homes import Workspace

BACKUP_DIR = ".migrate-backup"


def _time(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.strip().isdigit()):
        number = float(value)
        seconds = number / 1000 if number > 1e11 else number
        return clock.format_time(datetime.fromtimestamp(seconds, tz=UTC))
    return value


def importance_of(priority: Any) -> str | None:
    try:
        value = int(str(priority))
    except ValueError:
        return None
    if value <= 3:
        return "low"
    return "normal" if value <= 7 else "high"


def _approve_hint(data: dict[str, Any]) -> str:
    """The command that approves a migrated instruction, and what must come first."""
    command = f"git memex promote {str(data.get('id') or 'ID')[:10]} --instruction"
    state = data.get("review_state")
    if data.get("scope") == "personal" or state in ("approved", "published"):
        return command
    if state in (None, "draft"):
        return f"submit it and have it approved, then {command}"
    return f"once it is approved, {command}"


def convert(data: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """v2 front matter for v1 front matter (pure); notes say what needed judgement."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[str(key)] = value
    out["schema_version"] = model.SCHEMA_VERSION
    if out.get("scope") == "user":
        out["scope"] = "personal"
    for key in model.TIME_FIELDS:
        if key in out and out[key] is not None:
            out[key] = _time(out[key])
    if "priority" in out:
        priority = out.pop("priority")
        importance = importance_of(priority)
        if importance is None:
            notes.append(f"priority {redact.quoted(priority)} is not 1-10: importance normal")
            importance = "normal"
        out.setdefault("importance", importance)
    if out.get("type") == "instruction":
        kind = out.get("kind") if out.get("kind") in model.TYPES else "knowledge"
        out["type"] = kind
        out["role"] = "instruction"
        out["instruction_state"] = "draft"
        notes.append("type instruction became role instruction, instruction_state draft: "
                     "approve it again (" + _approve_hint(out) + ")")
    if not out.get("updated_at") and out.get("created_at"):
        out["updated_at"] = out["created_at"]
    revision = out.get("revision")
    try:
        out["revision"] = int(str(revision)) + 1 if revision is not None else 1
    except ValueError:
        out["revision"] = 1
    return out


@dataclass
class Step:
    """One file to migrate."""

    home: store.Home
    path: Path
    new_path: Path | None  # None: cannot be migrated (see error)
    new_text: str | None
    notes: list[str]
    error: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"path": str(self.path), "new_path": str(self.new_path) if self.new_path
                else None, "home": self.home.kind, "notes": self.notes, "error": self.error}


def _all_homes(ws: Workspace) -> list[store.Home]:
    """Every home on this machine and in this repo: other projects' outboxes too."""
    found = list(store.homes(ws))
    outboxes = ws.home / "outbox"
    known = {h.path for h in found}
    if outboxes.is_dir():
        for folder in sorted(outboxes.iterdir()):
            if folder.is_dir() and folder not in known:
                found.append(store.Home("outbox", folder))
    return found


def plan(ws: Workspace) -> list[Step]:
    steps: list[Step] = []
    for home in _all_homes(ws):
        for path in store.memory_files(home.path):
            try:
                parsed = frontmatter.parse(store.read_text(path))
            except (InvalidMemory, OSError):
                continue  # unreadable for other reasons: not ours to touch
            if model.legacy_version(parsed.data) is None:
                continue
            notes: list[str] = []
            data = convert(parsed.data, notes)
            memory_id = str(data.get("id") or path.stem)
            if not is_ulid(memory_id):
                data["v1_id"] = memory_id
                memory_id = new_ulid()
                notes.append(f"id {redact.quoted(data['v1_id'])} is not a ULID: new id {memory_id}")
            data["id"] = memory_id
            try:
                memory = model.from_front_matter(data, parsed.body)
                if memory.scope != home.scope:
                    raise InvalidMemory(f"scope {memory.scope!r} does not belong in the "
                                        f"{home.kind} folder")
            except InvalidMemory as exc:
                steps.append(Step(home, path, None, None, notes, error=str(exc)))
                continue
            steps.append(Step(home, path, home.path / f"{memory.id}.md",
                              frontmatter.emit(memory), notes))
    return steps


def backup_root(ws: Workspace) -> Path:
    return ws.home / BACKUP_DIR


@writelock.holds_write_lock
def apply(ws: Workspace, steps: list[Step]) -> Path:
    """Back up every original, then write the v2 files; returns the backup folder."""
    stamp = clock.now().strftime("%Y%m%dT%H%M%SZ")
    folder = backup_root(ws) / stamp
    n = 1
    while folder.exists():
        n += 1
        folder = backup_root(ws) / f"{stamp}-{n}"
    manifest: list[dict[str, str]] = []
    for index, step in enumerate(s for s in steps if s.new_text is not None):
        assert step.new_path is not None and step.new_text is not None
        saved = folder / f"{index:05d}-{step.home.kind}-{step.path.name}"
        saved.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(step.path, saved)
            store.write_memory_text(step.new_path, step.new_text)
            if step.new_path != step.path:
                step.path.unlink()
        except OSError as exc:
            raise MemexError(f"cannot migrate {step.path}: {exc.strerror or exc}; "
                             f"originals so far are in {folder}") from None
        manifest.append({"original": str(step.path), "backup": str(saved),
                         "migrated": str(step.new_path)})
    if manifest:
        store.write_atomic(folder / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return folder


def backups(ws: Workspace) -> list[Path]:
    root = backup_root(ws)
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def drop_backups(ws: Workspace) -> list[Path]:
    dropped = backups(ws)
    for folder in dropped:
        shutil.rmtree(folder)
    return dropped
