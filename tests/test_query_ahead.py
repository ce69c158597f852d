"""A CLI search runs its query beside the refresh (engine._Ahead), on the index as it
was: its hits are kept only when the refresh left the index at the generation the
query read. Here the query ahead runs first, at once (engine.AHEAD_THREAD off), and
the disk changes after it read, before the refresh's walk: the order a slow walk
gives. Whatever changed, the search answers as a search without the query ahead."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memex.index import build, schema
from memex.search import engine
from memex.storage import homes
from tests.helpers import memfiles
from tests.helpers.spies import Call, record_calls
from tests.test_written_index import MEANWHILE, matches_disk, stocked  # noqa: F401

WORDS = ("oscar", "bravo")


def search(ws: homes.Workspace, word: str, ahead: bool) -> list[str]:
    req = engine.SearchRequest(word, limit=50, ahead=ahead, record_access=False)
    return [h.id for h in engine.search(ws, req).hits]


@pytest.fixture
def in_order(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The query ahead runs before the refresh; what it returned is listed."""
    monkeypatch.setattr(engine, "AHEAD_THREAD", False)
    returned: list[object] = []
    real = engine._query_ahead

    def recorded(*args: object) -> object:
        got = real(*args)  # type: ignore[arg-type]
        returned.append(got)
        return got

    monkeypatch.setattr(engine, "_query_ahead", recorded)
    return returned


@pytest.fixture
def queries(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    """One entry for each query the search engine runs from here on."""
    return record_calls(monkeypatch, engine, "run_query")


@pytest.mark.parametrize("change", list(MEANWHILE))
@pytest.mark.parametrize("word", WORDS)
def test_a_change_after_the_query_ahead_read_is_in_the_hits(
        repo: Path, stocked: dict[str, str], in_order: list[object],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, change: str, word: str) -> None:
    ws = homes.workspace()
    real = engine._query_ahead

    def then_change(*args: object) -> object:
        got = real(*args)  # type: ignore[arg-type]
        MEANWHILE[change](repo, stocked)
        return got

    monkeypatch.setattr(engine, "_query_ahead", then_change)
    hits = search(ws, word, ahead=True)
    assert in_order and in_order[0] is not None  # it read the index as it was
    monkeypatch.setattr(engine, "_query_ahead", real)
    build.forget_connections()
    assert hits == search(ws, word, ahead=False)
    matches_disk(ws)


def test_the_hits_found_ahead_are_taken_when_nothing_changed(
        repo: Path, stocked: dict[str, str], in_order: list[object],  # noqa: F811
        queries: list[Call]) -> None:
    ws = homes.workspace()
    expected = search(ws, "bravo", ahead=False)
    build.forget_connections()
    queries.clear()  # only the search ahead's own queries count
    assert search(ws, "bravo", ahead=True) == expected
    assert len(queries) == 1  # the query ahead's hits, not a second query
    assert in_order and in_order[0] is not None


def test_a_refresh_that_writes_runs_the_query_again(
        repo: Path, stocked: dict[str, str], in_order: list[object],  # noqa: F811
        queries: list[Call]) -> None:
    ws = homes.workspace()
    added = memfiles.put(repo / ".memex", "a hand-written memory about bravo and oscar")
    assert added in search(ws, "oscar", ahead=True)
    assert len(queries) == 2


def test_no_query_ahead_without_an_index_of_this_version(
        repo: Path, in_order: list[object]) -> None:
    ws = homes.workspace()
    mid = memfiles.put(repo / ".memex", "the first memory, about bravo")
    assert search(ws, "bravo", ahead=True) == [mid]  # no index yet: made by the refresh
    assert in_order == [None]
    build.forget_connections()
    conn = sqlite3.connect(build.db_path(ws))
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert build.peek(ws) is None
    assert search(ws, "bravo", ahead=True) == [mid]  # rebuilt by the refresh
    assert in_order == [None, None]
    assert schema.version(build.open_index(ws, refresh=False).conn) == schema.SCHEMA_VERSION


def test_peek_never_makes_an_index(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index deleted between peek's look and its connect is not made again, empty."""
    ws = homes.workspace()
    memfiles.put(repo / ".memex", "the first memory, about bravo")
    search(ws, "bravo", ahead=False)
    build.forget_connections()
    path = build.db_path(ws)
    monkeypatch.setattr(type(path), "is_file", lambda self: True)
    path.unlink()
    assert build.peek(ws) is None
    assert not path.exists()
