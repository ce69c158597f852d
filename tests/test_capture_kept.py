"""Capture's contradiction check reads each compared memory's keys and features from
what the index kept of it (pair_cache), made once; it must find exactly what `against`
finds comparing with the same memories made again from their text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex.index import build, views
from memex.storage import homes
from memex.workflows import conflicts, pairs, writes
from tests.helpers.spies import record_calls


def _capture(text: str, dry_run: bool = False, **fields: Any) -> writes.WriteResult:
    return writes.capture(homes.workspace(), writes.CaptureRequest(text=text, **fields),
                          dry_run=dry_run)


def _expected(result: writes.WriteResult, tags: list[str], paths: list[str]
              ) -> list[tuple[str, str]]:
    """`against` with the memories the check looked at, each made from its stored text
    (the comparison before the index kept anything)."""
    with build.open_index(homes.workspace(), refresh=False) as index:
        rowids = views._gated(index.conn, tags, paths)
        memories = views.read_rows(index.conn, rowids)
    others = [memories[r] for r in rowids]
    return [(c.b, "; ".join(r.detail for r in c.reasons))
            for c in conflicts.against(result.memory, others)]


def _found(result: writes.WriteResult) -> list[tuple[str, str]]:
    return [(c["id"], c["reason"]) for c in result.possible_conflicts]


def test_a_second_capture_reads_what_the_index_kept(repo: Path, monkeypatch: Any) -> None:
    """The first capture with a tag makes the features of the memories it compares
    with; the next one reads them (main made them again on every capture: 2 texts a
    memory, 16 here), and an edited memory's are made again from its new text."""
    made = [_capture(f"We enable the cache {n} before every deploy of the api service",
                     tags=["deploy"]) for n in range(6)]
    first = _capture("We disable the cache before every deploy of the api service",
                     tags=["deploy"])
    assert len(first.possible_conflicts) == 6
    calls = record_calls(monkeypatch, conflicts, "_clauses")
    second = _capture("Never disable the cache before a deploy of the api service",
                      tags=["deploy"])
    # its own title and body, and the first capture's (never compared before): not
    # the six the first capture compared with
    assert len(calls) == 4, calls
    assert _found(second) == _expected(second, ["deploy"], [])
    assert len(second.possible_conflicts) == 7  # the six and the first
    writes.update(homes.workspace(), made[0].memory.id,
                  writes.UpdateRequest(body="The coffee machine is on the second floor"))
    calls.clear()
    third = _capture("Always disable the cache before a deploy of the api service",
                     tags=["deploy"], dry_run=True)
    assert len(calls) == 2 + 2  # and the edited memory's, made again
    assert made[0].memory.id not in {c["id"] for c in third.possible_conflicts}
    assert _found(third) == _expected(third, ["deploy"], [])


_WORDS = st.sampled_from([
    "enable", "disable", "not", "never", "cache", "deploy", "pnpm", "npm", "yarn",
    "timeout", "is", "30s", "60s", "node", "18", "20", "use", "api", "service", "tests",
    "pass", "fail", "instead of", "prefer", "over", "but", "retries", "3", "5", "date-fns",
    "moment", "tabs", "spaces", "indent", "with", "the", "café", "staging", "required",
    "optional", "no longer", ",", ".", ":", "-",
])
_TEXTS = st.lists(_WORDS, min_size=1, max_size=14).map(" ".join)
_TAGS = st.lists(st.sampled_from(["ops", "api", "build", "CI/CD"]), max_size=2, unique=True)
_PATHS = st.lists(st.sampled_from(["src/api/", "src/*.py", "docs/x.md"]), max_size=1)
_MEMORY = st.tuples(_TEXTS, _TAGS, _PATHS)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(stored=st.lists(_MEMORY, min_size=1, max_size=6), new=_MEMORY)
def test_the_kept_check_finds_what_against_finds(
        repo: Path, stored: list[tuple[str, list[str], list[str]]],
        new: tuple[str, list[str], list[str]]) -> None:
    """Over stores the examples build up (past RARE memories a tag: the rarity rule
    counts), the check with nothing kept and then with everything kept finds what
    `against` finds with the same memories made from their text, in the same order."""
    for text, tags, paths in stored:
        _capture(text, tags=tags, paths=paths)
    text, tags, paths = new
    for _ in range(2):  # nothing kept for what this store added, then all of it
        result = _capture(text, dry_run=True, tags=tags, paths=paths)
        if result.created:
            assert _found(result) == _expected(result, tags, paths), text


def test_a_key_of_more_than_rare_memories_brings_no_pair(repo: Path) -> None:
    """Rarity is counted among the compared memories and the new one, as `against`
    counts it: with RARE memories holding every key of the new one, none is rare."""
    for n in range(conflicts.pairs.RARE):
        _capture(f"Enable the widget cache {n}", tags=["ops"])
    for _ in range(2):  # nothing kept, then all kept
        result = _capture("Disable the widget cache", tags=["ops"], dry_run=True)
        assert _found(result) == _expected(result, ["ops"], []) == []
    few = _capture("Enable the widget cache", tags=["ops2"])
    result = _capture("Disable the widget cache", tags=["ops2"], dry_run=True)
    assert [c["id"] for c in result.possible_conflicts] == [few.memory.id]


_PIECES = st.sampled_from([
    "Enable", "disable", "not", "never", "cache", "Deploy", "pnpm", "npm", "timeout is",
    "30s", "node 18", "v20", "instead of", "rather than", "prefer", "over", "but",
    "whereas", "date-fns", "moment", "tabs", "spaces", "indent", "don\u2019t", "no longer",
    ",", ".", ":", " - ", ";", "!", "\n", "?", "caf\u00e9", "\u0130stanbul", "\u00df",
    "required", "optional", "retries to 3", "the", "a",
])
_PROSE = st.lists(_PIECES, max_size=16).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(title=_PROSE, body=_PROSE)
def test_kept_features_read_back_as_made(title: str, body: str) -> None:
    """What the index keeps of a memory's features reads back as what `compare` looks
    at: every clause's text, words (those among its keys by a bit each, the others
    listed) and negation, the values, alternatives and antonyms, in order."""
    made = conflicts.features_of("x", title, body, ["t"], ["p/"])
    keys = conflicts.encode_keys(conflicts.pair_keys(pairs.word_set(
        pairs.paired_text(title, body))))
    back = conflicts.decode_features(conflicts.encode_features(made, title, body, keys), "x",
                                     made.tags, made.paths, title, body, keys)
    assert [(c.text, c.words, c.negated) for c in back.clauses] == [
        (c.text, c.words, c.negated) for c in made.clauses]
    assert back.values == made.values and back.alternatives == made.alternatives
    assert back.antonyms == made.antonyms
    assert back.antonym_clauses == made.antonym_clauses
    # given the keys already split (a write's key pass), the same
    split = conflicts.decode_features(conflicts.encode_features(made, title, body, keys), "x",
                                      made.tags, made.paths, title, body, keys,
                                      keys.split("\n") if keys else [])
    assert [(c.text, c.words, c.negated) for c in split.clauses] == [
        (c.text, c.words, c.negated) for c in back.clauses]
    assert (split.antonyms, split.antonym_clauses) == (back.antonyms, back.antonym_clauses)


def test_the_rules_digest_is_of_the_code_running_not_of_the_files_on_disk(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A process that imported the rules and then sees conflicts.py change on disk (an
    upgrade under a long-lived MCP server) still names its kept rows by the rules it
    runs: else it would write rows made by the old rules under the new rules' digest,
    and every new process would trust them."""
    import importlib.util
    import sys

    copy = tmp_path / "conflicts.py"
    copy.write_bytes(Path(conflicts.__file__).read_bytes())
    spec = importlib.util.spec_from_file_location("memex_conflicts_copy", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "memex_conflicts_copy", module)
    spec.loader.exec_module(module)
    copy.write_bytes(copy.read_bytes() + b"\n# the rules, upgraded\n")
    # the copy runs the same code as conflicts: the same digest, the file's change aside
    assert module.cache_version() == conflicts.cache_version() != ""


def _orphans() -> tuple[int, int]:
    """(pair_cache rows, those whose rowid is no live memories row)."""
    with build.open_index(homes.workspace()) as index:
        rows = index.conn.execute("SELECT count(*) FROM pair_cache").fetchone()[0]
        lost = index.conn.execute(
            "SELECT count(*) FROM pair_cache WHERE rowid NOT IN "
            "(SELECT rowid FROM memories)").fetchone()[0]
    return rows, lost


def test_edits_and_deletes_leave_no_kept_row_of_a_memory_gone(repo: Path) -> None:
    """An edit gives a memory a new row (and rowid) and a delete removes it: what the
    index kept of the old row goes with it (it piled up until a full rebuild)."""
    made = [_capture(f"We enable the cache {n} before every deploy of the api service",
                     tags=["deploy"]) for n in range(5)]
    _capture("We disable the cache before every deploy of the api service", tags=["deploy"])
    for n in range(10):
        writes.update(homes.workspace(), made[n % 5].memory.id,
                      writes.UpdateRequest(body=f"We enable the cache {n} for the api"))
        _capture(f"Never enable the cache {n} for the api", tags=["deploy"], dry_run=True)
    rows, lost = _orphans()
    assert rows >= 5 and lost == 0, (rows, lost)
    for result in made[:3]:
        writes.delete(homes.workspace(), result.memory.id)
    rows, lost = _orphans()
    assert rows >= 2 and lost == 0, (rows, lost)
    # a capture that read a row before a write removed it keeps nothing of it
    views.keep_pair_cache(homes.workspace(), [(10**9, "gone", "cache", None)],
                          conflicts.cache_version())
    assert _orphans() == (rows, 0)


def test_the_kept_check_pairs_by_the_one_rule(repo: Path, monkeypatch: Any) -> None:
    """Capture's check from the kept rows takes its pairs and verdicts from the rule
    `among` (and `against`) use, not from a copy of it: a change to that rule is a
    change to both."""
    _capture("We enable the cache before every deploy of the api service", tags=["deploy"])
    new = _capture("We disable the cache before every deploy of the api service",
                   tags=["deploy"], dry_run=True)
    assert len(new.possible_conflicts) == 1
    monkeypatch.setattr(pairs, "rare_pairs", lambda *args, **kwargs: set())
    again = _capture("We disable the cache before every deploy of the api service",
                     tags=["deploy"], dry_run=True)
    assert again.possible_conflicts == []
