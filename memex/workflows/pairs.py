"""Which pairs of memories the pairwise checks look at (pure).

Near-duplicates (`hygiene`) and contradictions (`conflicts`) compare memories two
by two; comparing every pair of a store grows with the square of its size. Both
start from one word pass per memory, `word_set` (every `\\w+` word, lower-cased),
kept for the report so that a report running both checks reads each text once: as the
ids of its words (`WordIds`: health, clean, conflicts; the word cache keeps the ids), or
as a set of the words (`Words`: a few new memories against a base, basepairs).

Contradictions then go through `rare_pairs`: two memories are compared only when
they share a gate (a tag, or the top folder of their paths) and a rare key, one that
at most `RARE` of the memories looked at hold. A word (or rule subject) that
hundreds of memories share says little about whether two of them speak of the same
thing, and the pairs it would bring grow with the square of the store; the pairs of
rare keys are bounded by `RARE` times the number of keys, so the pass grows
linearly. Near-duplicates (`hygiene.duplicate_pairs`) take their candidate pairs from
the words at most `RARE` memories hold the same way (and from the small sets, compared
exactly: `hygiene.is_candidate`).
"""

from __future__ import annotations

import contextlib
import operator
import re
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence, Set
from typing import TypeVar

# A key held by more memories than this is common: it brings no pair.
RARE = 32

_WORD = re.compile(r"\w+", re.UNICODE)
# ASCII bytes: a word character (`\w`: letters, digits, _) lower-cased, any other a space
_ASCII_WORDS = bytes(
    b + 32 if 65 <= b <= 90 else b if 48 <= b <= 57 or 97 <= b <= 122 or b == 95 else 32
    for b in range(256))


def _words(text: str) -> list[str]:
    """Every word of `text` (`\\w+`, lower-cased), repeats included."""
    if text.isascii():  # the same words as the pattern, by a byte table and a split
        return text.encode().translate(_ASCII_WORDS).decode().split()
    return list(map(str.lower, _WORD.findall(text)))


def word_set(text: str) -> frozenset[str]:
    """Every word of `text` (`\\w+`, lower-cased): what near-duplicates compare."""
    return frozenset(_words(text))


class _PairedTexts:
    """paired_text(title, body), made once per report (`text`)."""

    def __init__(self) -> None:
        super().__init__()
        self._texts: dict[tuple[str, str], str] = {}  # (title, body) -> its paired text

    def text(self, title: str, body: str) -> str:
        """paired_text(title, body), made once per report: every pass then keys its word
        set on the same object (at 100,000 memories of ~3 KB, each further copy was
        ~300 MB made, hashed and compared, and two of them were held to the end). The
        key's hashes are the title's and body's own, kept by those strings."""
        key = (title, body)
        found = self._texts.get(key)
        if found is None:
            found = self._texts[key] = paired_text(title, body)
        return found


class Words(_PairedTexts, dict[str, frozenset[str]]):
    """text -> word_set(text), filled on first sight: one word pass per text for every
    check of one report (keep it for the report only: it holds the texts).

    Every set holds one string object per word for all the texts (the first seen): a
    store's sets then share a few thousand words instead of millions of copies, and the
    counts, rank lookups and intersections over them compare words by identity."""

    def __init__(self) -> None:
        super().__init__()
        self._spelling: dict[str, str] = {}  # word -> its one object

    def __missing__(self, text: str) -> frozenset[str]:
        words = _words(text)  # one set of them, of the shared objects (~15% less work)
        found = self[text] = frozenset(map(self._spelling.setdefault, words, words))
        return found


def distinct_words(text: str) -> set[str]:
    """word_set(text) as a set (the word pass of pairs.WordIds)."""
    return set(_words(text))


# A word id's array code: 4 bytes each, native order.
ID_CODE = "I"


class WordIds(_PairedTexts, dict[str, "array[int]"]):
    """text -> its word set as the ids of its words (an array: ~0.8 KB for the ~210
    words of a 3 KB memory, where a frozenset of the words is ~8.4 KB), over one
    vocabulary (`spelled`: id -> word), filled on first sight: the pair passes of a
    report (counts, rare words, candidate pairs) work on the ids, and only the sets
    they compare are made (`frozen`). Keep it for the report only: it holds the texts.
    A word's id is the word cache's when the vocabulary came from it (word_cache)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, int] = {}  # word -> id
        self.spelled: dict[int, str] = {}  # id -> word
        self.next_id = 0  # the next new word's id

    def forget(self) -> None:
        """Drop every set and word (a vocabulary read in part)."""
        self.clear()
        self.ids.clear()
        self.spelled.clear()
        self.next_id = 0

    def know(self, vocabulary: Iterable[tuple[int, str]]) -> None:
        """Take these (id, word) as the ids of those words (a kept vocabulary)."""
        for number, word in vocabulary:
            self.ids[word] = number
            self.spelled[number] = word
            if number >= self.next_id:
                self.next_id = number + 1

    def _number(self, word: str) -> int:
        found = self.ids.get(word)
        if found is None:
            found = self.next_id
            self.know(((found, word),))
        return found

    def __missing__(self, text: str) -> array[int]:
        found = self[text] = self.split(text)
        return found

    def split(self, text: str) -> array[int]:
        """The ids of word_set(text)'s words (new words numbered)."""
        words = distinct_words(text)
        known = self.ids
        if len(words) > 1:  # one C call for all the lookups
            lookup = operator.itemgetter(*words)
            with contextlib.suppress(KeyError):  # a word seen first: numbered below
                return array(ID_CODE, lookup(known))
        for word in words.difference(known):
            self._number(word)
        if len(words) > 1:
            return array(ID_CODE, lookup(known))
        return array(ID_CODE, map(known.__getitem__, words))

    def frozen(self, text: str) -> frozenset[int]:
        """The ids of TEXT's words as a set (for the sets a pass compares)."""
        return frozenset(self[text])


def paired_text(title: str, body: str) -> str:
    """What the pair passes compare of a memory: its title, a newline and its body.
    Near-duplicates, contradictions and review all key their one word pass on it."""
    return f"{title}\n{body}"


Progress = Callable[[int, int], None]


Word = TypeVar("Word", bound=Hashable)


def counts(sets: Iterable[Iterable[Word]]) -> Counter[Word]:
    """How many of the sets (of words, keys or word ids: each once) hold each."""
    found: Counter[Word] = Counter()
    for words in sets:
        found.update(words)
    return found


def rare_pairs(keys: Sequence[Set[str]], gates: Sequence[Collection[str]],
               focus: Set[int] | None = None, rare: int = RARE) -> set[tuple[int, int]]:
    """(i, j), i < j, of the items that share a gate and a key held by at most `rare`
    items (of all those given). With `focus`, only pairs with one of those items."""
    df: Counter[str] = Counter()
    for item_keys in keys:
        df.update(item_keys)
    wanted = {key for key, count in df.items() if 1 < count <= rare}
    if focus is not None:  # only the keys a focus item holds can bring its pairs
        held: set[str] = set()
        for index in focus:
            held.update(keys[index])
        wanted &= held
        if len(focus) == 1:  # a write's check: no postings to build
            return _pairs_of(next(iter(focus)), keys, gates, wanted)
    postings: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, item_keys in enumerate(keys):
        found = wanted.intersection(item_keys)
        if not found:
            continue
        for gate in gates[index]:
            for key in found:
                postings[(gate, key)].append(index)
    out: set[tuple[int, int]] = set()
    for members in postings.values():
        if len(members) < 2:
            continue
        if focus is None:
            for x in range(len(members)):
                first = members[x]
                out.update((first, second) for second in members[x + 1:])
        else:
            for x in members:
                if x in focus:
                    out.update((x, y) if x < y else (y, x) for y in members if y != x)
    return out


def _pairs_of(x: int, keys: Sequence[Set[str]], gates: Sequence[Collection[str]],
              wanted: set[str]) -> set[tuple[int, int]]:
    """rare_pairs' pairs with the one focus item X (WANTED: the rare keys X holds):
    X and each item sharing a gate and one of WANTED with it, as the postings pair
    them, tested item by item (a capture's check: a thousand items, one focus)."""
    mine = set(gates[x])
    out: set[tuple[int, int]] = set()
    if not wanted or not mine:
        return out
    for y, item_keys in enumerate(keys):
        if y != x and not wanted.isdisjoint(item_keys) and not mine.isdisjoint(gates[y]):
            out.add((x, y) if x < y else (y, x))
    return out
