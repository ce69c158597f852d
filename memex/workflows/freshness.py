"""How fresh this clone's view of the remote is (DESIGN.md "Last pull"): the one rule
that `list`, `context`, `sync-status`, `pr-status` and `health` all use.

The last fetch is the newest mtime of FETCH_HEAD (the worktree's git dir or the common
dir). It is stale when it is older than `memex.staleAfter` (default 7 days). A clone that
never fetched is not stale: there is no time to compare, and the clone itself just brought
everything; the commands that show the state say "never fetched".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memex.core import clock
from memex.storage.homes import Workspace

DEFAULT_STALE_AFTER = timedelta(days=7)
SETTING = "memex.staleAfter"
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w|sec|min|hours?|days?|weeks?)?\s*$",
                   re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_span(text: str) -> timedelta | None:
    """`7d`, `12h`, `2w`, `30m`, `3 days`, or a bare number of days; None if unreadable."""
    match = _SPAN.match(text)
    if not match:
        return None
    unit = (match.group(2) or "d").lower()
    return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[unit[0]])


def stale_after(ws: Workspace) -> timedelta:
    """memex.staleAfter (`7d`, `36h`, `2w`, `1.5d`, a bare number of days); a value that
    does not parse is named on stderr once and the default used."""
    value = ws.setting(SETTING)
    span = parse_span(value) if value else None
    if span is None and value:
        ws.warn_setting(SETTING, value, "a duration (like 7d, 36h, 2w)", "7d")
    return span if span is not None else DEFAULT_STALE_AFTER


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
