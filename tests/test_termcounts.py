"""The term counts the index keeps (index/termcounts.py): a search after a write reads
no doclist for a term it counted before, and every kept count is the one fts5vocab
gives (fts_terms), whatever writes, changes, moves and deletes came between."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex.index import build, termcounts
from memex.search import engine
from memex.storage import homes
from tests.helpers import memfiles, spies

_WORDS = ["deploy", "deploying", "staging", "café", "cafe", "tabs", "spaces", "retries",
          "prefer", "the", "api", "x", "naïve", "pnpm", "npm", "日本語"]


def _kept(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT term, doc FROM term_counts").fetchall())


def _truth(conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
    out = {t: 0 for t in terms}
    out.update((t, n) for t, n in conn.execute(
        f"SELECT term, doc FROM fts_terms WHERE term IN ({', '.join('?' * len(terms))})",
        terms))
    return out


def _search(ws: homes.Workspace, query: str) -> list[str]:
    return [h.id for h in engine.search(ws, engine.SearchRequest(query=query, limit=20)).hits]


def test_a_search_after_a_write_reads_no_doclist_for_terms_counted_before(repo: Path) -> None:
    folder = memfiles.personal()
    for i in range(6):
        memfiles.put(folder, f"Deploy note {i}: every deploy goes through staging",
                     scope="personal")
    ws = homes.workspace(repo)
    assert len(_search(ws, "deploy staging")) == 6
    gone = memfiles.put(folder, "Deploy once more, not through staging", scope="personal")
    memfiles.put(folder, "Staging only", scope="personal")
    (folder / f"{gone}.md").unlink()
    memfiles.put(folder, "deploy deploy", scope="personal")
    # on main every write made the next search read both terms' doclists again
    assert spies.vocabulary_reads(ws, "deploy staging") == []
    with build.open_index(ws) as index:
        kept = _kept(index.conn)
        assert kept == _truth(index.conn, list(kept)) == {"deploi": 7, "stage": 7}
        stats = {t.word: t.df for t in engine.term_stats(index.conn, ["deploy", "staging"])}
    assert stats == {"deploy": 7, "staging": 7}


_OP = st.one_of(
    st.tuples(st.just("put"), st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6)),
    st.tuples(st.just("edit"), st.integers(0, 9),
              st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6)),
    st.tuples(st.just("delete"), st.integers(0, 9)),
    st.tuples(st.just("search"), st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3)),
)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(_OP, min_size=1, max_size=10))
def test_kept_counts_are_fts5vocab_counts_after_any_writes(repo: Path, ops: list[tuple]) -> None:
    folder = memfiles.personal()
    for old in folder.glob("*.md") if folder.is_dir() else []:
        old.unlink()
    memfiles.put(folder, "the seed: " + " ".join(_WORDS), scope="personal")
    ws = homes.workspace(repo)
    _search(ws, " ".join(_WORDS))  # every word counted, and kept (the seed holds each)
    for op in ops:
        files = sorted(folder.glob("*.md"))
        if op[0] == "put":
            memfiles.put(folder, " ".join(op[1]), scope="personal")
        elif op[0] == "edit" and files:
            memfiles.edit(files[op[1] % len(files)], body=" ".join(op[2]))
        elif op[0] == "delete" and files:
            files[op[1] % len(files)].unlink()
        elif op[0] == "search":
            _search(ws, " ".join(op[1]))
        with build.open_index(ws) as index:
            kept = _kept(index.conn)
            assert kept, op  # kept up, not dropped, by these small refreshes
            assert kept == _truth(index.conn, list(kept)), op


def test_counts_of_an_index_another_writer_changed_are_not_read(repo: Path) -> None:
    """A writer that does not keep the counts up (a version without them) moves the
    generation past the one they hold at: they are not read, and the next refresh
    that writes drops them."""
    folder = memfiles.personal()
    memfiles.put(folder, "pnpm only", scope="personal")
    ws = homes.workspace(repo)
    assert len(_search(ws, "pnpm")) == 1
    with build.open_index(ws) as index:
        conn = index.conn
        assert _kept(conn) == {"pnpm": 1}
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO fts (rowid, title, tags, body, aliases) "
                     "VALUES (999, '', '', 'pnpm again', '')")
        conn.execute("UPDATE meta SET value = 'older-writer' WHERE key = 'generation'")
        conn.execute("COMMIT")
        assert build.term_counts(conn, ["pnpm"]) == {"pnpm": 2}
        assert _kept(conn) == {"pnpm": 2}  # kept again, at the generation now
        conn.execute("UPDATE meta SET value = 'older-writer-2' WHERE key = 'generation'")
    memfiles.put(folder, "npm only", scope="personal")
    with build.open_index(ws) as index:
        assert _kept(index.conn) == {}


def test_the_query_ahead_keeps_nothing_and_still_answers(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """build.peek's connection (the search's query ahead, beside a refresh) keeps no
    count it reads (its write would race the refresh beside it), and its hits are still
    the search's when the index did not change (a read-only connection would fail on
    the temporary table that stems words: the query would then run twice)."""
    memfiles.put(memfiles.personal(), "tabs and spaces", scope="personal")
    ws = homes.workspace(repo)
    with build.open_index(ws):
        pass
    conn = build.peek(ws)
    assert conn is not None
    try:
        assert build.term_counts(conn, ["tab"]) == {"tab": 1}
    finally:
        conn.close()
    with build.open_index(ws) as index:
        exists = index.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'term_counts'")
        assert exists.fetchone() is None
    runs: list[bool] = []
    real = engine.run_query

    def counted(conn: sqlite3.Connection, *args: object, **kw: object) -> object:
        runs.append(isinstance(conn, build.Peeked))
        return real(conn, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "run_query", counted)
    monkeypatch.setattr(termcounts, "_STEMS", {})  # words not stemmed yet by this process
    monkeypatch.setattr(engine, "AHEAD_THREAD", False)
    req = engine.SearchRequest("spaces", limit=20, ahead=True, record_access=False)
    assert len(engine.search(ws, req).hits) == 1
    assert runs == [True]  # the query ahead's hits, taken


def test_a_large_refresh_or_a_rebuild_drops_the_counts(repo: Path, monkeypatch) -> None:
    folder = memfiles.personal()
    memfiles.put(folder, "retries three", scope="personal")
    ws = homes.workspace(repo)
    _search(ws, "retries")
    monkeypatch.setattr(termcounts, "TALLY_MAX", 2)
    for i in range(3):
        memfiles.put(folder, f"retries {i}", scope="personal")
    with build.open_index(ws) as index:
        assert _kept(index.conn) == {}
    _search(ws, "retries")
    with build.open_index(ws) as index:
        assert _kept(index.conn) == {"retri": 4}
    with build.open_index(ws, full=True) as index:
        assert _kept(index.conn) == {}
    assert len(_search(ws, "retries")) == 4


def test_the_kept_term_counts_do_not_grow_with_every_word_ever_searched(repo: Path) -> None:
    """A count of 0 (a term no memory holds) was kept: every typo, pasted identifier or
    one-off query of an MCP server added a row for good (seen failing: 300 rows of 0).
    Only held terms are kept; an unknown word still counts 0, and once a memory holds
    it, it counts that memory."""
    folder = memfiles.personal()
    for i in range(3):
        memfiles.put(folder, f"Deploy note {i}: every deploy goes through staging",
                     scope="personal")
    ws = homes.workspace(repo)
    for i in range(300):  # typos, pasted identifiers, an agent's many one-off queries
        assert _search(ws, f"zq{i}xv staging")
    memfiles.put(folder, "One more note about staging, and zq7xv", scope="personal")
    assert len(_search(ws, "staging")) == 4  # a refresh that writes
    with build.open_index(ws) as index:
        kept = _kept(index.conn)
        assert kept == {"stage": 4}
        assert build.term_counts(index.conn, ["zq7xv", "zq8xv"]) == {"zq7xv": 1, "zq8xv": 0}
        assert _kept(index.conn) == {"stage": 4, "zq7xv": 1}
