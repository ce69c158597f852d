"""Reading memories as people see them: chains completed, retired ones hidden by default.

Reads never write files; what a read had to repair is returned as warnings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from memex.core import clock, model, policy
from memex.core.errors import MemexError
from memex.storage import store, watch
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


def each(ws: Workspace, scopes: Iterable[str] | None = None, include_all: bool = False,
         as_of: str | None = None) -> tuple[Iterator[store.Loaded], View]:
    """`load_view`'s memories, in its order, read from the refreshed index as iterated
    (a page at a time): for a caller that streams them. The View holds what the
    refresh quarantined and warned about; its items stay empty."""
    from memex.index import views

    quarantined, warnings = views.opened(ws)
    at = clock.now_str()
    wanted = sorted(set(scopes)) if scopes is not None else None
    rows = views.newest(ws, wanted, live_only=not include_all and as_of is None)
    items = (x for x in rows if include_all or policy.eligible(x.memory, at, as_of))
    return items, View(quarantined=quarantined, warnings=warnings)


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


def watch_changes(ws: Workspace) -> bool:
    """For a process that lives for hours (the MCP server): refresh the index from the
    kernel's change notices (storage.watch) instead of a stat of every memory file per
    read. False where no notices can be had: reads then walk as before."""
    from memex.index import build
    from memex.storage import journal

    try:
        folders = [home.path for home in store.homes(ws)]
    except MemexError:
        return False
    notices = watch.start(folders, store.is_memory_name)
    if notices is None:
        return False
    pending = [True]  # the first refresh walks

    def quiet() -> bool:
        # A submit journal changes which repo files reads leave out without touching
        # them: walk while one is pending and once after it is gone.
        was = pending[0]
        pending[0] = ws.repo is not None and journal.pending(ws.repo)
        return notices.quiet() and not was and not pending[0]

    build.watch_with(ws, quiet)
    return True
