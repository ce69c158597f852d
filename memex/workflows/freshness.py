"""How fresh this clone's view of the remote is (DESIGN.md "Last pull"): the one rule
that `list`, `context`, `sync-status`, `pr-status` and `health` all use.

The last fetch is the newest mtime of FETCH_HEAD (the worktree's git dir or the common
dir). It is stale when it is older than `memex.staleAfter` (default 7 days). A clone that
never fetched is not stale: there is no time to compare, and the clone itself just brought
everything; the commands that show the state say "never fetched".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memex.core import clock
from memex.storage import settings
from memex.storage.homes import Workspace

SETTING = "memex.staleAfter"
DEFAULT_STALE_AFTER: timedelta = settings.default(SETTING)
parse_span = settings.parse_span  # `7d`, `12h`, `2w`, `30m`, `3 days`, a bare number of days


def stale_after(ws: Workspace) -> timedelta:
    """memex.staleAfter (`7d`, `36h`, `2w`, `1.5d`, a bare number of days); a value that
    does not parse is an error naming it (memex.storage.settings)."""
    span: timedelta = ws.typed(SETTING)
    return span


def last_fetch(ws: Workspace) -> datetime | None:
    """When this checkout last fetched: the newest FETCH_HEAD mtime (None: never, or no git)."""
    if ws.repo is None:
        return None
    times = []
    for folder in {ws.repo.git_dir, ws.repo.common_dir}:
        try:
            times.append((folder / "FETCH_HEAD").stat().st_mtime)
        except OSError:
            continue
    return datetime.fromtimestamp(int(max(times)), UTC) if times else None


@dataclass(frozen=True)
class Freshness:
    """When the clone last fetched, and whether that is too long ago."""

    last_fetch: datetime | None  # None: never fetched (or not in git)
    stale_after: timedelta
    stale: bool


def freshness(ws: Workspace, now: datetime | None = None) -> Freshness:
    """The last fetch and whether it is stale, by the rule in this module's docstring."""
    last = last_fetch(ws)
    limit = stale_after(ws)
    moment = now if now is not None else clock.now()
    return Freshness(last, limit, last is not None and moment - last > limit)


def staleness(ws: Workspace) -> tuple[datetime | None, bool]:
    """(last fetch time or None, whether it is stale)."""
    state = freshness(ws)
    return state.last_fetch, state.stale


def describe_age(span: timedelta) -> str:
    seconds = max(int(span.total_seconds()), 0)
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return "moments"


def stale_warning(ws: Workspace) -> str | None:
    """One line for commands that read, when the last pull is old; else None."""
    state = freshness(ws)
    if not state.stale or state.last_fetch is None:
        return None
    age = describe_age(clock.now() - state.last_fetch)
    return (f"last pull was {age} ago ({SETTING} is {describe_age(state.stale_after)}); "
            "teammates' memories may be missing: git memex pull")
