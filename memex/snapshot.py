"""A stat-keyed cache of parsed memories and pairwise results, for hygiene reports.

`health` over 10,000 files spends most of its time parsing front matter and
comparing pairs (near-duplicates, contradictions). Both depend only on the files,
so they are kept in `<index dir>/hygiene-cache.json`: a file whose path, mtime and
size are unchanged is not parsed again; when no file changed the pairs are reused
as they are, and when a few changed only the pairs involving those are redone.
The cache is disposable like the index: delete it and the next report rebuilds
it; a cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex import model, store
from memex.errors import InvalidMemory
from memex.homes import Workspace

CACHE_NAME = "hygiene-cache.json"
VERSION = 1


@dataclass
class Snapshot:
    items: list[store.Loaded]
    quarantined: list[store.Quarantined]
    fingerprint: str
    pairs: dict[str, Any]  # name -> cached result for this fingerprint
    _path: Path
    _files: dict[str, Any]
    dirty: bool = False
    touched: set[str] = field(default_factory=set)  # ids re-read, added or gone since
    _previous: dict[str, Any] = field(default_factory=dict)

    def cached(self, name: str) -> Any:
        """The result for exactly these files, or None."""
        return self.pairs.get(name)

    def previous(self, name: str, limit: int = 200) -> Any:
        """The result of the last run, to update for `touched` ids (None: recompute)."""
        if len(self.touched) > limit:
            return None
        return self._previous.get(name)

    def remember(self, name: str, value: Any) -> None:
        self.pairs[name] = value
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        data = {"version": VERSION, "files": self._files, "fingerprint": self.fingerprint,
                "pairs": self.pairs}
        with contextlib.suppress(OSError):
            store.write_atomic(self._path, json.dumps(data, ensure_ascii=False))


def _record(memory: model.Memory) -> dict[str, Any]:
    known = {name: getattr(memory, name) for name in model.FIELD_ORDER}
    return {"fields": known, "extra": memory.extra, "body": memory.body}


def _memory(record: dict[str, Any]) -> model.Memory:
    return model.Memory(**record["fields"], extra=record["extra"], body=record["body"])


def load(ws: Workspace) -> Snapshot:
    """Every memory visible here, parsed or from the cache; unreadable files quarantined."""
    path = ws.index_dir / CACHE_NAME
    old: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict) and loaded.get("version") == VERSION:
            old = loaded
    old_files: dict[str, Any] = old.get("files", {}) if isinstance(old.get("files"), dict) \
        else {}
    files: dict[str, Any] = {}
    items: list[store.Loaded] = []
    bad: list[store.Quarantined] = []
    digest = hashlib.sha256()
    changed = False
    touched: set[str] = set()
    for home in store.homes(ws):
        for file in store.memory_files(home.path):
            key = str(file)
            try:
                st = os.stat(file)
            except OSError:
                continue
            stamp = [st.st_mtime_ns, st.st_size, home.kind]
            digest.update(f"{key}\0{stamp}\n".encode())
            entry = old_files.get(key)
            record = None
            if isinstance(entry, dict) and entry.get("stamp") == stamp:
                record = entry
            if record is None:
                changed = True
                touched.update(_old_id(entry))
                try:
                    loaded_item = store.read(file, home)
                    record = {"stamp": stamp, "memory": _record(loaded_item.memory)}
                except (InvalidMemory, OSError) as exc:
                    record = {"stamp": stamp, "reason": str(exc) or type(exc).__name__}
            files[key] = record
            if "reason" in record:
                bad.append(store.Quarantined(file, str(record["reason"])))
                continue
            try:
                memory = _memory(record["memory"])
            except (TypeError, KeyError):
                loaded_item = store.read(file, home)
                files[key] = {"stamp": stamp, "memory": _record(loaded_item.memory)}
                memory = loaded_item.memory
                changed = True
            items.append(store.Loaded(memory, file, home))
            if record is not entry:
                touched.add(memory.id)
    fingerprint = digest.hexdigest()
    pairs = old.get("pairs") if old.get("fingerprint") == fingerprint else None
    for key in set(old_files) - set(files):
        touched.update(_old_id(old_files[key]))
    changed = changed or set(files) != set(old_files)
    previous: dict[str, Any] = old["pairs"] if isinstance(old.get("pairs"), dict) else {}
    return Snapshot(items, bad, fingerprint, pairs if isinstance(pairs, dict) else {}, path,
                    files, dirty=changed, touched=touched, _previous=previous)


def _old_id(entry: Any) -> set[str]:
    try:
        return {str(entry["memory"]["fields"]["id"])}
    except (KeyError, TypeError):
        return set()
