"""Reading memories as people see them: chains completed, retired ones hidden by default.

Reads never write files; what a read had to repair is returned as warnings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memex.core import clock, model, policy
from memex.storage import store
from memex.storage.homes import Workspace


@dataclass
class View:
    """What a read returns: eligible memories, plus what it skipped or repaired."""

    items: list[store.Loaded] = field(default_factory=list)
    quarantined: list[store.Quarantined] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_view(ws: Workspace, scopes: Iterable[str] | None = None, include_all: bool = False,
              as_of: str | None = None) -> View:
    """Eligible memories of the scopes asked, newest first, from the refreshed index."""
    from memex.index import views

    snap = views.snapshot(ws)
    wanted = set(scopes) if scopes is not None else None
    view = View(quarantined=snap.quarantined, warnings=snap.warnings)
    at = clock.now_str()
    for item in snap.items:
        if wanted is not None and item.memory.scope not in wanted:
            continue
        if not include_all and not policy.eligible(item.memory, at, as_of):
            continue
        view.items.append(item)
    view.items.sort(key=lambda x: (x.memory.updated_at, x.id), reverse=True)
    return view


def show(ws: Workspace, id_or_prefix: str) -> tuple[store.Loaded, list[str]]:
    """One memory by id (its file, read now), with its chain completed as reads see it."""
    from memex.index import views

    item = store.find(ws, id_or_prefix)
    indexed, warnings = views.completed(ws, item.id)
    others = [h for h in store.copies(ws, item.id) if h.path != item.path.parent]
    if others:
        warnings = [w for w in warnings if "exists in more than one place" not in w]
        where = ", ".join(f"{h.kind} ({h.path / item.path.name})" for h in others)
        warnings.insert(0, f"{item.id} also exists in {where}; showing the {item.home.kind} "
                           f"copy {item.path}, since {store.READING_ORDER}")
    memory = item.memory
    if indexed is not None and (indexed.status, indexed.superseded_by) != (
            memory.status, memory.superseded_by):
        memory = memory.copy(status=indexed.status, superseded_by=indexed.superseded_by,
                             retired_at=indexed.retired_at)
    return store.Loaded(memory, item.path, item.home, item.parsed), warnings


def as_json(item: store.Loaded) -> dict[str, object]:
    data: dict[str, object] = dict(item.memory.front_matter())
    for name in model.FIELD_ORDER:
        data.setdefault(name, getattr(item.memory, name, None))
    data["body"] = item.memory.body
    data["path"] = str(item.path)
    data["home"] = item.home.kind
    data["summary"] = item.memory.summary
    return data
