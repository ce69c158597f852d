"""Time in the one form every file uses: RFC 3339, UTC, to the second."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from memex.core import lazyre

_RFC3339 = lazyre.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_RELATIVE = lazyre.compile(r"^(\d+)\s*(s|m|h|d|w)(?:\s+ago)?$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def now() -> datetime:
    """The current time; `GIT_MEMEX_NOW` pins it (tests, reproducible demos)."""
    pinned = os.environ.get("GIT_MEMEX_NOW")
    if pinned:
        return parse_time(pinned)
    return datetime.now(UTC).replace(microsecond=0)


def now_str() -> str:
    return format_time(now())


def format_time(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_canonical_time(value: str) -> bool:
    return bool(_RFC3339.match(value))


def _canonical(value: str) -> datetime | None:
    """The canonical form files hold (UTC, whole seconds), checked; None otherwise
    (e.g. month 13: the caller's general path gives the readable message)."""
    if len(value) == 20 and _RFC3339.match(value):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def parse_time(value: str) -> datetime:
    """Accept RFC 3339 / ISO 8601 (any offset), a date, or `3d` / `2w ago`; UTC out.

    Raises ValueError with a readable message on anything else.
    """
    canonical = _canonical(value)
    if canonical is not None:
        return canonical
    text = value.strip()
    rel = _RELATIVE.match(text)
    if rel:
        seconds = int(rel.group(1)) * _UNITS[rel.group(2)]
        pinned = os.environ.get("GIT_MEMEX_NOW", "").strip()
        # "2w" means two weeks before GIT_MEMEX_NOW when that pins the clock
        base = now() if pinned and not _RELATIVE.match(pinned) else datetime.now(UTC)
        return base.replace(microsecond=0) - timedelta(seconds=seconds)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"not a time: {_quoted(value)} (use RFC 3339 like 2026-12-01T06:00:00Z, a date, "
            "or 3d)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(microsecond=0)


def normalise_time(value: object) -> str:
    """A time from a file (string or YAML timestamp) as the canonical string."""
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, str):
        if value[0:1] != "0" and _canonical(value) is not None:
            return value  # the canonical form files hold: checked, and already the answer
        return format_time(parse_time(value))
    raise ValueError(f"not a time: {_quoted(value)}")


def _quoted(value: object) -> str:
    """A refused value as the message quotes it, every secret in it masked (one step)."""
    from memex.core import redact  # only for a refusal: a valid time never loads it

    return redact.quoted(value)
