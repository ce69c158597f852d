"""How many memories hold each query term (term_stats' document frequency) is the
index's, not the query's: a long-lived process asks SQLite for a term's count once per
index generation (fts5vocab reads the term's whole doclist for it), and asks again
after the index is written."""

from __future__ import annotations

from pathlib import Path

from memex.index import build, termcounts
from memex.search import engine
from memex.storage import homes
from tests.helpers import memfiles, spies


def test_term_counts_are_asked_once_per_index_generation(repo: Path) -> None:
    folder = memfiles.personal()
    for i in range(12):
        memfiles.put(folder, f"Deploy note {i}: every deploy goes through staging",
                     scope="personal")
    ws = homes.workspace(repo)
    query = "deploy staging deplo"  # "deplo": no such term, tried as a prefix
    first = engine.search(ws, engine.SearchRequest(query=query, limit=5))
    assert len(first.hits) == 5
    assert spies.vocabulary_reads(ws, query) == []  # main asked its 3 stems and 1 prefix again
    # Another query asks only its new term.
    assert len(spies.vocabulary_reads(ws, "staging goes")) == 1
    # A write: the held stems' counts are the index's kept ones, kept up by the write
    # (index/termcounts.py); "deplo", which no memory holds, is not kept (no doclist to
    # read: fts_terms answers it) and is asked again, as its prefix. They are the new ones.
    memfiles.put(folder, "Deploy once more", scope="personal")
    asked = spies.vocabulary_reads(ws, query)
    assert len(asked) == 2 and all("'deplo'" in s for s in asked), asked
    with build.open_index(ws) as index:
        counted = {t.word: (t.df, t.prefix) for t in engine.term_stats(index.conn, query.split())}
    assert counted == {"deploy": (13, False), "staging": (12, False), "deplo": (13, True)}


def test_an_index_without_a_generation_keeps_no_counts(repo: Path) -> None:
    memfiles.put(memfiles.personal(), "Deploy note", scope="personal")
    ws = homes.workspace(repo)
    with build.open_index(ws) as index:
        index.conn.execute("DELETE FROM meta WHERE key = 'generation'")
        assert engine._counts(index.conn) is None
        assert [t.df for t in engine.term_stats(index.conn, ["deploy"])] == [1]


def test_stems_tokenize_every_word_in_one_transaction(repo: Path) -> None:
    """Each word's stems as one word at a time gives them, asked of the temporary table
    in one transaction that leaves it as it was: each word a commit of its own wrote
    the table a segment per word (~0.17 ms each: 35 ms for a capture's 200 words).
    Seen failing before: 17 rows in its data table after 50 words, 12 before. Within
    a transaction of the caller's, that transaction stays open with its writes."""
    memfiles.put(memfiles.personal(), "Deploy note", scope="personal")
    ws = homes.workspace(repo)
    words = ["deploying", "snake_case", "依赖管理", "---", "Café", "runs"] + [
        f"word{n}" for n in range(44)]
    with build.open_index(ws) as index:
        conn = index.conn
        termcounts._STEMS.clear()
        one_by_one = {w: engine.stems(conn, [w])[w] for w in words[:6]}
        termcounts._STEMS.clear()
        before = conn.execute("SELECT count(*) FROM temp.query_tok_data").fetchone()[0]
        found = engine.stems(conn, words)
        after = conn.execute("SELECT count(*) FROM temp.query_tok_data").fetchone()[0]
        assert after == before, (before, after)
        assert {w: found[w] for w in words[:6]} == one_by_one
        assert one_by_one["runs"] == ("run",) and one_by_one["---"] == ()
        assert len(one_by_one["snake_case"]) == 2 and found["word7"] == ("word7",)
        assert conn.execute("SELECT count(*) FROM temp.query_tok").fetchone()[0] == 0
        termcounts._STEMS.clear()
        conn.execute("BEGIN")
        conn.execute("CREATE TEMP TABLE mine (x)")
        conn.execute("INSERT INTO mine VALUES (1)")
        assert engine.stems(conn, ["runs"]) == {"runs": ("run",)}
        assert conn.in_transaction
        assert conn.execute("SELECT x FROM mine").fetchall() == [(1,)]
        conn.execute("ROLLBACK")
