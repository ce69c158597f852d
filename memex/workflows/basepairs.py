"""Near-duplicates of and contradictions with a large base, for a few new memories
(pure): exactly what `hygiene.duplicates_of` and `conflicts.among` (the new memories
as focus, rarity counted over base and new together) find, with the per-memory work
in Python done only for the base memories that could pair with a new one.

`among` over a base of thousands works out every memory's keys (`pair_keys`: a
Python pass over every word) and counts them all, to learn which keys are rare. With
a few new memories only their keys matter:

1. a sample (every `n / SAMPLE`-th base memory) is read in full: a key of a new
   memory held there by more than `pairs.RARE` memories is common for sure, and the
   sample's word counts order each new text's words, rarest first;
2. one word pass over the base (`pairs.word_set`, in C) and, per memory, two set
   intersections: with the words that give a still open key (its holders counted
   exactly, without the memory's other keys), and with the near-duplicate prefix
   words (a text at least t alike holds one of the `|x| - ceil(t|x|) + 1` words
   of x, whichever are chosen, so `duplicates_of` gets only those that do);
3. entries (tags, paths) are asked for only for holders of a rare key and for
   near-duplicate candidates; `conflicts.compare_pairs` compares the pairs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from memex.core import gcpause, model
from memex.workflows import conflicts, hygiene, pairs

SAMPLE = 512  # base memories whose keys are all worked out


@dataclass
class Base:
    texts: Sequence[str]  # per live base memory: its title, a newline and its body
    entry: Callable[[int], conflicts.Entry]  # its entry (what the gate reads)
    load: Callable[[int], model.Memory]  # its memory


@dataclass
class Found:
    near: list[list[tuple[int, float]]]  # per new memory: (base index, jaccard), in order
    contradictions: list[conflicts.Contradiction]  # (new id, base id), by base index
    index_of: dict[str, int] = field(default_factory=dict)  # base id -> its base index
    entries: set[int] = field(default_factory=set)  # base indexes whose entry was asked


def against(fresh: Sequence[model.Memory], base: Base, words: pairs.Words | None = None,
            sample: int = SAMPLE) -> Found:
    """The near-duplicates of each of `fresh` in the base, and the contradicting
    (fresh, base) pairs, as `conflicts.among(base + fresh, focus=fresh)` finds them."""
    with gcpause.paused():
        return _search(fresh, base, words if words is not None else pairs.Words(), sample)


def _search(fresh: Sequence[model.Memory], base: Base, words: pairs.Words,
            sample: int) -> Found:
    entries = [conflicts.Entry.of(m) for m in fresh]
    fresh_words = [words[e.text] for e in entries]
    fresh_keys = [conflicts.pair_keys(w) for w in fresh_words]
    df: Counter[str] = Counter()  # holders of each key of a new memory: new ones first
    for keys in fresh_keys:
        df.update(keys)
    every_word = frozenset().union(*fresh_words)
    count = len(base.texts)
    step = max(1, count // max(1, sample))
    word_df: Counter[str] = Counter()
    for index in range(0, count, step):
        found = words[base.texts[index]]
        word_df.update(every_word.intersection(found))
        df.update(df.keys() & conflicts.pair_keys(found))
    open_keys = {key for key, holders in df.items() if holders <= pairs.RARE}
    # exact counts of the open keys: start again, new memories only
    holders: dict[str, list[int]] = {key: [] for key in open_keys}
    found_sets = [words[text] for text in base.texts]  # the word pass
    giving: dict[str, list[str]] = {}  # word -> the open keys it gives (if any)
    for word in frozenset().union(*found_sets):
        given = [key for key in conflicts.word_keys(word) if key in open_keys]
        if given:
            giving[word] = given
    giving_words = frozenset(giving)
    compounds = [(pieces, [key for key in keys if key in open_keys])
                 for pieces, keys in conflicts.compound_keys() if open_keys.intersection(keys)]
    # prefix word -> the sizes of a base word set that can be alike to a new text
    # holding it among its prefix words
    sizes_for: dict[str, set[int]] = {}
    for found in fresh_words:
        alike = _alike_sizes(len(found))
        for word in _prefix(found, word_df):
            sizes_for.setdefault(word, set()).update(alike)
    prefix_words = frozenset(sizes_for)
    near_candidates: list[int] = []
    for index, found in enumerate(found_sets):
        hit = giving_words & found
        if hit or compounds:
            held: set[str] = set()
            for word in hit:
                held.update(giving[word])
            for pieces, given in compounds:
                if pieces <= found:
                    held.update(given)
            for key in held:
                holders[key].append(index)
        size = len(found)
        if any(size in sizes_for[word] for word in prefix_words & found):
            near_candidates.append(index)
    wanted = {key for key in open_keys
              if 1 < len(holders[key]) + sum(key in keys for keys in fresh_keys) <= pairs.RARE}
    asked: dict[int, conflicts.Entry] = {}

    def entry(index: int) -> conflicts.Entry:
        if index >= count:
            return entries[index - count]
        found = asked.get(index)
        if found is None:
            found = asked[index] = base.entry(index)
        return found

    def load(index: int) -> model.Memory:
        return base.load(index) if index < count else fresh[index - count]

    fresh_gates = [conflicts.gates(e.tags, e.paths) for e in entries]
    base_gates: dict[int, set[str]] = {}
    candidates: set[tuple[int, int]] = set()
    for n, keys in enumerate(fresh_keys):
        for key in keys & wanted:
            for index in holders[key]:
                gates = base_gates.get(index)
                if gates is None:
                    other = entry(index)
                    gates = base_gates[index] = conflicts.gates(other.tags, other.paths)
                if gates & fresh_gates[n]:
                    candidates.add((index, count + n))
    chosen = range(count, count + len(fresh))
    found_pairs = conflicts.compare_pairs(sorted(candidates), entry, load, chosen, {})
    known = [(index, words[base.texts[index]]) for index in near_candidates]
    near = hygiene.duplicates_of([e.text for e in entries], known)
    index_of = {entry(index).id: index for index in sorted(
        {i for pair in candidates for i in pair if i < count}
        | {i for found in near for i, _ in found})}
    return Found(near, found_pairs, index_of, set(asked))


def _alike_sizes(size: int) -> range:
    """The sizes of word sets that can be hygiene.NEAR_DUPLICATE alike to one of this
    size: those hygiene.duplicates_of's size window lets through."""
    threshold = hygiene.NEAR_DUPLICATE
    low = next(n for n in range(size + 1) if n >= threshold * size)
    high = size
    while size >= threshold * (high + 1):
        high += 1
    return range(low, high + 1)


def _prefix(found: frozenset[str], word_df: Counter[str]) -> frozenset[str]:
    """The |x| - ceil(t|x|) + 1 words of a new text the sample holds least: a base
    text at least t alike (hygiene.NEAR_DUPLICATE) holds one of them."""
    size = len(found) - math.ceil(hygiene.NEAR_DUPLICATE * len(found)) + 1
    return frozenset(sorted(found, key=lambda w: (word_df[w], w))[:size])
