"""Which pairs the pairwise checks compare (memex.workflows.pairs): contradictions
only between memories sharing a gate and a rare key, near-duplicates by an exact
prefix join; the findings on bench/conflict_pairs.jsonl stay what they were."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from memex.adapters.cli import _common
from memex.core import model
from memex.storage import homes
from memex.workflows import conflicts, hygiene, pairs
from tests.helpers import invoke_json

ROOT = Path(__file__).resolve().parent.parent
# conflicts.find's findings on bench/conflict_pairs.jsonl, written by the code before
# candidate pairs came from rare keys (each pair alone, and all 112 memories at once)
EXPECTED = Path(__file__).with_name("conflict_pairs_findings.json")


def _memory(row: dict[str, object], side: str) -> model.Memory:
    data = row[side]
    assert isinstance(data, dict)
    return model.Memory(id=f"{row['id']}-{side}", scope="project", title=data["title"],
                        body=data["body"], tags=list(data["tags"]),
                        paths=list(data.get("paths", [])))


def test_findings_on_the_labelled_pairs_are_unchanged() -> None:
    rows = [json.loads(line) for line in
            (ROOT / "bench" / "conflict_pairs.jsonl").read_text(encoding="utf-8").splitlines()]
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    each = {row["id"]: [c.as_json() for c in
                        conflicts.find([_memory(row, "a"), _memory(row, "b")])]
            for row in rows}
    assert each == expected["pairs"]
    pooled = conflicts.find([_memory(row, side) for row in rows for side in "ab"])
    assert [c.as_json() for c in pooled] == expected["pooled"]


def _word(i: int) -> str:
    """A word of letters only (a digit makes a token no content word)."""
    return "".join(chr(ord("a") + int(d)) for d in f"{i:04d}")


def _mem(i: int, body: str, tags: tuple[str, ...] = ("t",)) -> model.Memory:
    return model.Memory(id=f"M{i:04d}", scope="project", title="", body=body,
                        tags=list(tags))


def test_a_key_many_memories_share_brings_no_pair() -> None:
    # every memory says "disable caching"; one pair also shares a rare word
    memories = [_mem(i, f"Enable caching for {_word(i)}.") for i in range(pairs.RARE)]
    memories.append(_mem(900, f"Disable caching for {_word(3)} and zeta."))
    found = {(c.a, c.b) for c in conflicts.find(memories)}
    assert found == {("M0003", "M0900")}
    # in a small store the same words are rare: every opposite pair is found
    few = memories[:3] + memories[-1:]
    assert {(c.a, c.b) for c in conflicts.find(few)} == {
        ("M0000", "M0900"), ("M0001", "M0900"), ("M0002", "M0900")}


def test_rare_pairs_need_a_shared_gate_and_stay_within_focus() -> None:
    keys = [{"x", "common"}, {"x", "common"}, {"x"}, {"y", "common"}]
    gates = [{"tag:a"}, {"tag:a"}, {"tag:b"}, {"tag:a"}]
    assert pairs.rare_pairs(keys, gates, rare=3) == {(0, 1), (0, 3), (1, 3)}
    assert pairs.rare_pairs(keys, gates, rare=2) == set()  # x in 3, common in 3
    assert pairs.rare_pairs(keys, gates, focus={3}, rare=3) == {(0, 3), (1, 3)}
    assert pairs.rare_pairs(keys, gates, focus={2}, rare=3) == set()  # alone at tag:b



def test_one_focus_pairs_are_the_postings_pairs() -> None:
    # a write's check (one focus item) tests items one by one instead of building the
    # postings; the pairs are those the postings give: with a focus of two items
    # (the postings' path), each pair with the one item, on random keys and gates
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 40)
        keys = [set(rng.sample("abcdefghijkl", rng.randint(0, 6))) for _ in range(n)]
        gates = [set(rng.sample(["tag:a", "tag:b", "dir:c", "dir:d"], rng.randint(0, 2)))
                 for _ in range(n)]
        rare = rng.randint(1, 8)
        x = rng.randrange(n)
        one = pairs.rare_pairs(keys, gates, focus={x}, rare=rare)
        # an extra item holding no key and no gate: the postings' path, same pairs
        more = pairs.rare_pairs([*keys, set()], [*gates, set()], focus={x, n}, rare=rare)
        assert one == more
        assert one == {p for p in pairs.rare_pairs(keys, gates, rare=rare) if x in p}

def test_against_and_update_follow_find() -> None:
    memories = [_mem(i, f"Enable caching for {_word(i)}.") for i in range(6)]
    memories.append(_mem(900, f"Disable caching for {_word(3)}."))
    full = {(c.a, c.b) for c in conflicts.find(memories)}
    mine = conflicts.against(memories[-1], memories[:-1])
    assert {c.a for c in mine} == {"M0900"}
    assert {tuple(sorted((c.a, c.b))) for c in mine} == full
    earlier = [c for c in conflicts.find(memories) if "M0900" not in (c.a, c.b)]
    again = conflicts.update(earlier, memories, {"M0900"})
    assert {(c.a, c.b) for c in again} == full


def _brute(texts: list[str], threshold: float) -> set[tuple[int, int]]:
    sets = [pairs.word_set(t) for t in texts]
    return {(i, j) for i, j in itertools.combinations(range(len(sets)), 2)
            if sets[i] | sets[j] and len(sets[i] & sets[j]) / len(sets[i] | sets[j]) >= threshold}


def test_near_duplicates_is_exact() -> None:
    # edited copies of random texts: the join's filters must never lose a pair
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(50)]
    for _ in range(60):
        texts = []
        for _ in range(12):
            words = rng.sample(vocab, rng.randint(1, 30))
            texts.append(" ".join(words))
            for _ in range(rng.randint(0, 3)):
                edited = list(words)
                for _ in range(rng.randint(0, 3)):
                    if edited and rng.random() < 0.5:
                        edited.pop(rng.randrange(len(edited)))
                    else:
                        edited.append(rng.choice(vocab))
                texts.append(" ".join(edited))
        rng.shuffle(texts)
        for threshold in (0.8, 0.5, 0.9):
            found = {(i, j) for i, j, _ in hygiene.near_duplicates(texts, threshold)}
            assert found == _brute(texts, threshold)


def test_duplicates_of_is_exact() -> None:
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(40)]
    others = [" ".join(rng.sample(vocab, rng.randint(0, 20))) for _ in range(150)]
    texts = [others[n] + " " + rng.choice(vocab) for n in range(0, 150, 10)] + ["", "w1"]
    known = [(n, pairs.word_set(t)) for n, t in enumerate(others)]
    for threshold in (0.8, 0.6):
        found = hygiene.duplicates_of(texts, known, threshold)
        for text, hits in zip(texts, found, strict=True):
            mine = pairs.word_set(text)
            expected = {n for n, theirs in known if mine | theirs and
                        len(mine & theirs) / len(mine | theirs) >= threshold}
            assert {n for n, _ in hits} == expected


def test_health_reports_each_pass_and_only_when_it_runs(repo: Path) -> None:
    invoke_json("capture", "--tag", "flags", "Enable the search flag")
    invoke_json("capture", "--tag", "flags", "Disable the search flag")
    seen: list[tuple[str, int, int]] = []
    report = hygiene.health(homes.workspace(), progress=lambda *step: seen.append(step))
    assert report.conflicts == 1
    assert seen == [(hygiene.READING, 2, 2), (hygiene.COMPARING, 1, 1)]
    seen.clear()
    hygiene.health(homes.workspace(), progress=lambda *step: seen.append(step))
    assert seen == []  # nothing changed: the cached pairs serve, no pass to show


class _Terminal:
    def __init__(self, tty: bool) -> None:
        self.tty, self.text = tty, ""

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("tty", [True, False])
def test_pass_progress_draws_a_bar_per_pass_on_a_terminal_only(
        tty: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = _Terminal(tty)
    monkeypatch.setattr("sys.stderr", stderr)
    progress = _common.pass_progress(minimum=10)
    progress(hygiene.READING, 3, 5)  # a short pass: no bar
    for done in (256, 512, 600):
        progress(hygiene.READING, done, 600)
    progress(hygiene.COMPARING, 40, 40)
    if tty:
        assert "reading memories" in stderr.text and "comparing candidate pairs" in stderr.text
        assert "100%" in stderr.text
    else:
        assert stderr.text == ""
