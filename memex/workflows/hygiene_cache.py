"""The memories a hygiene report looks at, with a cache of its pairwise results.

`health` over 10,000 files spends most of its time comparing pairs (near-duplicates,
contradictions). The memories come from the refreshed index (which parses only files
that changed); the pairs depend only on the files, so they are kept in
`<index dir>/hygiene-cache.json` with each file's content hash: when no file changed
the pairs are reused as they are, and when a few changed only the pairs involving
those are redone. The cache is disposable like the index: delete it and the next
report rebuilds it; a cache that cannot be read or written is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.storage import store
from memex.storage.homes import Workspace
from memex.workflows import word_cache

CACHE_NAME = "hygiene-cache.json"
VERSION = 3  # 3: near-duplicates by hygiene.is_candidate (a version-2 result may hold more)


@dataclass
class HygieneCache:
    """The health passes' results kept for one state of the memories."""

    items: list[store.Loaded]
    quarantined: list[store.Quarantined]
    fingerprint: str
    pairs: dict[str, Any]  # name -> cached result for this fingerprint
    _path: Path
    _files: dict[str, Any]
    dirty: bool = False
    touched: set[str] = field(default_factory=set)  # ids changed, added or gone since
    hashes: list[str] = field(default_factory=list)  # items[n]'s file content hash
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


def clear_side_caches(index_dir: Path) -> None:
    """Empty every cache kept beside the index that holds what memories said (the paired
    results here, each memory's word set in word_cache): after `forget --hard` and
    `reindex --full` no trace of a deleted memory is left in them. The SQLite one is
    cut back in place, never deleted (another process may hold it open)."""
    from memex.index import build

    with contextlib.suppress(OSError):
        (index_dir / CACHE_NAME).unlink(missing_ok=True)
    with contextlib.suppress(OSError):  # even when the file above could not be removed
        build.cut_back(index_dir / word_cache.NAME)


def _read_cache(path: Path) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(loaded, dict) and loaded.get("version") == VERSION:
            return loaded
    return {}


def load(ws: Workspace) -> HygieneCache:
    """Every readable memory file visible here (a duplicated id once per file, each
    with its own file's statuses), from the refreshed index; unreadable files
    quarantined."""
    from memex.index import bodies, build

    path = ws.index_dir / CACHE_NAME
    old = _read_cache(path)
    old_files: dict[str, Any] = old["files"] if isinstance(old.get("files"), dict) else {}
    with build.open_index(ws) as index:
        rows = index.conn.execute(
            "SELECT m.path, m.home, f.hash, m.id, m.doc, m.zbody FROM memories m "
            "JOIN files f ON f.path = m.path ORDER BY m.home_order, m.path").fetchall()
        bad = list(index.report.quarantined)
    files: dict[str, Any] = {}
    items: list[store.Loaded] = []
    hashes: list[str] = []
    touched: set[str] = set()
    digest = hashlib.sha256()
    homes = {home.kind: home for home in store.homes(ws)}
    folders: dict[str, Path] = {}  # one Path per folder: a child of it is cheaper to make
    for file, kind, content_hash, memory_id, doc, body in rows:
        record = [kind, content_hash, memory_id]
        files[file] = record
        digest.update(f"{file}\0{kind}\0{content_hash}\n".encode())
        before = old_files.get(file)
        if before != record:
            touched.add(memory_id)
            touched.update(_old_id(before))
        folder, name = os.path.split(file)
        parent = folders.get(folder)
        if parent is None:
            parent = folders[folder] = Path(folder)
        memory = build.stored_memory(json.loads(doc), bodies.body_text(body))
        items.append(store.Loaded(memory, parent / name,
                                  homes.get(kind) or store.Home(kind, parent)))
        hashes.append(content_hash)
    for file in old_files.keys() - files.keys():
        touched.update(_old_id(old_files[file]))
    fingerprint = digest.hexdigest()
    pairs = old.get("pairs") if old.get("fingerprint") == fingerprint else None
    previous: dict[str, Any] = old["pairs"] if isinstance(old.get("pairs"), dict) else {}
    return HygieneCache(items, bad, fingerprint, pairs if isinstance(pairs, dict) else {}, path,
                    files, dirty=files != old_files, touched=touched, hashes=hashes,
                    _previous=previous)


def _old_id(entry: Any) -> set[str]:
    if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], str):
        return {entry[2]}
    return set()
