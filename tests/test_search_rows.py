"""A search reads eligibility and boosts from its candidate rows: no Memory is made per
candidate (a common word matches thousands of memories, and the MCP server searches on
every call). Which memories are eligible is tested in test_search.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memex.core import model
from memex.search import engine
from memex.storage import homes
from tests.helpers import memfiles
from tests.helpers.spies import record_calls


def test_a_search_makes_no_memory_per_candidate_row(repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    folder = memfiles.personal()
    for i in range(40):
        memfiles.put(folder, f"Deploy note {i}: every deploy goes through staging",
                     scope="personal")
    memfiles.put(folder, "A deploy that expired", scope="personal",
                 expires_at="2026-01-02T00:00:00Z")
    ws = homes.workspace(repo)
    request = engine.SearchRequest(query="deploy", limit=5)
    first = engine.search(ws, request)  # builds the index
    made = record_calls(monkeypatch, model.Memory, "__init__")
    again = engine.search(ws, request)
    assert len(again.hits) == 5
    assert [h.id for h in again.hits] == [h.id for h in first.hits]
    assert made == []  # main made two per candidate (eligibility, then the boosts)


def _bm25_statements(ws: homes.Workspace, query: str, limit: int = 10) -> list[str]:
    """The statements (nested ones left out) a search of QUERY runs bm25() in."""
    from memex.index import build

    conn = build._OPEN[str(build.db_path(ws))].conn
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        engine.search(ws, engine.SearchRequest(query=query, limit=limit,
                                               record_access=False))
    finally:
        conn.set_trace_callback(None)
    return [s for s in seen if "bm25(" in s and not s.startswith("--")]


def test_a_lane_with_fewer_matches_than_wanted_ranks_them_once(repo: Path) -> None:
    """bm25() scores every match of a lane: a lane holding fewer matches than the rows
    wanted (most questions' all-term lanes, a rare word) is ranked once; main ranked
    it a second time to count its matches."""
    folder = memfiles.personal()
    for i in range(12):
        memfiles.put(folder, f"Kiwi note {i}: the kiwi crate pins serde", scope="personal")
    ws = homes.workspace(repo)
    engine.search(ws, engine.SearchRequest(query="kiwi"))  # builds the index
    assert len(_bm25_statements(ws, "kiwi")) == 1


def test_candidates_past_the_first_rows_the_filters_drop(repo: Path) -> None:
    """The best-ranked matches are joined with their memories a slice at a time: when
    the filters drop the best ones, the next slices fill the page, best first."""
    folder = memfiles.personal()
    for _ in range(45):  # rank above every active one, all archived
        memfiles.put(folder, "Kiwi old\n" + "kiwi " * 40 + "pad " * 5, scope="personal",
                     status="archived", retired_at="2026-10-01T00:00:00Z")
    active = [memfiles.put(folder, f"Kiwi {i}\n" + "kiwi " * (i + 1) + "pad " * (44 - i),
                           scope="personal") for i in range(40)]
    ws = homes.workspace(repo)
    hits = engine.search(ws, engine.SearchRequest(query="kiwi", limit=12)).hits
    assert [h.id for h in hits] == active[::-1][:12]
    assert len(_bm25_statements(ws, "kiwi", limit=12)) == 1


def test_a_later_lane_counts_the_earlier_lanes_rows_without_joining_them(
        repo: Path) -> None:
    """Rows an earlier lane found (EXCLUDE) pass the filters: a later lane counts them
    toward the rows wanted, as if joined, and joins only the others."""
    from memex.core import clock
    from memex.index import build

    folder = memfiles.personal()
    for i in range(40):
        memfiles.put(folder, f"Kiwi {i}\n" + "kiwi " * (i % 9 + 1) + "pad " * (i % 5),
                     scope="personal", **({"status": "archived",
                                           "retired_at": "2026-10-01T00:00:00Z"}
                                          if i % 4 == 0 else {}))
    ws = homes.workspace(repo)
    engine.search(ws, engine.SearchRequest(query="kiwi"))  # builds the index
    with build.open_index(ws) as index:
        conn = index.conn
        where, args = engine._filters(engine.SearchRequest(query="kiwi"), clock.now_str(),
                                      None)
        best = [r[0] for r in engine._candidates(conn, '"kiwi"', where, args, 20, set())]
        assert len(best) == 20
        for earlier in (set(best[:7]), set(best[3:20:2]), set(best)):
            seen: list[str] = []
            conn.set_trace_callback(seen.append)
            try:
                rows = engine._candidates(conn, '"kiwi"', where, args, 20 - len(earlier),
                                          earlier)
            finally:
                conn.set_trace_callback(None)
            assert [r[0] for r in rows] == [r for r in best if r not in earlier]
            joined = {int(n) for s in seen for listed in re.findall(r"m\.rowid IN \(([^)]*)\)", s)
                      for n in listed.split(",")}
            assert joined and not joined & earlier or earlier == set(best)


def test_the_rows_kept_are_joined_in_bounded_slices(repo: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A page larger than a statement may list (SQLite's parameter limit) is joined
    in several statements, the same rows in the same order."""
    folder = memfiles.personal()
    for i in range(30):
        memfiles.put(folder, f"Kiwi {i}\n" + "kiwi " * (i + 1) + "pad " * (30 - i),
                     scope="personal")
    ws = homes.workspace(repo)
    request = engine.SearchRequest(query="kiwi", limit=25, record_access=False)
    whole = [h.id for h in engine.search(ws, request).hits]
    monkeypatch.setattr(engine, "JOIN_SLICE_MAX", 4)
    from memex.index import build

    conn = build._OPEN[str(build.db_path(ws))].conn
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        assert [h.id for h in engine.search(ws, request).hits] == whole
    finally:
        conn.set_trace_callback(None)
    assert len(whole) == 25
    slices = [listed.split(",") for s in seen if not s.startswith("--")
              for listed in re.findall(r"m\.rowid IN \(([^)]*)\)", s)]
    assert sum(map(len, slices)) >= 25  # every hit's row was joined ...
    assert max(map(len, slices)) <= 4  # ... at most JOIN_SLICE_MAX a statement


@pytest.mark.parametrize("scopes", [("personal",), ("project", "personal"), None])
def test_the_ranked_rows_are_looked_up_by_rowid(repo: Path,
                                                scopes: tuple[str, ...] | None) -> None:
    """The rows a lane ranked best are joined with their memories by rowid: no
    statement walks the memories of the scopes asked (with the scope filter SQLite
    took the listing index on scope and probed every memory of the scopes for the
    rowids: ~3 ms of a 13 ms search at 10,000 memories, ten times that at 100,000)."""
    import sqlite3

    from memex.index import build

    folder = memfiles.personal()
    for i in range(60):
        memfiles.put(folder, f"Deploy note {i}: every deploy goes through staging",
                     scope="personal")
    ws = homes.workspace(repo)
    request = engine.SearchRequest(query="deploy", limit=5, scopes=scopes,
                                   record_access=False)
    engine.search(ws, request)  # builds the index
    conn = build._OPEN[str(build.db_path(ws))].conn
    conn.execute("ANALYZE")  # what a grown index's planner knows of it
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        assert len(engine.search(ws, request).hits) == 5
    finally:
        conn.set_trace_callback(None)
    joins = [s for s in seen if "LEFT JOIN access" in s and not s.startswith("--")]
    assert joins
    plain = sqlite3.connect(build.db_path(ws))
    for sql in joins:
        steps = [row[3] for row in plain.execute("EXPLAIN QUERY PLAN " + sql)]
        assert [s for s in steps if " m " in f"{s} "] == [
            "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)"], steps
