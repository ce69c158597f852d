"""Ranking refinements measured by bench/retrieval.py: the synonym table (coding
spellings and English irregular forms), question framing dropped from queries, the
coverage re-rank and the answer-kind boost (each shown against the same search with
the refinement off)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memex.index import schema, tokens
from memex.search import answers, synonyms
from memex.search import engine as search
from tests.helpers import invoke, invoke_json


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


@pytest.mark.parametrize(("query", "text", "form"), [
    ("when did Ana meet the auditors", "Ana met the auditors in the lobby", "meet"),
    ("who teaches the onboarding course", "Kim taught the onboarding course", "teaches"),
    ("which children joined", "Two kids joined the team", "children"),
])
def test_an_irregular_form_finds_its_other_forms(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                                 query: str, text: str, form: str) -> None:
    mid = capture(text)
    capture("Unrelated note about lunch")
    assert ids(form) == [mid]
    assert mid in ids(query)
    monkeypatch.setattr(search, "SYNONYMS", False)
    assert mid not in ids(form)  # control: the form alone does not match


@pytest.fixture
def empty_index(monkeypatch: pytest.MonkeyPatch) -> sqlite3.Connection:
    """An index with no memories, and the irregular forms not yet read in this process
    (whether another test read them first must not matter)."""
    monkeypatch.setattr(search, "_BY_STEM", {})
    conn = sqlite3.connect(":memory:")
    schema.create(conn)
    return conn


@pytest.mark.parametrize("word", [
    "left", "bit", "lit", "led", "fed", "shot", "mean", "read", "set", "sets", "found",
    "won", "go", "going", "make", "man", "shake", "product", "specific", "personal",
    "window", "developer", "pulled", "document"])
def test_words_that_are_other_words_in_code_have_no_alternatives(
        word: str, empty_index: sqlite3.Connection) -> None:
    conn = empty_index
    assert search._alternatives(conn, word) == ()  # neither by the word nor its stem


def test_an_inflected_word_finds_irregular_forms_by_its_stem(
        empty_index: sqlite3.Connection) -> None:
    conn = empty_index
    assert search._alternatives(conn, "teaches") == ("teach", "taught")
    assert "ran" in search._alternatives(conn, "running")
    assert "kids" in search._alternatives(conn, "child")
    assert search._alternatives(conn, "db") == synonyms.alternatives("db")


def test_no_word_is_in_two_groups() -> None:
    words = [w for group in synonyms.GROUPS for w in group]
    assert len(words) == len(set(words))


@pytest.mark.parametrize(("query", "expected"), [
    ("What kind of database does the billing service use?", ["database", "billing",
                                                             "service", "use"]),
    ("types of caches, according to the docs", ["caches", "docs"]),
    ("What did the reviewer say about caching?", ["reviewer", "caching"]),
    ("What does Joanna mention that Nate makes", ["joanna", "nate", "makes"]),
    ("What things has Nate recommended", ["nate", "recommended"]),
    # not framing: the words are what is asked about
    ("type hints everywhere", ["type", "hints", "everywhere"]),
    ("how do mentions work", ["mentions", "work"]),
    ("say hello to the bot", ["say", "hello", "bot"]),
    ("the thing server", ["thing", "server"]),
])
def test_question_framing_is_dropped_from_queries(query: str, expected: list[str]) -> None:
    assert tokens.query_terms(query) == expected


def test_framing_stays_in_memory_text_and_when_nothing_else_is_left() -> None:
    assert tokens.query_terms("what did she say") == []
    assert "say" in tokens.query_terms("what did she say", keep_stop_words=True)
    assert "mention" in tokens.words("did we mention it")


def test_a_mention_feature_is_still_found(repo: Path) -> None:
    mid = capture("Mentions notify the user named after the @")
    capture("Unrelated note about lunch")
    assert ids("how do mentions work") == [mid]


@pytest.mark.parametrize(("question", "kind"), [
    ("When did we move to Postgres?", "time"),
    ("what date was the freeze", "time"),
    ("How many workers run?", "number"),
    ("how long does the build take", "number"),
    ("Where is the cache kept?", "place"),
    ("Which city hosts the summit?", "place"),
    ("in which file is the parser", "place"),
    ("what is the cache", None),
    ("whenever it fails", None),
    ("the release when tests pass", None),
    ("when should I run migrations", None),  # a condition, not a time asked for
    ("when using pytest fixtures, which scope", None),
    ("what time zone do reports use", None),
    ("which state machine handles checkout", None),
    ("where clause is slow", None),
])
def test_the_kind_of_answer_a_question_asks_for(question: str, kind: str | None) -> None:
    found = answers.kind_of(question)
    assert (found.name if found else None) == kind


@pytest.mark.parametrize(("kind", "text", "holds"), [
    ("time", "We moved last March", True),
    ("time", "Frozen on 2024-05-02", True),
    ("time", "We moved to Postgres", False),
    ("number", "It runs 8 workers", True),
    ("number", "It runs twice", True),
    ("number", "It runs workers", False),
    ("number", "The k8s cluster runs python3 with sha256 digests, v1.2", False),
    ("time", "Listen on port 8080", False),
    ("place", "The summit is in Lisbon", True),
    ("place", "The cache lives under ~/.cache/memex", True),
    ("place", "see config.toml", True),
    ("place", "README.md says so", True),
    ("place", "the summit is in lisbon", False),
    ("place", "the CI/CD pipeline takes a read/write lock", False),
    ("place", "Node.js runs it, e.g. here", False),
])
def test_whether_a_text_holds_that_kind(kind: str, text: str, holds: bool) -> None:
    [found] = [k for k in answers.KINDS if k.name == kind]
    assert found.answered_by(text) is holds


def test_a_memory_holding_the_answer_kind_moves_up(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        capture(f"Note {i} about the office plants")
    echo = capture("Should we migrate the billing database to Postgres? Postgres "
                   "would make the billing migration simpler")
    answer = capture("We migrated billing to Postgres in March")
    question = "When did we migrate billing to Postgres?"
    monkeypatch.setattr(search, "ANSWER_BOOST", 1.0)
    assert ids(question)[:2] == [echo, answer]  # control: plain ranking prefers the echo
    monkeypatch.setattr(search, "ANSWER_BOOST", 2.0)
    assert ids(question)[:2] == [answer, echo]
    assert ids("migrate billing to Postgres")[:2] == [echo, answer]  # not a question
    [top, *_rest] = invoke_json("search", question, "--explain")
    assert top["explain"]["boosts"]["answer:time"] == 2.0
    assert top["explain"]["score"] == top["score"]  # the final score, boost included
    text = invoke("search", question, "--explain")
    assert "answer:time x2.0" in text.stdout


def test_answer_kind_keeps_lane_order_when_coverage_does(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(8):
        capture(f"Postgres note {i}")
    every = capture("Billing moves to Postgres")
    most = capture("Billing moves on 2024-05-02")
    question = "when did billing move to postgres"
    assert ids(question)[:2] == [most, every]  # across lanes, the answer leads
    monkeypatch.setattr(search, "COVERAGE_ACROSS_LANES", False)
    assert ids(question)[:2] == [every, most]  # within lanes: all terms first
