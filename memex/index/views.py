"""Memories as reads see them, straight from the refreshed index (no file parsing).

`list`, `context`, capture's duplicate check and the like need every eligible
memory; parsing 10,000 files per command would cost seconds, the index already
holds each memory's front matter and body as they were when last indexed.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from memex.core import model
from memex.index import build
from memex.storage import store
from memex.storage.homes import Workspace

_KNOWN = {f.name for f in dataclasses.fields(model.Memory)} - {"extra", "body"}


def stored_memory(data: dict[str, Any], body: str) -> model.Memory:
    """A Memory from the index's copy of its front matter (validated when indexed)."""
    if _KNOWN.issuperset(data):  # the usual case: no keys this version does not know
        return model.Memory(body=body, extra={}, **data)
    known = {k: v for k, v in data.items() if k in _KNOWN}
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    return model.Memory(body=body, extra=extra, **known)


def as_read(doc: str, body: str, eff_status: str | None, eff_retired: str | None,
             eff_by: str | None) -> model.Memory:
    """An index row's memory with what chain completion changed applied (eff_*)."""
    memory = stored_memory(json.loads(doc), body)
    if eff_status is not None:
        memory.status = eff_status
    if eff_retired is not None:
        memory.retired_at = eff_retired
    if eff_by is not None:
        memory.superseded_by = eff_by
    return memory


@dataclasses.dataclass
class Snapshot:
    items: list[store.Loaded]
    quarantined: list[store.Quarantined]
    warnings: list[str]


def snapshot(ws: Workspace) -> Snapshot:
    """Every indexed memory (first copy of a duplicated id), chains completed."""
    with build.open_index(ws) as index:
        rows = index.conn.execute(
            "SELECT path, home, doc, body, eff_status, eff_retired_at, eff_superseded_by "
            "FROM memories WHERE shadowed = 0").fetchall()
        warnings = list(index.report.warnings) + build.read_warnings(index.conn)
        quarantined = list(index.report.quarantined)
    items: list[store.Loaded] = []
    for path, kind, *stored in rows:
        memory = as_read(*stored)
        file_path = Path(path)
        items.append(store.Loaded(memory, file_path, store.Home(kind, file_path.parent)))
    return Snapshot(items, quarantined, warnings)


def completed(ws: Workspace, memory_id: str) -> tuple[model.Memory | None, list[str]]:
    """The indexed memory `memory_id` as reads see it (chain completed), and the chain
    warnings about it; (None, []) when the index does not hold it."""
    with build.open_index(ws) as index:
        row = index.conn.execute(
            "SELECT doc, body, eff_status, eff_retired_at, eff_superseded_by FROM memories "
            "WHERE id = ? AND shadowed = 0", (memory_id,)).fetchone()
        warnings = [m for (m,) in index.conn.execute(
            "SELECT message FROM chain_warnings WHERE id = ? ORDER BY rowid", (memory_id,))]
    return (None, []) if row is None else (as_read(*row), warnings)


def successor_ids(ws: Workspace, memory_id: str) -> list[str]:
    """Ids of the indexed memories whose `supersedes` names `memory_id`."""
    with build.open_index(ws) as index:
        return [i for (i,) in index.conn.execute(
            "SELECT id FROM memories WHERE supersedes = ? AND shadowed = 0 AND id != ?",
            (memory_id, memory_id))]
