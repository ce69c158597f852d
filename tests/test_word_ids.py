"""health's pair passes on word ids (pairs.WordIds, issue 18): each memory's word set held
as an array of the ids of its words instead of a frozenset of strings. The passes must find
exactly what they found on the words: the same word sets, the same rare keys, the same
near-duplicate pairs; and the word cache must keep the sets right when another process
numbered words meanwhile."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex.core import model
from memex.storage import store
from memex.workflows import conflicts, hygiene, pairs, word_cache

# a small vocabulary (words shared by many texts, and by few), with non-ASCII words, the
# pieces of compounds (date-fns, turn-on) and rule words (pnpm, enable, disable)
_WORDS = ["alpha", "beta", "gamma", "delta", "Straße", "İstanbul", "café", "依赖", "date",
          "fns", "turn", "on", "pnpm", "npm", "enable", "disable", "caching", "x86_64",
          "v3", "the", "ΣΟΦΙΑ", "node", "18", "20"]
_TEXT = st.lists(st.sampled_from(_WORDS), max_size=40).map(" ".join)


def _spelled(words: pairs.WordIds, text: str) -> frozenset[str]:
    return frozenset(words.spelled[n] for n in words[text])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=60) | _TEXT, max_size=12))
def test_word_ids_are_the_word_sets(texts: list[str]) -> None:
    words = pairs.WordIds()
    for text in texts:
        assert _spelled(words, text) == pairs.word_set(text)
        assert len(words[text]) == len(pairs.word_set(text))  # each word once
    assert len(words.ids) == len(words.spelled) == len(set().union(
        *map(pairs.word_set, texts)))  # one id a word


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TEXT, min_size=2, max_size=30), st.integers(1, 6))
def test_rare_keys_on_ids_are_those_on_words(texts: list[str], rare: int) -> None:
    sets = [pairs.word_set(t) for t in texts]
    words = pairs.WordIds()
    ids = [words[t] for t in texts]
    assert (conflicts.rare_keys(ids, rare, words=words) == conflicts.rare_keys(sets, rare))


def _old_duplicates(items: list[store.Loaded], rare: int, small: int
                    ) -> dict[tuple[str, str], float]:
    """duplicate_pairs' rule on the word sets, pair by pair: at least NEAR_DUPLICATE
    alike, in one scope, sharing a word at most `rare` of them hold or both small."""
    sets = [pairs.word_set(pairs.paired_text(i.memory.title, i.memory.body)) for i in items]
    counts = pairs.counts(sets)
    held = {w for w, n in counts.items() if n <= rare}
    out: dict[tuple[str, str], float] = {}
    for (x, a), (y, b) in itertools.combinations(enumerate(items), 2):
        union = sets[x] | sets[y]
        if a.memory.scope != b.memory.scope or not union:
            continue
        score = len(sets[x] & sets[y]) / len(union)
        if score >= hygiene.NEAR_DUPLICATE and (
                max(len(sets[x]), len(sets[y])) <= small or held & sets[x] & sets[y]):
            out[(a.id, b.id)] = score
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_TEXT, st.booleans()), min_size=2, max_size=30),
       st.integers(1, 6), st.sampled_from([0, 3, 32]))
def test_near_duplicates_on_ids_are_those_on_words(
        rows: list[tuple[str, bool]], rare: int, small: int) -> None:
    home = store.Home("project", Path("/nowhere"))
    items = [store.Loaded(model.Memory(id=f"M{n:03d}", title="", body=text,
                                       scope="personal" if personal else "project"),
                          Path(f"/nowhere/{n}.md"), home)
             for n, (text, personal) in enumerate(rows)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pairs, "RARE", rare)
        patch.setattr(hygiene, "SMALL", small)
        found = hygiene.duplicate_pairs(items)
        expected = _old_duplicates(items, rare, small)
        assert {(a, b): score for a, b, score in found} == expected
        words = pairs.WordIds()
        counts = pairs.counts(words[words.text("", text)] for text, _ in rows)
        for changed in items[::3]:
            earlier = [p for p in found if changed.id not in p[:2]]
            again = hygiene.update_duplicate_pairs(earlier, items, {changed.id}, words=words,
                                                   counts=counts)
            assert {frozenset(p[:2]) for p in again} == {frozenset(p[:2]) for p in found}


def test_sets_made_while_another_process_numbered_words_are_kept_renumbered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another report keeps its sets (numbering its new words) between this one's read of
    the cache and its write: this one's new words get the cache's next numbers, and its
    sets are written in them, so every set reads back as its words."""
    first = ["alpha beta gamma", "beta gamma delta"]
    word_cache.read(tmp_path, first, ["h1", "h2"])
    others = ["zeta eta theta", "iota kappa alpha"]
    mine = ["lambda mu beta", "nu xi omicron gamma"]
    keep = word_cache._keep
    interleaved: list[bool] = []

    def interleaving(*args: object) -> None:
        if not interleaved:
            interleaved.append(True)
            word_cache.read(tmp_path, first + others, ["h1", "h2", "o1", "o2"])
        keep(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(word_cache, "_keep", interleaving)
    made = word_cache.read(tmp_path, first + mine, ["h1", "h2", "m1", "m2"])
    assert interleaved
    assert [_spelled(made, t) for t in first + mine] == [
        pairs.word_set(t) for t in first + mine]
    monkeypatch.setattr(word_cache, "_keep", keep)
    texts = first + others + mine
    back = word_cache.read(tmp_path, texts, ["h1", "h2", "o1", "o2", "m1", "m2"])
    assert [_spelled(back, t) for t in texts] == [pairs.word_set(t) for t in texts]
    assert len(back.spelled) == len(set().union(*map(pairs.word_set, texts)))


def test_a_kept_set_naming_a_word_the_vocabulary_lacks_is_split_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged row (an id past the vocabulary, an id of a dropped word, a blob not a
    whole number of ids) is not used: its text is split again, never read as other words."""
    import sqlite3
    from array import array

    texts = ["alpha beta", "gamma delta", "epsilon zeta"]
    hashes = ["h1", "h2", "h3"]
    word_cache.read(tmp_path, texts, hashes)
    with sqlite3.connect(tmp_path / word_cache.NAME) as conn:
        ids = dict(conn.execute("SELECT word, id FROM vocab"))
        past = array(pairs.ID_CODE, [ids["alpha"], max(ids.values()) + 7]).tobytes()
        conn.execute("UPDATE word_sets SET ids = ? WHERE hash = 'h1'", (past,))
        conn.execute("DELETE FROM vocab WHERE word = 'gamma'")  # h2 names a dropped word
        conn.execute("UPDATE word_sets SET ids = ? WHERE hash = 'h3'", (b"abc",))
    split = []
    real = pairs.distinct_words
    monkeypatch.setattr(pairs, "distinct_words", lambda text: split.append(text) or real(text))
    got = word_cache.read(tmp_path, texts, hashes)
    assert [_spelled(got, t) for t in texts] == [pairs.word_set(t) for t in texts]
    assert sorted(split) == sorted(texts)


def test_a_kept_id_past_the_vocabulary_is_refused_when_a_split_numbers_that_id(
        tmp_path: Path) -> None:
    """A kept set naming an id past the vocabulary it was read with is damaged even when a
    text split before it in the same read gave that id to a new word (it named 'four')."""
    import sqlite3
    from array import array

    word_cache.read(tmp_path, ["alpha beta"], ["h1"])
    with sqlite3.connect(tmp_path / word_cache.NAME) as conn:
        ids = dict(conn.execute("SELECT word, id FROM vocab"))
        past = array(pairs.ID_CODE, [ids["alpha"], max(ids.values()) + 4]).tobytes()
        conn.execute("UPDATE word_sets SET ids = ? WHERE hash = 'h1'", (past,))
    texts = ["one two three four", "alpha beta"]
    got = word_cache.read(tmp_path, texts, ["h0", "h1"])
    assert [_spelled(got, t) for t in texts] == [pairs.word_set(t) for t in texts]


@pytest.mark.parametrize("damaged", [False, True])
def test_the_counts_read_fills_are_those_of_its_sets(tmp_path: Path, damaged: bool) -> None:
    """word_cache.read's counts: pairs.counts of every text's set, a repeated text counted
    again, the same order of ids (kept, made, and a damaged row split again)."""
    import sqlite3

    texts = ["alpha beta", "beta gamma", "alpha beta", "delta"]
    hashes = ["h1", "h2", "h3", "h4"]
    word_cache.read(tmp_path, texts[:2], hashes[:2])
    if damaged:
        with sqlite3.connect(tmp_path / word_cache.NAME) as conn:
            conn.execute("UPDATE word_sets SET ids = ? WHERE hash = 'h1'", (b"\xff" * 4,))
    counts: Counter[int] = Counter()
    got = word_cache.read(tmp_path, texts, hashes, counts=counts)
    expected = pairs.counts(got[t] for t in texts)
    assert list(counts.items()) == list(expected.items())
    assert [_spelled(got, t) for t in texts] == [pairs.word_set(t) for t in texts]
