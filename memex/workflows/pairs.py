"""Which pairs of memories the pairwise checks look at (pure).

Near-duplicates (`hygiene`) and contradictions (`conflicts`) compare memories two
by two; comparing every pair of a store grows with the square of its size. Both
start from one word pass per memory, `word_set` (every `\\w+` word, lower-cased),
kept in a `Words` cache so that a report running both checks reads each text once.

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

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence, Set

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


class Words(dict[str, frozenset[str]]):
    """text -> word_set(text), filled on first sight: one word pass per text for every
    check of one report (keep it for the report only: it holds the texts).

    Every set holds one string object per word for all the texts (the first seen): a
    store's sets then share a few thousand words instead of millions of copies, and the
    counts, rank lookups and intersections over them compare words by identity."""

    def __init__(self) -> None:
        super().__init__()
        self._spelling: dict[str, str] = {}  # word -> its one object
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

    def __missing__(self, text: str) -> frozenset[str]:
        words = _words(text)  # one set of them, of the shared objects (~15% less work)
        found = self[text] = frozenset(map(self._spelling.setdefault, words, words))
        return found

    def share(self, words: Iterable[str]) -> list[str]:
        """The one object of each of WORDS (made theirs when new): sets built of them
        elsewhere (a kept word set) share the objects of the sets made here."""
        spellings = list(words)
        return list(map(self._spelling.setdefault, spellings, spellings))

    def spelled(self) -> list[str]:
        """Every word of the sets made or shared here, once, in the order first seen."""
        return list(self._spelling)


def paired_text(title: str, body: str) -> str:
    """What the pair passes compare of a memory: its title, a newline and its body.
    Near-duplicates, contradictions and review all key their one word pass on it."""
    return f"{title}\n{body}"


Progress = Callable[[int, int], None]


def counts(sets: Iterable[Set[str]]) -> Counter[str]:
    """How many of the sets hold each word (or key)."""
    found: Counter[str] = Counter()
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
