"""Count what the code under test calls: a wrapper that calls through and records."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest


class Call(NamedTuple):
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def record_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Call]:
    """From now on (until the test ends) each call of `owner.name` runs the real one
    and is appended, with its arguments, to the list returned."""
    calls: list[Call] = []
    real = getattr(owner, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(Call(args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls


def vocabulary_reads(ws: Any, query: str) -> list[str]:
    """The statements a search of QUERY in workspace WS reads fts_terms (the index's
    vocabulary) with."""
    from memex.index import build
    from memex.search import engine

    conn = build._OPEN[str(build.db_path(ws))].conn
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        engine.search(ws, engine.SearchRequest(query=query, limit=5))
    finally:
        conn.set_trace_callback(None)
    return [s for s in seen if "fts_terms" in s]
