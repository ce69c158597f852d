"""Which of a page's memories hold a query term (engine._holding, behind the coverage
re-rank and --explain's matched terms): a term few memories hold is looked up by
reading its matches once, not by a seek per memory asked about (FTS5 evaluates the
MATCH again for each rowid `rowid IN` hands it: ~0.4-1 ms for 30 rowids however rare
the term); the memories found are the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex.index import build
from memex.search import engine
from memex.storage import homes
from tests.helpers import memfiles

TEXTS = [f"Deploy note {i}: the staging server {'zebra ' if i % 5 == 0 else ''}"
         f"{'configuration ' if i % 3 == 0 else ''}checks{' smoke-test' if i == 7 else ''}"
         for i in range(20)]


def _lookups(index: build.Index, term: engine._Term, rowids: list[int]
             ) -> tuple[set[int], list[str]]:
    """_holding's answer and the statements it ran."""
    ran: list[str] = []
    index.conn.set_trace_callback(ran.append)
    try:
        found = engine._holding(index.conn, term, rowids)
    finally:
        index.conn.set_trace_callback(None)
    return found, [s for s in ran if "fts MATCH" in s]


def test_a_rare_term_is_read_once_and_the_rows_are_the_same(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = memfiles.personal()
    for text in TEXTS:
        memfiles.put(folder, text, scope="personal")
    ws = homes.workspace(repo)
    with build.open_index(ws) as index:
        by_text = {str(title).split(":")[0]: rowid for rowid, title in index.conn.execute(
            "SELECT rowid, json_extract(doc, '$.title') FROM memories")}
        assert len(by_text) == 20
        rowids = sorted(by_text.values())[::2]  # the memories asked about
        terms = engine.term_stats(index.conn, ["zebra", "staging", "zeb", "smoke-test"])
        assert [(t.df, t.prefix) for t in terms] == [(4, False), (20, False), (4, True),
                                                     (1, False)]
        truth = {word: {by_text[f"Deploy note {i}"] for i, text in enumerate(TEXTS)
                        if part in text} & set(rowids)
                 for word, part in (("zebra", "zebra"), ("staging", "staging"),
                                    ("zeb", "zebra"), ("smoke-test", "smoke-test"))}
        read: dict[str, list[str]] = {}
        for term in terms:
            found, ran = _lookups(index, term, rowids)
            assert found == truth[term.word], term
            read[term.word] = ran
        assert all(read.values())  # one statement per term
        # held by few memories: read once ("+rowid": the rowids are not handed to FTS5);
        # a prefix term's union of words is not counted: a seek per rowid, as before
        assert all("+rowid IN" in s for word in ("zebra", "staging", "smoke-test")
                   for s in read[word])
        assert all("+rowid" not in s and "rowid IN" in s for s in read["zeb"])
        # with every term looked up by seeks (a term many memories hold): the same rows
        monkeypatch.setattr(engine, "SCAN_PER_ROWID", 0)
        for term in terms:
            found, ran = _lookups(index, term, rowids)
            assert found == truth[term.word]
            assert all("+rowid" not in s for s in ran)
