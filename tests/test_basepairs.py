"""review's findings against a large base (memex.workflows.basepairs) are exactly those
of the full pass: `conflicts.among` over base + PR with the PR as focus, and
`hygiene.duplicates_of` against every base memory."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import pytest

from memex.core import model
from memex.workflows import basepairs, conflicts, hygiene, pairs

ROOT = Path(__file__).resolve().parent.parent

Result = tuple[list[list[tuple[str, float]]], list[dict[str, object]]]


def full_pass(fresh: Sequence[model.Memory], base: Sequence[model.Memory]) -> Result:
    """What review computed before basepairs: every base memory's keys and words."""
    entries = [conflicts.Entry.of(m) for m in base]
    ours = {m.id for m in fresh}
    count = len(base)
    found = conflicts.among([*entries, *(conflicts.Entry.of(m) for m in fresh)],
                            lambda i: base[i] if i < count else fresh[i - count], focus=ours)
    near = hygiene.duplicates_of([pairs.paired_text(m.title, m.body) for m in fresh],
                                 [(i, pairs.word_set(e.text)) for i, e in enumerate(entries)])
    return ([[(base[i].id, score) for i, score in found_near] for found_near in near],
            [c.as_json() for c in found if c.b not in ours])


def candidate_pass(fresh: Sequence[model.Memory], base: Sequence[model.Memory],
                   sample: int) -> Result:
    entries = [conflicts.Entry.of(m) for m in base]
    found = basepairs.against(fresh, basepairs.Base([e.text for e in entries],
                                                    entries.__getitem__, base.__getitem__),
                              sample=sample)
    assert all(base[found.index_of[c.b]].id == c.b for c in found.contradictions)
    return ([[(base[i].id, score) for i, score in found_near] for found_near in found.near],
            [c.as_json() for c in found.contradictions])


def _labelled() -> list[dict[str, object]]:
    return [json.loads(line) for line in
            (ROOT / "bench" / "conflict_pairs.jsonl").read_text(encoding="utf-8").splitlines()]


def _memory(mid: str, data: dict[str, object]) -> model.Memory:
    return model.Memory(id=mid, scope="project", title=str(data["title"]),
                        body=str(data["body"]), tags=list(data["tags"]),  # type: ignore[call-overload]
                        paths=list(data.get("paths", [])))  # type: ignore[call-overload]


@pytest.mark.parametrize("sample", [1, 8, 512])
def test_the_labelled_pairs_give_the_same_findings(sample: int) -> None:
    rows = _labelled()
    # the PR holds the b side of every other pair; the base the rest
    fresh = [_memory(f"{row['id']}-b", row["b"]) for row in rows[::2]]  # type: ignore[arg-type]
    base = [_memory(f"{row['id']}-a", row["a"]) for row in rows]  # type: ignore[arg-type]
    base += [_memory(f"{row['id']}-b", row["b"]) for row in rows[1::2]]  # type: ignore[arg-type]
    expected = full_pass(fresh, base)
    assert expected[1], "the pairs hold contradictions"
    assert candidate_pass(fresh, base, sample) == expected


VOCABULARY = [
    "deploy", "staging", "server", "cache", "cached", "caching", "retry", "timeout",
    "token", "rotation", "database", "migration", "release", "checklist", "lint",
    "build", "review", "branch", "merge", "history", "format", "formatter", "quotes",
    "indent", "time", "dates", "client", "http", "logs", "logger", "tests", "queue",
    "foo_bar", "_private", "café", "naïve", "ΟΔΟΣ", "οδος", "İstanbul", "依赖管理",
    "date-fns", "moment.js", "turn-on", "non-blocking", "check-in",
    "pnpm", "npm", "yarn", "pytest", "jest", "ruff", "black", "mypy", "pyright",
    "postgres", "mysql", "sqlite", "utc", "local", "rebase", "squash", "tabs", "spaces",
    "enable", "disable", "allow", "forbid", "sync", "async", "before", "after",
    "keep", "remove", "include", "exclude", "public", "private",
    "never", "not", "don't", "always", "we", "use", "the", "is", "to", "of",
    "node", "python", "retries", "seconds", "ms", "v18", "20", "3.11", "30s", "5",
]


def _text(rng: random.Random, words: int) -> str:
    picked = [rng.choice(VOCABULARY) if rng.random() < 0.7 else
              "".join(rng.choice("abcdefgh") for _ in range(rng.randint(3, 6)))
              for _ in range(words)]
    out = []
    for i, word in enumerate(picked):
        out.append(word)
        if i % 7 == 6:
            out.append(rng.choice([".", ",", ";", " but", ":"]))
    return " ".join(out)


def _generated(seed: int, count: int) -> tuple[list[model.Memory], list[model.Memory]]:
    rng = random.Random(seed)
    tags = ["tooling", "ci", "db", "style", "Ops"]
    base = []
    for i in range(count):
        base.append(model.Memory(
            id=f"B{i:04d}", scope="project", title=_text(rng, rng.randint(0, 5)),
            body=_text(rng, rng.randint(3, 40)), tags=rng.sample(tags, rng.randint(0, 2)),
            paths=rng.choice([[], [], ["src/**"], ["src/app.py"], ["docs/"]]),
            related=[f"B{rng.randrange(count):04d}"] if rng.random() < 0.05 else []))
    fresh = []
    for i in range(12):
        if i % 3 == 0:  # an edited copy of a base memory: a near-duplicate
            source = base[rng.randrange(count)]
            body = source.body.split()
            body[rng.randrange(len(body))] = "changed"
            memory = source.copy(id=f"F{i:04d}", body=" ".join(body))
        else:
            memory = model.Memory(
                id=f"F{i:04d}", scope="project", title=_text(rng, 4),
                body=_text(rng, rng.randint(5, 40)), tags=rng.sample(tags, rng.randint(1, 2)),
                paths=rng.choice([[], ["src/**"]]))
        fresh.append(memory)
    return fresh, base


@pytest.mark.parametrize(("seed", "sample"), [(1, 1), (2, 16), (3, 64), (4, 4096)])
def test_a_generated_base_gives_the_same_findings(seed: int, sample: int) -> None:
    fresh, base = _generated(seed, 700)
    expected = full_pass(fresh, base)
    assert any(expected[0]) and expected[1], "near-duplicates and contradictions to find"
    assert candidate_pass(fresh, base, sample) == expected


def test_the_comparison_sees_a_lost_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh, base = _generated(1, 300)
    expected = full_pass(fresh, base)
    monkeypatch.setattr(basepairs, "_prefix", lambda found, df: frozenset())
    assert candidate_pass(fresh, base, 1) != expected


def test_the_comparison_sees_a_lost_holder(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh, base = _generated(2, 300)
    expected = full_pass(fresh, base)
    monkeypatch.setattr(conflicts, "word_keys", lambda word: ())
    assert candidate_pass(fresh, base, 1) != expected


def test_only_memories_that_could_pair_are_made_entries() -> None:
    unrelated = [model.Memory(id=f"U{i:04d}", scope="project", title="",
                              body=f"{_letters(i)} handles {_letters(i + 1)}", tags=["tooling"])
                 for i in range(200)]
    pnpm = model.Memory(id="P0001", scope="project", title="Installs",
                        body="We use pnpm for installs.", tags=["tooling"])
    base = [*unrelated[:100], pnpm, *unrelated[100:]]
    fresh = [model.Memory(id="F0001", scope="project", title="Installs",
                          body="We use npm for installs.", tags=["tooling"])]
    entries = [conflicts.Entry.of(m) for m in base]
    found = basepairs.against(fresh, basepairs.Base([e.text for e in entries],
                                                    entries.__getitem__, base.__getitem__))
    assert [(c.a, c.b) for c in found.contradictions] == [("F0001", "P0001")]
    assert found.entries == {100}  # nothing made of the 200 that share no key or word


def _letters(i: int) -> str:
    return "".join(chr(ord("a") + int(d)) for d in f"{i:05d}")
