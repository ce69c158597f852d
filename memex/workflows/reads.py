"""Reading memories as people see them: chains completed, retired ones hidden by default.

Reads never write files; what a read had to repair is returned as warnings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memex.core import clock, policy
from memex.core.errors import MemexError
from memex.storage import store, usage, watch
from memex.storage.homes import Workspace

if TYPE_CHECKING:
    import sqlite3

    from memex.search import engine


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


PAGE = 1024  # rows each_listed reads from the index at a time


def each_listed(ws: Workspace, scopes: Iterable[str] | None = None,
                include_all: bool = False, as_of: str | None = None,
                limit: int | None = None, log_in: Workspace | None = None
                ) -> tuple[Iterator[bytes], View]:
    """`load_view`'s memories in its order (at most `limit`), each as the UTF-8 of the
    JSON element `list --json` writes for it (`as_json`'s mapping, as jsonout writes
    it), straight from the refreshed index's rows as iterated (a page at a time, no
    Memory or mapping per row: index.listing). The View holds what the refresh
    quarantined and warned about; its items stay empty. The ids handed out are logged
    as listed (in `log_in`'s home when `ws` is an as-of view of it) once the caller is
    done with the iterator."""
    from memex.index import listing, views

    quarantined, warnings = views.opened(ws)
    pages = _newest_pages(ws, scopes, include_all, as_of, listing.COLUMNS)
    return _listed(log_in or ws, pages, limit), View(
        quarantined=quarantined, warnings=warnings)


def _newest_pages(ws: Workspace, scopes: Iterable[str] | None, include_all: bool,
                  as_of: str | None, columns: str, at: str | None = None,
                  snapshot: sqlite3.Connection | None = None
                  ) -> Iterator[list[tuple[Any, ...]]]:
    """The index's rows (COLUMNS, ending with listing.ELIGIBLE_COLUMNS' fields) of
    `load_view`'s memories in its order (eligible AT, by default now), a page at a time
    (index not refreshed here; read on SNAPSHOT when given: views.read_snapshot)."""
    from memex.index import views

    wanted = sorted(set(scopes)) if scopes is not None else None
    pages = views.newest_pages(ws, wanted, live_only=not include_all and as_of is None,
                               page=PAGE, columns=columns, snapshot=snapshot)
    return pages if include_all else _eligible_pages(pages, at or clock.now_str(), as_of)


class Briefs:
    """What `list`'s table shows of `load_view`'s memories, in its order, read from the
    refreshed index's narrow rows (listing.BRIEF_COLUMNS) afresh on each pass, a page
    at a time: no Memory, and nothing kept per memory, whatever the store's size (a
    table sized to its widest row reads them twice). Each row is (id, review_state,
    status, type, scope, updated_at, title, summary): the summary only where the
    title is empty ("" elsewhere). Every pass sees the memories eligible at the moment
    the Briefs were made, in the index as it was then: the passes read one snapshot
    (views.read_snapshot: one read transaction, held until `close`), so a write another
    process indexes meanwhile is in none of them or all (a table measured on one pass
    and printed on the next stays whole)."""

    def __init__(self, ws: Workspace, scopes: Iterable[str] | None, include_all: bool,
                 as_of: str | None, log_in: Workspace | None) -> None:
        from memex.index import views

        self.ws, self.include_all, self.as_of = ws, include_all, as_of
        self.scopes = None if scopes is None else list(scopes)
        self.log_in = log_in or ws
        self.at = clock.now_str()
        self.snapshot = views.read_snapshot(ws)

    def close(self) -> None:
        """End the read transaction (the index's writers' checkpoints go on past it)."""
        if self.snapshot is not None:
            self.snapshot.close()
            self.snapshot = None

    def __enter__(self) -> Briefs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def pages(self, log: bool = False) -> Iterator[list[tuple[str, ...]]]:
        """The rows, a page at a time; LOG: their ids are logged as listed once the
        pass is done (one pass of a listing logs)."""
        from memex.index import listing

        brief = listing.brief
        shown = usage.Handed() if log else None
        try:
            for rows in _newest_pages(self.ws, self.scopes, self.include_all, self.as_of,
                                      listing.BRIEF_COLUMNS, self.at, self.snapshot):
                page = list(map(brief, rows))
                del rows
                if shown is not None:
                    for row in page:
                        shown.add(row[0])
                yield page
                del page  # one page held at a time
        finally:
            if shown is not None:
                usage.record_in(self.log_in, usage.Op.LIST, shown)


def briefs(ws: Workspace, scopes: Iterable[str] | None = None, include_all: bool = False,
           as_of: str | None = None, log_in: Workspace | None = None) -> tuple[Briefs, View]:
    """Refresh the index; `Briefs` of `load_view`'s memories, and a View of what the
    refresh quarantined and warned about (its items stay empty). The ids are logged as
    listed (in `log_in`'s home when given) by the pass that asks to."""
    from memex.index import views

    quarantined, warnings = views.opened(ws)
    return Briefs(ws, scopes, include_all, as_of, log_in), View(
        quarantined=quarantined, warnings=warnings)


def newest_page(ws: Workspace, limit: int, scopes: Iterable[str] | None = None,
                include_all: bool = False, as_of: str | None = None, offset: int = 0,
                mtype: str | None = None, log_in: Workspace | None = None,
                ) -> tuple[list[store.Loaded], int, View]:
    """A page (LIMIT from OFFSET) of `load_view`'s memories (of type MTYPE when given),
    without a memory made per row not shown: the page, how many it holds,
    and a View of what the refresh quarantined and warned about (its items stay empty).
    The rest are counted from narrow index rows (id, type and the eligibility fields);
    only the shown rows are read whole. The ids shown are logged as listed (in
    `log_in`'s home when given)."""
    from memex.index import views

    quarantined, warnings = views.opened(ws)
    keys: list[tuple[int, str]] = []
    total = _counted(ws, scopes, include_all, as_of, keys, offset + limit, mtype)
    del keys[:offset]
    shown = views.loaded_keys(ws, keys)
    usage.record_in(log_in or ws, usage.Op.LIST, [i.id for i in shown])
    return shown, total, View(quarantined=quarantined, warnings=warnings)


def count(ws: Workspace, scopes: Iterable[str] | None = None, include_all: bool = False,
          as_of: str | None = None) -> int:
    """How many memories `load_view` holds (the index as it is: not refreshed here),
    counted from narrow index rows, no memory made."""
    return _counted(ws, scopes, include_all, as_of, [], 0, None)


def _counted(ws: Workspace, scopes: Iterable[str] | None, include_all: bool,
             as_of: str | None, keys: list[tuple[int, str]], limit: int,
             mtype: str | None) -> int:
    """How many memories `load_view` holds (of type MTYPE when given); the (rowid, id)
    keys of its first LIMIT appended to KEYS."""
    from memex.index import listing

    total = 0
    for rows in _newest_pages(ws, scopes, include_all, as_of,
                              f"rowid, id, type, {listing.ELIGIBLE_COLUMNS}"):
        if mtype is not None:
            rows = [row for row in rows if row[2] == mtype]
        if len(keys) < limit:
            keys.extend((rowid, memory_id) for rowid, memory_id, *_ in
                        rows[:limit - len(keys)])
        total += len(rows)
    return total


def _eligible_pages(pages: Iterator[list[tuple[Any, ...]]], at: str, as_of: str | None
                    ) -> Iterator[list[tuple[Any, ...]]]:
    from memex.index import listing

    eligible, fields = policy.eligible_fields, listing.ELIGIBILITY
    for rows in pages:
        kept = []
        for row in rows:
            status, review, created, retired, start, until, expires = row[fields]
            if eligible(status, review, created, retired, start, until, expires, at, as_of):
                kept.append(row)
        del rows
        yield kept
        del kept  # one page held at a time: none while the next one is read


def _listed(ws: Workspace, pages: Iterator[list[tuple[Any, ...]]], limit: int | None
            ) -> Iterator[bytes]:
    from memex.index import listing

    element, at = listing.element, listing.ID
    shown = usage.Handed()  # no str kept per memory: the line's JSON text
    add = shown.add
    try:
        for rows in pages:
            if limit is not None:
                rows = rows[:limit]
                limit -= len(rows)
            for row in rows:
                add(row[at])
                written = element(row)
                yield written if written is not None else _completed(row)
            del rows  # one page held at a time: none while the next one is read
            if limit == 0:
                return
    finally:
        usage.record_in(ws, usage.Op.LIST, shown)


def _completed(row: tuple[Any, ...]) -> bytes:
    """The element of a row of index.listing.COLUMNS that chain completion changed."""
    from memex.index import listing, views

    path, home, _, zbody, eff_status, eff_retired, eff_by, doc = row[:8]
    return listing.whole(views.as_read(doc.decode("utf-8"), zbody, eff_status, eff_retired,
                                       eff_by),
                         path, home)


def search(ws: Workspace, req: engine.SearchRequest,
           log_in: Workspace | None = None) -> engine.SearchResult:
    """A search a person or an agent asked for: its hits are logged as read (in
    `log_in`'s home when `ws` is an as-of view of it). Internal searches (capture's
    near-duplicates, review) call the engine directly and are not reads."""
    from memex.search import engine

    result = engine.search(ws, req)
    usage.record_in(log_in or ws, usage.Op.SEARCH, [h.id for h in result.hits])
    return result


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
    usage.record_in(ws, usage.Op.READ, [item.id])
    return store.Loaded(memory, item.path, item.home, item.parsed), warnings


def as_json(item: store.Loaded) -> dict[str, object]:
    """A memory as `list --json` and the MCP tools show it: every field, then its
    body, path, home and summary."""
    from memex.index import listing

    return listing.shown_fields(item.memory, item.path, item.home.kind)


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
