"""Ranking refinements measured by bench/retrieval.py: the synonym table and the
coverage re-rank (each shown against the same search with the refinement off)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex import search
from memex.index import synonyms, tokens
from tests.helpers import invoke_json


def capture(text: str) -> str:
    return str(invoke_json("capture", text)["id"])


def ids(query: str) -> list[str]:
    return [h["id"] for h in invoke_json("search", query)]


def test_synonym_table_is_symmetric_and_single_tokens() -> None:
    for word, alts in synonyms.TABLE.items():
        assert word not in alts
        assert tokens.query_terms(word) == [word]
        for alt in alts:
            assert word in synonyms.TABLE[alt]
    assert "database" in synonyms.alternatives("db")
    assert synonyms.alternatives("zebra") == ()


@pytest.mark.parametrize(("query", "text"), [
    ("db migration", "Every database migration is reviewed by two people"),
    ("k8s pods", "Kubernetes pods need memory limits"),
    ("repository layout", "The repo keeps backend and frontend together"),
])
def test_a_query_word_finds_its_other_spelling(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                               query: str, text: str) -> None:
    mid = capture(text)
    capture("Unrelated note about lunch")
    assert ids(query) == [mid]
    monkeypatch.setattr(search, "SYNONYMS", False)
    assert mid not in ids(query.split()[0])  # control: the spelling alone does not match


def test_explain_shows_the_synonym_matched(repo: Path) -> None:
    capture("Every database migration is reviewed")
    [hit] = invoke_json("search", "db", "--explain")
    assert hit["explain"]["matched"] == ["db"]


def test_coverage_lifts_a_memory_holding_the_rare_terms(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(12):
        capture(f"The service number {i} has an owner")
    rare = capture("Consumers stall for minutes while the cluster settles down again, so "
                   "wait: a rebalance of kafka follows any deploy of anything else there")
    common = capture("Kafka kafka kafka kafka service")
    query = "kafka rebalance service"
    monkeypatch.setattr(search, "COVERAGE_POWER", 0.0)
    assert ids(query)[:2] == [common, rare]  # control: plain BM25 prefers term frequency
    monkeypatch.setattr(search, "COVERAGE_POWER", 2.0)
    assert ids(query)[:2] == [rare, common]
