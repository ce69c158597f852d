"""Capture's duplicate, near-duplicate and conflict checks go through the index's FTS
lookups; they must find exactly what comparing with every memory finds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex.core import model
from memex.index import build, views
from memex.storage import homes
from memex.workflows import conflicts, writes
from tests.helpers.spies import record_calls

ROOT = Path(__file__).resolve().parent.parent


def _capture(text: str, **fields: object) -> writes.WriteResult:
    return writes.capture(homes.workspace(), writes.CaptureRequest(text=text, **fields))


def test_conflict_pairs_found_as_a_full_comparison_finds_them(repo: Path) -> None:
    rows = [json.loads(x) for x in (ROOT / "bench" / "conflict_pairs.jsonl").read_text()
            .splitlines()]
    _capture("Unrelated filler about the coffee machine", tags=["office"])
    _capture("A memory with paths only", paths=["src/api/"])
    for row in rows:
        a = row["a"]
        _capture(a["body"], title=a["title"], tags=a["tags"], paths=a["paths"])
    ws = homes.workspace()
    found_any = 0
    for row in rows:
        b = row["b"]
        result = writes.capture(ws, writes.CaptureRequest(
            text=b["body"], title=b["title"], tags=b["tags"], paths=b["paths"]), dry_run=True)
        everyone = [x.memory for x in views.snapshot(ws).items]
        expected = [c.b for c in conflicts.against(result.memory, everyone)]
        assert [c["id"] for c in result.possible_conflicts] == expected, row["id"]
        found_any += bool(expected)
    assert found_any >= 25  # most labelled contradictions are found


def test_identical_text_and_same_title_are_found(repo: Path) -> None:
    first = _capture("Run   the 依赖管理 checks\nwith pnpm before a café release",
                     title="Release Checks")
    again = _capture("Run the 依赖管理 checks with pnpm   before a café release")
    assert again.created is False and again.memory.id == first.memory.id
    near = _capture("Something else entirely", title="release checks")
    assert near.created is True and near.near_duplicates == [first.memory.id]
    other_scope = _capture("Run the 依赖管理 checks with pnpm before a café release",
                           scope="personal")
    assert other_scope.created is True  # the check is per scope
    sign = _capture("+++ --- !!!")  # no word to look up: every memory is compared
    assert _capture("+++   --- !!!").memory.id == sign.memory.id


def test_a_text_with_a_combining_mark_meets_its_twin(repo: Path) -> None:
    """A word Python splits at a combining mark ("na" + U+0308 + "ive": "na", "ive") is
    one token to the index ("naive"): the lookup must not ask for its pieces (the
    property test below found this: the same text captured twice made two memories)."""
    for text in ("na\u0308ive", "deploy the na\u0308ive build", "cafe\u0301 \ue000x y"):
        first = _capture(text)
        again = _capture(text.replace(" ", "  "))
        assert not again.created and again.memory.id == first.memory.id, text


def test_tag_with_punctuation_meets_its_twin(repo: Path) -> None:
    first = _capture("Enable the ci/cd cache in staging", tags=["ci/cd"])
    second = _capture("Disable the ci/cd cache in staging", tags=["CI/CD"])
    assert [c["id"] for c in second.possible_conflicts] == [first.memory.id]


def test_the_text_lookups_read_only_their_hits(repo: Path) -> None:
    """Capture's exact-text and same-title lookups look the FTS hits up by rowid: no
    statement of theirs walks the memories of the scope (an index on scope made SQLite
    read every row of it and probe the hits)."""
    _capture("A first memory about the release train", tags=["release"])
    _capture("A second memory about the coffee machine", tags=["office"])
    plans: list[str] = []
    real = views._matching

    def traced(conn: Any, column: str, terms: list[str] | None, where: str,
               args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        conn.set_trace_callback(lambda sql: plans.append(sql))
        try:
            return real(conn, column, terms, where, args)
        finally:
            conn.set_trace_callback(None)

    views._matching = traced  # type: ignore[assignment]
    try:
        result = _capture("A first memory about the release train", tags=["release"])
    finally:
        views._matching = real  # type: ignore[assignment]
    assert not result.created  # the lookup found its twin
    statements = [sql for sql in plans if "MATCH" in sql]
    assert len(statements) == 2  # body and title
    conn = sqlite3.connect(build.db_path(homes.workspace()))
    for sql in statements:
        steps = [row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
        memories = [s for s in steps if " memories" in s]
        assert memories == ["SEARCH memories USING INTEGER PRIMARY KEY (rowid=?)"], steps


def test_the_exact_text_lookup_reads_only_copies(repo: Path) -> None:
    """Memories sharing a text's longest words but not its text are not read by the
    exact-text lookup (at 100,000 memories, 4 words matched ~2,000 rows, each unpacked)."""
    shared = "interoperability decentralisation internationalised comprehensibility"
    for n in range(6):
        _capture(f"{shared} filler note {n} about something else", tags=["x"])
    text = f"{shared} together with hostnames, timeouts, retries and backoffs"
    first = _capture(text)
    read: list[int] = []
    real = views._matching

    def counted(conn: Any, column: str, terms: list[str] | None, where: str,
                args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        rows = real(conn, column, terms, where, args)
        if column == "body":
            read.append(len(rows))
        return rows

    views._matching = counted  # type: ignore[assignment]
    try:
        again = _capture(text)
        other = _capture(f"{text} and more")
    finally:
        views._matching = real  # type: ignore[assignment]
    assert not again.created and again.memory.id == first.memory.id
    assert other.created
    assert read == [1, 1], read  # the copy alone (the second: the first text's words)


# Words a capture's text may hold: Latin, accented (precomposed and with a combining
# mark), CJK runs (bigrams in the index), digits, an underscore joining two words.
_WORDS = st.sampled_from([
    "deploy", "staging", "pnpm", "Release", "café", "cafe\u0301", "na\u0308ive",
    "依赖管理", "依赖", "管理工具", "テスト", "x", "42", "v1.2", "snake_case", "ÉTÉ", "über",
    "ok!", "---", "#tag", "a-b", "Ω",
])
_TEXTS = st.lists(_WORDS, min_size=1, max_size=9).map(" ".join)
_SPACES = st.sampled_from([" ", "  ", "\n", "\t", " \n "])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(stored=st.lists(_TEXTS, min_size=1, max_size=4), pick=st.integers(0, 3),
       space=_SPACES, other=_TEXTS, scope=st.sampled_from(["project", "personal"]))
def test_the_exact_text_lookup_finds_what_comparing_every_memory_finds(
        repo: Path, stored: list[str], pick: int, space: str, other: str,
        scope: str) -> None:
    """Capture's indexed exact-text lookup (FTS words, then the exact test) returns an
    existing memory exactly when comparing the text with every live memory of the
    scope finds one: for a stored text with its spaces changed, and for another."""
    ws = homes.workspace()
    for text in stored:
        _capture(text, scope="project")
    for text in (space.join(stored[pick % len(stored)].split(" ")), other):
        content = model.normalised_text(text.strip())
        expected = {x.memory.id for x in views.snapshot(ws).items
                    if x.memory.scope == scope and x.memory.is_live
                    and model.normalised_text(x.memory.body) == content}
        result = writes.capture(ws, writes.CaptureRequest(text=text, scope=scope),
                                dry_run=True)
        if expected:
            assert not result.created and result.memory.id in expected, text
        else:
            assert result.created, text


def test_the_near_duplicate_check_splits_the_new_text_once(
        repo: Path, monkeypatch: Any) -> None:
    """Each search hit's words are compared with the new text's, split once for all
    of them (not once per hit); the near duplicates found are the same."""
    base = "Deploys of the billing service go through the staging VPN first and then prod"
    made = [_capture(base + f" {n} {'x' * n}").memory.id for n in range(1, 6)]
    split = record_calls(monkeypatch, writes, "_words")
    text = base + " 9"
    result = _capture(text)
    assert sorted(result.near_duplicates) == sorted(made)
    assert [call.args[0] for call in split].count(text) == 1
    assert writes.similar(text, base + " 1") and not writes.similar(text, "other words")


def _near_by_search(ws: homes.Workspace, scope: str, text: str) -> list[str]:
    """The near duplicates as the check found them before it asked the index first:
    the best search hits of the text, compared word for word."""
    from memex.search import engine

    hits = engine.search(ws, engine.SearchRequest(
        query=text[:2000], limit=10, scopes=(scope,), record_access=False,
        vectors=False, refresh=False)).hits
    return [h.id for h in hits if writes.similar(h.memory.body, text)]


def test_a_text_no_memory_is_near_runs_no_search(repo: Path, monkeypatch: Any) -> None:
    """A capture whose text no memory of the scope is near (none holds enough of its
    rarest words) finds its near duplicates without the search (at 100,000 memories
    its any-term lane ranked every memory holding any word of the text); a near one is
    still found by it. Seen failing before the index was asked first: 1 search."""
    from memex.search import engine

    base = ("the billing service deploys through staging first then production after "
            "review of its migrations and the canary checks pass")
    first = _capture(base, tags=["deploy"])
    _capture("the office coffee machine needs descaling every friday", tags=["office"])
    searched = record_calls(monkeypatch, engine, "search")
    fresh = _capture("rotate the signing keys of the release pipeline each quarter")
    assert fresh.created and fresh.near_duplicates == [] and searched == []
    near = _capture(base + " twice")
    assert near.near_duplicates == [first.memory.id] and len(searched) == 1


def test_the_index_is_asked_for_the_rarest_words(repo: Path, monkeypatch: Any) -> None:
    """The words looked up are the text's rarest (by the index's counts), as many as a
    near duplicate may lack plus NEAR_AT_LEAST, of which it must hold NEAR_AT_LEAST:
    the words every memory holds are left for the comparison."""
    shared = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima "
              "mike november oscar papa quebec romeo sierra tango uniform victor whiskey")
    for n in range(6):
        _capture(f"{shared} numbered {n}")
    _capture("onlyhere once")
    asked = record_calls(monkeypatch, views, "holding")
    text = f"{shared} zebras onlyhere"
    _capture(text)
    (call,) = asked
    words, at_least = call.args[2], call.args[3]
    assert words[:2] == ["zebras", "onlyhere"], words  # no memory holds it; one does
    assert len(words) == len(writes._words(text)) // 5 + writes.NEAR_AT_LEAST
    assert at_least == writes.NEAR_AT_LEAST


# Texts of a few dozen words from a small vocabulary (so memories share most words),
# with accents, CJK, digits and an underscore among them.
_NEAR_WORDS = st.sampled_from([
    "deploy", "staging", "pnpm", "release", "café", "依赖管理", "42", "snake_case",
    "über", "cache", "token", "rotation", "build", "fail", "timeout", "retry", "docker",
    "lint", "ruff", "mypy", "server", "database", "migration", "review", "rule",
])
_NEAR_TEXTS = st.lists(_NEAR_WORDS, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(stored=st.lists(_NEAR_TEXTS, min_size=1, max_size=5), text=_NEAR_TEXTS,
       drop=st.integers(0, 6), scope=st.sampled_from(["project", "personal"]))
def test_the_near_duplicates_are_the_searchs(repo: Path, stored: list[str], text: str,
                                             drop: int, scope: str) -> None:
    """The near duplicates a capture finds are those the search's best hits compared
    word for word give, for texts near stored ones (a few words left out) and not."""
    ws = homes.workspace()
    for n, body in enumerate(stored):
        _capture(body, scope="project" if n % 2 else scope)
        words = body.split()
        _capture(" ".join(words[: max(1, len(words) - drop)]) + " extra", scope=scope)
    with build.open_index(ws):
        pass  # refreshed, as capture's own lookup leaves it
    for probe in (text, stored[0], stored[0] + " plus"):
        assert writes._similar_ids(ws, scope, probe) == _near_by_search(ws, scope, probe)


def test_a_check_reads_no_whole_doclist_and_keeps_what_it_learns(
        repo: Path, monkeypatch: Any) -> None:
    """The check reads no word's whole doclist (fts_terms: ~30-50 ms a common word at
    100,000 memories): it probes each word it has no count of, reading at most `cap`
    rows; a count under the cap is kept with the term counts, a word at the cap is kept
    as common (term_floors), so the next check probes nothing. With a common word among
    the rarest asked the search decides."""
    from memex.index import termcounts

    shared = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima "
              "mike november oscar papa quebec romeo sierra tango")
    from tests.helpers import memfiles

    for n in ("one", "two", "three", "four"):
        memfiles.put(repo / ".memex", f"{shared} numbered {n}")
    monkeypatch.setattr(writes, "NEAR_COMMON_MIN", 3)  # a word in 3 memories: common
    whole = record_calls(monkeypatch, termcounts, "vocab_count")
    probes = record_calls(monkeypatch, termcounts, "probe")
    holding = record_calls(monkeypatch, views, "holding")
    ws = homes.workspace()
    build.refresh(ws)
    text = f"{shared} one whiskey xray yankee"  # 24 words: 24 // 5 + 6 = 10 asked
    assert writes._may_be_near(ws, "project", writes._words(text))  # 4 rare: too few
    assert whole == [] and holding == []
    assert {c.args[1] for c in probes} == set(writes._words(text))
    assert all(c.args[2] == 3 for c in probes)
    conn = build.open_index(ws, refresh=False).conn
    assert dict(conn.execute("SELECT term, doc FROM term_counts")) == {"on": 1}
    floors = dict(conn.execute("SELECT term, floor FROM term_floors"))
    assert floors == dict.fromkeys(["alpha", "bravo", "charli", "delta", "echo", "foxtrot",
                                    "golf", "hotel", "india", "juliet", "kilo", "lima",
                                    "mike", "novemb", "oscar", "papa", "quebec", "romeo",
                                    "sierra", "tango"], 3)
    probes.clear()
    assert writes._may_be_near(ws, "project", writes._words(text))
    assert {c.args[1] for c in probes} == {"whiskey", "xray", "yankee"}  # held by none
    assert whole == []
    rare = f"{' '.join(shared.split()[:4])} one whiskey xray yankee zulu victor uniform " \
        "wolf"  # 12 words: 8 asked, 7 held by none and "one"
    assert not writes._may_be_near(ws, "project", writes._words(rare))
    assert len(holding) == 1 and whole == []


def test_a_capture_in_a_store_without_kept_counts_compares_few_memories(
        repo: Path, monkeypatch: Any) -> None:
    """A store whose term counts are not kept yet (a rebuilt index, or one a refresh of
    thousands of files left without them): the check ranked its words by the few it had
    counted (the first 32 stems, alphabetically: here the common ones) and compared the
    text with every memory holding 6 of them. Seen failing: all 40 memories compared (at
    100,000 bench memories one capture compared all 100,002: 37 CPU s). Now the words
    no memory holds are its rarest, and none is compared."""
    from tests.helpers import memfiles

    common = ("able about above across after again against all also always among and any "
              "are around as at away back be because been before being below between "
              "both but by came can come could")
    folder = repo / ".memex"
    for n in range(40):
        memfiles.put(folder, f"{common} only{n}word")
    ws = homes.workspace()
    build.refresh(ws)
    compared = record_calls(monkeypatch, writes, "_similar_words")
    searched = record_calls(monkeypatch, writes, "_similar_ids")
    result = _capture(f"{common} zebra zinc zone zoom zulu yak yarn yawn year yell yelp "
                      "yoga yolk young youth")
    assert result.created and result.near_duplicates == [] and len(searched) == 1
    assert len(compared) == 0
    near = _capture(f"{common} only7word again")  # near duplicates are still found
    assert near.near_duplicates


def test_a_check_that_fails_reports_no_near_duplicate(repo: Path, monkeypatch: Any) -> None:
    """The index's lookup failing (a MemexError) leaves the capture as the search's
    failing does: saved, no near duplicate (seen failing before the lookup was inside
    the search's try: the capture failed)."""
    from memex.core.errors import MemexError

    for n in range(3):
        _capture(f"the release train leaves on friday after the freeze number {n}")

    def failing(*args: Any) -> Any:
        raise MemexError("no index")

    monkeypatch.setattr(views, "holding", failing)
    result = _capture("the release train leaves on friday after the freeze number 7")
    assert result.created and result.near_duplicates == []
