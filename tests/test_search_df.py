"""How many memories hold each query term (term_stats' document frequency) is the
index's, not the query's: a long-lived process asks SQLite for a term's count once per
index generation (fts5vocab reads the term's whole doclist for it), and asks again
after the index is written."""

from __future__ import annotations

from pathlib import Path

from memex.index import build
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
