"""Keeping a store true and small: retention decay, ROT candidates, the health report.

Retention follows OpenMemory Plus's Ebbinghaus model: e^(-t/S) with t the days since
the last access and S = 30 + 10 x accesses + 50 if pinned, lifted towards 1 by an
importance boost (pinned 0.5, high importance 0.3, high confidence 0.2, frequent
use 0.1; at most 0.5). Access statistics come from `access_stats` and are never
written into memory files: losing them loses nothing a person decided.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import math
import operator
import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memex.core import clock, gcpause, lifecycle, model
from memex.core.errors import MemexError
from memex.storage import store, usage
from memex.storage.homes import Workspace
from memex.workflows import conflicts, freshness, hygiene_cache, pairs, word_cache

if TYPE_CHECKING:  # health writes nothing: the writer (and its secret rules) loads on use
    from memex.workflows import writes

AccessStats = dict[str, tuple[int, str]]
Key = TypeVar("Key")
Word = TypeVar("Word", bound=Hashable)  # a word, or its id (pairs.WordIds)

# Operations in the usage log that are not a person or agent reading a memory.
# what counts as using a memory for its strength: reading it, not listing or writing it
ACCESS_OPS = frozenset({usage.Op.READ, usage.Op.SEARCH, usage.Op.CONTEXT})

BASE_STRENGTH = 30.0
CONFIDENCE_VALUE = {"high": 1.0, "medium": 0.7, "low": 0.4}
STATE_LIMITS = ((0.7, "active"), (0.3, "aging"), (0.1, "stale"), (0.0, "cleanup"))
UNUSED_DAYS = 90  # long unaccessed: retention below 0.1 and this many days unused
STALE_HEAD_DAYS = 60
NEAR_DUPLICATE = 0.8
# The near-duplicate join's k: a candidate pair must show this many shared words in its
# prefixes (fewer when a set is too small to hold them). A larger k lengthens the
# prefixes by a word or two and leaves far fewer pairs to compare.
SHARED_IN_PREFIX = 4
# A near-duplicate pair of sets that share no rare word is compared only when both have
# at most this many words (duplicate_pairs); a small set's prefix is a few words long.
SMALL = 32
_TRIVIAL = re.compile(
    r"^(?:test(?:ing)?(?: memory| note| entry)?|this is a test|tmp|temp|asdf+|qwerty|foo|bar|"
    r"baz|foobar|hello(?: world)?|ok(?:ay)?|done|works|it works|fixed|wip|todo|lorem ipsum"
    r".*|测试.*|test(?:ing)? \d.*)[\s\W\d]*$",
    re.IGNORECASE,
)
TINY_CHARS = 10
# Necessary conditions, checked on the body as it is, before `trivial_reason` collapses
# its whitespace (a list of every word of a 3 KB body): ten non-space characters rule
# out tiny, and a text _TRIVIAL matches starts with the first two letters of one of its
# choices (none of which holds a space). str.split() and `\s` agree on what a space is.
_NOT_TINY = re.compile(rf"(?:\s*\S){{{TINY_CHARS}}}")
_TRIVIAL_START = re.compile(
    r"\s*(?:te|th|tm|as|qw|fo|ba|he|ok|do|it|fi|wi|to|lo|wo|测试)", re.IGNORECASE)
# A wide (CJK) character carries about what a short English word does: it counts as
# this many characters toward TINY_CHARS, so "我喜欢用 vim" is not tiny but "好的" is.
WIDE_CHAR_WEIGHT = 3


# ---------------------------------------------------------------- access statistics


def access_stats(ws: Workspace) -> AccessStats:
    """id -> (access count, last access) from the usage log, for this project and personal.

    A personal memory follows its owner from project to project, so its accesses
    count wherever they happened. (The index will serve these later; the shape stays.)
    """
    personal = store.memory_ids(ws.personal_dir)
    here: dict[str, list[object]] = {}
    for entry in usage.entries(ws.home):
        if entry.get("op") not in ACCESS_OPS:
            continue
        ids = entry.get("ids")
        at = entry.get("at")
        if not isinstance(ids, list) or not isinstance(at, str):
            continue
        this_repo = entry.get("repo_id") == ws.repo_id
        for memory_id in ids:
            if not isinstance(memory_id, str) or not (this_repo or memory_id in personal):
                continue
            slot = here.setdefault(memory_id, [0, ""])
            slot[0] = int(str(slot[0])) + 1
            if at > str(slot[1]):
                slot[1] = at
    return {k: (int(str(v[0])), str(v[1])) for k, v in here.items()}


# ---------------------------------------------------------------- retention


@dataclass(frozen=True)
class Retention:
    """How much a memory is still used: its retention value and state."""

    value: float
    state: str  # active | aging | stale | cleanup
    days_unused: float
    accesses: int


def _days_between(earlier: str, later: datetime) -> float:
    if not earlier:
        return 0.0
    try:
        moment = clock.parse_time(earlier)
    except ValueError:
        return 0.0
    return max(0.0, (later - moment).total_seconds() / 86400)


_IMPORTANCE_BOOST = {"high": 0.3, "normal": 0.0, "low": 0.0}


def retention(memory: model.Memory, accesses: int, last_access: str, now: datetime
              ) -> Retention:
    """How well a memory is "remembered" now, 0..1 (see the module docstring)."""
    last = max(last_access or "", memory.updated_at or "", memory.created_at or "")
    days = _days_between(last, now)
    strength = BASE_STRENGTH + 10 * accesses + (50 if memory.pinned else 0)
    base = math.exp(-days / strength)
    boost = 0.5 if memory.pinned else 0.0
    boost += _IMPORTANCE_BOOST.get(memory.importance, 0.0)
    boost += 0.2 if memory.confidence == "high" else 0.0
    boost += 0.1 if accesses > 5 else 0.0
    boost = min(boost, 0.5)
    value = min(1.0, max(0.0, base + boost * (1 - base)))
    state = STATE_LIMITS[-1][1]
    for limit, name in STATE_LIMITS:
        if value >= limit:
            state = name
            break
    return Retention(value, state, days, accesses)


def retentions(memories: Iterable[model.Memory], stats: AccessStats, now: datetime
               ) -> dict[str, Retention]:
    never = (0, "")
    return {m.id: retention(m, *stats.get(m.id, never), now) for m in memories}


# ---------------------------------------------------------------- ROT candidates


@dataclass
class Candidate:
    """A memory `clean` offers to retire, with why."""

    item: store.Loaded
    group: str  # redundant | obsolete | trivial
    reason: str
    keep: str | None = None  # redundant: the memory that stays

    @property
    def id(self) -> str:
        return self.item.id

    @property
    def shared(self) -> bool:
        return self.item.home.in_git

    def as_json(self) -> dict[str, object]:
        m = self.item.memory
        return {"id": m.id, "group": self.group, "reason": self.reason, "keep": self.keep,
                "scope": m.scope, "home": self.item.home.kind, "status": m.status,
                "title": m.title or m.summary, "path": str(self.item.path)}


def near_duplicates(texts: Sequence[str], threshold: float = NEAR_DUPLICATE,
                    words: pairs.Words | None = None, counts: Counter[str] | None = None
                    ) -> list[tuple[int, int, float]]:
    """Pairs (i, j, jaccard) of texts whose word sets are at least `threshold` alike.

    A prefix-filtered set-similarity join: words are ordered rarest first, and two
    sets that reach the threshold must share SHARED_IN_PREFIX of their first few words,
    so only pairs sharing several rare words are compared (exact, not sampled).
    `words` caches the word sets (pairs.word_set); `counts`, pairs.counts of their sets
    or of more (any superset of them), gives the order of rarity.
    """
    texts_words = words if words is not None else pairs.Words()
    with gcpause.paused():
        return _near_duplicates([texts_words[t] for t in texts], threshold, counts)


def _near_duplicates(sets: Sequence[frozenset[Word]], threshold: float,
                     counts: Counter[Word] | None) -> list[tuple[int, int, float]]:
    # A prefix join with k shared words. Words are ranked rarest first (any fixed order
    # is exact; the rarest keep postings short). Sets x, y (|y| <= |x|) whose overlap
    # reaches a = ceil(t/(1+t)(|x|+|y|)) hold their first k common words (k <= a) within
    # x's first |x| - a + k and y's first |y| - a + k words; a >= t|x| and a >= 2t/(1+t)|y|
    # bound both lengths. Sets go smallest first: each gathers the smaller sets held by
    # the postings of its prefix words (only sizes from t|x| up to the largest whose
    # first k common words can still reach that position), keeps those met k times and
    # indexes its own prefix. Only those are compared. Words of one set are in no other:
    # not indexed. A posting entry is one integer, size << shift | set, so a posting
    # sorts by size and one bisect finds a size window.
    freq = counts if counts is not None else pairs.counts(sets)
    rank = {w: n for n, w in enumerate(sorted(freq, key=freq.__getitem__))}  # all of sets
    by_rank = rank.__getitem__
    alone = sum(1 for count in freq.values() if count == 1)  # ranks below: one set's words
    share = threshold / (1 + threshold)  # jaccard t needs an overlap of share * (|x| + |y|)
    most_k = SHARED_IN_PREFIX
    shift = len(sets).bit_length()
    which = (1 << shift) - 1  # an entry's set

    def shared_needed(size: int) -> int:  # k for a pair whose smaller set has `size` words
        return max(1, min(most_k, math.ceil(2 * share * size - _SLACK)))

    # the entries of sets whose pairs need fewer than most_k shared words, by that number
    fewer: dict[int, set[int]] = {}
    for i, s in enumerate(sets):
        if s and (k := shared_needed(len(s))) < most_k:
            fewer.setdefault(k, set()).add(len(s) << shift | i)
    order = sorted((i for i, s in enumerate(sets) if s), key=lambda i: len(sets[i]))
    # word rank -> the entries of the sets indexed by it, in size order; sets smaller
    # than the current one's least partner are cut from the front (sizes only grow)
    index: dict[int, list[int]] = {}
    out: list[tuple[int, int, float]] = []
    for i in order:
        mine = sets[i]
        size = len(mine)
        ranks = sorted(map(by_rank, mine))
        least = math.ceil(threshold * size - _SLACK)  # smaller: cannot reach t
        probe = min(size, size - least + most_k)
        indexed = min(size, size - math.ceil(2 * share * size - _SLACK) + shared_needed(size))
        first = bisect.bisect_left(ranks, alone)
        # up to this position every smaller set may hold one of the first k common words
        whole = size + most_k - 1 - 2 * share * size
        low = least << shift
        met: list[int] = []  # every smaller set, once per posting of my prefix holding it
        for position, posting in enumerate(map(index.get, ranks[first:probe]), first):
            if posting is None:
                continue
            if posting[0] < low:
                cut = bisect.bisect_left(posting, low)
                if cut == len(posting):
                    del index[ranks[position]]
                    continue
                del posting[:cut]
            if position <= whole:
                met += posting
            else:  # the largest size whose first k common words reach this position
                most = math.floor((size - position + most_k - 1) / share - size + _SLACK)
                met += posting[:bisect.bisect_left(posting, (most + 1) << shift)]
        entry = size << shift | i
        for word in ranks[first:indexed]:
            posting = index.get(word)
            if posting is None:
                index[word] = [entry]
            else:
                posting.append(entry)
        met.sort()  # a set met k times: k equal neighbours
        found = set(itertools.compress(met, map(operator.eq, met, met[most_k - 1:])))
        for k, small in fewer.items():  # small sets need fewer shared words
            found.update(small.intersection(
                itertools.compress(met, map(operator.eq, met, met[k - 1:]))))
        for j in (e & which for e in found):
            theirs = sets[j]
            shared = len(mine & theirs)
            score = shared / (size + len(theirs) - shared)  # the union's size
            if score >= threshold:
                out.append((j, i, score) if j < i else (i, j, score))
    out.sort(key=lambda pair: (pair[1], pair[0]))
    return out


# Float rounding must never cut a bound: every bound is widened by this much.
_SLACK = 1e-9


def duplicates_of(texts: Sequence[str], others: Sequence[tuple[Key, frozenset[str]]],
                  threshold: float = NEAR_DUPLICATE) -> list[list[tuple[Key, float]]]:
    """For each text, the (key, jaccard) of the (key, word set) others at least
    `threshold` alike: `near_duplicates`' measure for a few new texts against a set.
    Exact: an other that reaches the threshold holds one of a text's
    |x| - ceil(t|x|) + 1 words that the fewest others hold, so only those are compared."""
    mine = [pairs.word_set(text) for text in texts]
    every = frozenset().union(*mine)
    df: Counter[str] = Counter()
    for _, theirs in others:
        df.update(every.intersection(theirs))
    prefixes = []
    for words in mine:
        ordered = sorted(words, key=lambda w: (df[w], w))
        prefixes.append(frozenset(ordered[:len(words) - math.ceil(threshold * len(words)) + 1]))
    probe = frozenset().union(*prefixes)
    holding: dict[str, list[int]] = {}
    for n, (_, theirs) in enumerate(others):
        for word in probe.intersection(theirs):
            holding.setdefault(word, []).append(n)
    out: list[list[tuple[Key, float]]] = []
    for words, prefix in zip(mine, prefixes, strict=True):
        size = len(words)
        found: list[tuple[Key, float]] = []
        candidates = sorted(set().union(*(holding.get(w, ()) for w in prefix)))
        for n in candidates:
            key, theirs = others[n]
            other_size = len(theirs)
            if (size if size < other_size else other_size) < threshold * (
                    other_size if size < other_size else size):
                continue
            shared = len(words & theirs)
            score = shared / (size + other_size - shared)
            if score >= threshold:
                found.append((key, score))
        out.append(found)
    return out


def _keeper_rank(item: store.Loaded, stats: AccessStats) -> tuple[int, int, int, str, str]:
    m = item.memory
    reviewed = {"published": 3, "approved": 2, "proposed": 1}.get(m.review_state or "", 0)
    return (reviewed, int(m.pinned), stats.get(m.id, (0, ""))[0], m.updated_at, m.id)


def text_size(text: str) -> int:
    """Length with wide (CJK, fullwidth) characters weighted, fair to every script."""
    return sum(WIDE_CHAR_WEIGHT if unicodedata.east_asian_width(c) in ("W", "F") else 1
               for c in text)


def trivial_reason(memory: model.Memory) -> str | None:
    body = memory.body
    if _NOT_TINY.match(body) and not _TRIVIAL_START.match(body) and not _TRIVIAL.match(
            memory.title.strip()):
        return None  # neither tiny nor trivial, whatever its spaces
    text = " ".join(body.split())
    # Weighting never shrinks a size, so only texts short already need the per-char pass.
    if len(text) < TINY_CHARS and text_size(text) < TINY_CHARS:
        return f"tiny: {len(text)} characters"
    if _TRIVIAL.match(text) or (_TRIVIAL.match(memory.title.strip()) and len(text) < 40):
        return "test or placeholder content"
    return None


def offerable(items: Sequence[store.Loaded]) -> list[store.Loaded]:
    """What clean may offer: live memories that no person pinned."""
    return [i for i in items if i.memory.is_live and not i.memory.pinned]


def duplicate_pairs(live: Sequence[store.Loaded], words: pairs.WordIds | None = None,
                    counts: Counter[int] | None = None) -> list[tuple[str, str, float]]:
    """(id, id, jaccard) of near-duplicates within each scope: the pairs at least
    NEAR_DUPLICATE alike that `is_candidate` lets through (`counts`: pairs.counts of
    their word ids or of more, when the caller has it)."""
    texts = words if words is not None else pairs.WordIds()
    sets = [texts[texts.text(i.memory.title, i.memory.body)] for i in live]
    if counts is None:
        counts = pairs.counts(sets)
    rare = frozenset(word for word, count in counts.items() if count <= pairs.RARE)
    by_scope: dict[str, list[int]] = {}
    for n, item in enumerate(live):
        by_scope.setdefault(item.memory.scope, []).append(n)
    out: list[tuple[str, str, float]] = []
    with gcpause.paused():
        for group in by_scope.values():
            for x, y, score in _candidate_duplicates([sets[n] for n in group], rare, counts):
                out.append((live[group[x]].id, live[group[y]].id, score))
    return out


def _prefix_size(size: int, threshold: float = NEAR_DUPLICATE) -> int:
    """How many of a set's rarest words a set at least `threshold` alike holds one of."""
    return size - math.ceil(threshold * size - _SLACK) + 1


def is_candidate(x: frozenset[Word], y: frozenset[Word], rare: frozenset[Word]) -> bool:
    """Whether `duplicate_pairs` finds two word sets at least NEAR_DUPLICATE alike: they
    share a rare word (held by at most pairs.RARE of the memories), or both have at
    most SMALL words. Lost: two larger sets alike only in words many memories hold."""
    return (len(x) <= SMALL and len(y) <= SMALL) or not rare.isdisjoint(x & y)


def _candidate_duplicates(sets: Sequence[Collection[int]], rare: frozenset[int],
                          counts: Counter[int], threshold: float = NEAR_DUPLICATE
                          ) -> list[tuple[int, int, float]]:
    # The pairs sharing a rare word come from its holders (at most pairs.RARE each: the
    # count of pairs grows with the store, not its square). Two sets alike enough share
    # one of their first _prefix_size words in any one order of all words (the prefix
    # filter's rule); in the order (count, word) rare words come first. So a set whose
    # prefix is all rare words is found through those alone, and a set with a common
    # word in its prefix holds all its rare words there: each set is a holder of its
    # prefix's rare words only. The small sets with a common word in their prefix go
    # through the exact prefix join among themselves (their prefixes are a few words).
    # SETS hold word ids, each once (pairs.WordIds): a set is made only of those compared.
    holders: dict[int, list[int]] = {}
    small: list[int] = []
    for i, words in enumerate(sets):
        held = rare.intersection(words) if rare else frozenset()
        prefix = _prefix_size(len(words))
        leading: Iterable[int] = held
        if len(held) > prefix:
            leading = sorted(held, key=lambda word: (counts[word], word))[:prefix]
        elif len(words) <= SMALL and len(held) < prefix:
            small.append(i)
        for word in leading:
            holders.setdefault(word, []).append(i)
    found: dict[tuple[int, int], float] = {}
    for x, y, score in _near_duplicates([frozenset(sets[i]) for i in small], threshold,
                                        counts):
        found[(small[x], small[y])] = score
    candidates: set[tuple[int, int]] = set()
    for members in holders.values():
        for at, first in enumerate(members):
            candidates.update((first, second) for second in members[at + 1:])
    made: dict[int, frozenset[int]] = {}
    for i, j in candidates - found.keys():
        size, other_size = len(sets[i]), len(sets[j])
        if (size if size < other_size else other_size) < threshold * (
                other_size if size < other_size else size):
            continue  # jaccard <= smaller / larger size
        mine = made.get(i)
        if mine is None:
            mine = made[i] = frozenset(sets[i])
        shared = len(mine.intersection(sets[j]))
        score = shared / (size + other_size - shared)
        if score >= threshold:
            found[(i, j)] = score
    out = [(i, j, score) for (i, j), score in found.items()]
    out.sort(key=lambda pair: (pair[1], pair[0]))
    return out


def update_duplicate_pairs(previous: Sequence[tuple[str, str, float]],
                           live: Sequence[store.Loaded], touched: set[str],
                           threshold: float = NEAR_DUPLICATE,
                           words: pairs.WordIds | None = None, counts: Counter[int] | None = None
                           ) -> list[tuple[str, str, float]]:
    """`duplicate_pairs` for the same memories, given its earlier result and which ids
    changed: only pairs with a changed memory are compared again (those `is_candidate`
    lets through; `counts` as for duplicate_pairs)."""
    out = [p for p in previous if p[0] not in touched and p[1] not in touched]
    last = {i.id: i for i in live}  # a duplicated id: its last copy's words, as ever
    texts = words if words is not None else pairs.WordIds()
    if counts is None:
        counts = pairs.counts(texts[texts.text(i.memory.title, i.memory.body)] for i in live)
    rare = frozenset(word for word, count in counts.items() if count <= pairs.RARE)
    made: dict[str, frozenset[int]] = {}

    def ids_of(memory_id: str) -> array[int]:
        memory = last[memory_id].memory
        return texts[texts.text(memory.title, memory.body)]

    def words_of(memory_id: str) -> frozenset[int]:
        # a set only of the memories compared (in a changed one's scope, of a size alike)
        found = made.get(memory_id)
        if found is None:
            found = made[memory_id] = frozenset(ids_of(memory_id))
        return found

    done: set[str] = set()
    for item in live:
        if item.id not in touched:
            continue
        mine = words_of(item.id)
        size = len(mine)
        for other in live:
            if other.id == item.id or other.id in done or other.memory.scope != \
                    item.memory.scope:
                continue
            other_size = len(ids_of(other.id))
            # jaccard <= smaller / larger size: a pair too unequal in size cannot reach it
            if (size if size < other_size else other_size) < threshold * (
                    other_size if size < other_size else size):
                continue
            theirs = words_of(other.id)
            union = mine | theirs
            if union and len(mine & theirs) / len(union) >= threshold and is_candidate(
                    mine, theirs, rare):
                out.append((other.id, item.id, len(mine & theirs) / len(union)))
        done.add(item.id)
    return out


def rot_candidates(items: Sequence[store.Loaded], stats: AccessStats, now: datetime,
                   duplicates: Sequence[tuple[str, str, float]] | None = None,
                   marks: dict[str, Retention] | None = None) -> list[Candidate]:
    """ROT among live memories; pinned ones are a person's keep and never offered.

    `duplicates` are precomputed `duplicate_pairs` (a cache may hold them); `marks`
    the `retentions` of (at least) the `offerable` items (health has them already).
    """
    at = clock.format_time(now)
    live = offerable(items)
    if marks is None:
        marks = retentions((i.memory for i in live), stats, now)
    found: dict[str, Candidate] = {}

    def offer(candidate: Candidate) -> None:
        found.setdefault(candidate.id, candidate)

    # The most telling reason wins: a date that passed, then trivial content, then a
    # duplicate, then disuse.
    for item in live:
        m = item.memory
        if lifecycle.is_expired(m, at):
            offer(Candidate(item, "obsolete", f"expired at {m.expires_at}"))
        elif m.valid_until and m.valid_until <= at:
            offer(Candidate(item, "obsolete", f"no longer true since {m.valid_until} "
                                              "(valid_until)"))
    for item in live:
        reason = trivial_reason(item.memory)
        if reason:
            offer(Candidate(item, "trivial", reason))
    by_id = {i.id: i for i in live}
    for id_a, id_b, score in duplicates if duplicates is not None else duplicate_pairs(live):
        a, b = by_id.get(id_a), by_id.get(id_b)
        if a is not None and b is not None:
            keep, drop = sorted((a, b), key=lambda i: _keeper_rank(i, stats), reverse=True)
            same = model.normalised_text(a.memory.body) == model.normalised_text(b.memory.body)
            what = "same text as" if same else f"near-duplicate ({score:.0%} same words) of"
            if drop.id not in found and keep.id not in found:
                offer(Candidate(drop, "redundant", f"{what} {keep.id[:10]}", keep=keep.id))
    for item in live:
        m = item.memory
        ret = marks[m.id]
        if ret.value < 0.1 and ret.days_unused >= UNUSED_DAYS:
            offer(Candidate(item, "obsolete", f"not used for {int(ret.days_unused)} days "
                                              f"(retention {ret.value:.2f})"))
        elif m.supersedes and ret.value < 0.3 and ret.days_unused >= STALE_HEAD_DAYS:
            offer(Candidate(item, "obsolete",
                            f"stale head of a revised chain (supersedes {m.supersedes[:10]}): "
                            f"not used for {int(ret.days_unused)} days "
                            f"(retention {ret.value:.2f})"))
    order = {"redundant": 0, "obsolete": 1, "trivial": 2}
    return sorted(found.values(), key=lambda c: (order[c.group], c.id))


def retire(ws: Workspace, candidate: Candidate) -> writes.WriteResult:
    """Retire (archive) a candidate, the reason kept in its status_history."""
    from memex.workflows import writes

    note = f"clean: {candidate.group}: {candidate.reason}"
    return writes.set_status(ws, candidate.id, "archived", note=note)


def delete(ws: Workspace, candidate: Candidate) -> Path:
    """Delete a personal or outbox candidate's file (shared ones are only retired)."""
    if candidate.shared:
        raise MemexError(f"{candidate.id} is shared: it is retired, never deleted, by clean")
    from memex.workflows import writes

    writes.delete(ws, candidate.id)
    return candidate.item.path


# ---------------------------------------------------------------- pull staleness


@dataclass
class PullState:
    """What health shows of the last fetch; `stale` is freshness's one rule."""

    has_remote: bool
    last_fetch: str | None
    age_days: float | None  # None: never fetched
    stale_after_days: float
    stale: bool

    def as_json(self) -> dict[str, object]:
        return {"has_remote": self.has_remote, "last_fetch": self.last_fetch,
                "age_days": None if self.age_days is None else round(self.age_days, 1),
                "stale_after_days": self.stale_after_days, "stale": self.stale}


def pull_state(ws: Workspace, now: datetime) -> PullState:
    """The last fetch (FETCH_HEAD, worktree or common dir) and whether it is stale."""
    state = freshness.freshness(ws, now)
    limit = state.stale_after.total_seconds() / 86400
    has_remote = ws.repo is not None and any(
        k.startswith("remote.") and k.endswith(".url") for k in ws.config)
    if state.last_fetch is None:
        return PullState(has_remote, None, None, limit, state.stale)
    age = max(0.0, (now - state.last_fetch).total_seconds() / 86400)
    return PullState(has_remote, clock.format_time(state.last_fetch), age, limit, state.stale)


# ---------------------------------------------------------------- health


@dataclass
class Health:
    """The health report's counts and findings."""

    total: int
    by_scope: dict[str, int]
    by_status: dict[str, int]
    by_review_state: dict[str, int]
    outbox: int
    quarantined: int
    legacy: int
    pull: PullState
    parts: dict[str, float]
    score: int
    grade: str
    rot: int
    conflicts: int
    retention_states: dict[str, int]
    next_steps: list[str] = field(default_factory=list)
    outbox_private: int = 0  # of `outbox`: visibility private, never submitted

    def as_json(self) -> dict[str, object]:
        return {
            "score": self.score, "grade": self.grade,
            "parts": {k: round(v, 3) for k, v in self.parts.items()},
            "total": self.total, "by_scope": self.by_scope, "by_status": self.by_status,
            "by_review_state": self.by_review_state, "outbox": self.outbox,
            "outbox_private": self.outbox_private,
            "retention": self.retention_states, "rot_candidates": self.rot,
            "open_conflicts": self.conflicts, "quarantined": self.quarantined,
            "v1_files": self.legacy, "pull": self.pull.as_json(),
            "next_steps": self.next_steps,
        }


def _conflicts_of(data: list[dict[str, Any]]) -> list[conflicts.Contradiction]:
    return [conflicts.Contradiction(str(c["a"]), str(c["b"]),
                               [conflicts.Reason(r["rule"], r["detail"]) for r in c["reasons"]],
                               bool(c["acknowledged"])) for c in data]


def cached_duplicates(snap: hygiene_cache.HygieneCache, words: pairs.WordIds | None = None,
                      counts: Counter[int] | None = None) -> list[tuple[str, str, float]]:
    """`duplicate_pairs` of the snapshot's offerable memories, from its cache when it can."""
    duplicates = snap.cached("duplicates")
    if duplicates is None:
        live = offerable(snap.items)
        if counts is None:  # rarity among all live memories, as health counts it
            words = words if words is not None else pairs.WordIds()
            counts = pairs.counts(words[words.text(i.memory.title, i.memory.body)]
                                  for i in snap.items
                                  if i.memory.is_live)
        earlier = snap.previous("duplicates")
        duplicates = (update_duplicate_pairs(earlier, live, snap.touched, words=words,
                                             counts=counts)
                      if earlier is not None else duplicate_pairs(live, words, counts))
        snap.remember("duplicates", duplicates)
    return [(a, b, float(x)) for a, b, x in duplicates]


def grade(score: int) -> str:
    return "excellent" if score >= 80 else "good" if score >= 60 else "needs attention"


# health's passes over the memories, for a progress bar: (pass, done, total)
PassProgress = Callable[[str, int, int], None]
READING, COMPARING = "reading memories", "comparing candidate pairs"


def health(ws: Workspace, stats: AccessStats | None = None,
           progress: PassProgress | None = None) -> Health:
    """The store's health: counts, the score with its parts, and what to do next.
    `progress` follows the word pass (READING) and the contradiction candidates
    (COMPARING) when the cached results cannot serve."""
    with gcpause.paused():
        return _health(ws, stats, progress)


def _read_words(ws: Workspace, items: Sequence[store.Loaded], hashes: Sequence[str],
                progress: PassProgress | None) -> tuple[pairs.WordIds, Counter[int]]:
    """Every item's word set (hashes[n]: items[n]'s file content hash), once: both
    pairwise checks read them. Those kept by an earlier report are read back
    (word_cache), the others split and kept. With pairs.counts of the items' sets."""
    reading = None if progress is None else functools.partial(progress, READING)
    words = pairs.WordIds()
    counts: Counter[int] = Counter()
    word_cache.read(ws.index_dir, [words.text(i.memory.title, i.memory.body) for i in items],
                    hashes, reading, words, counts)
    return words, counts


def _health(ws: Workspace, stats: AccessStats | None, progress: PassProgress | None
            ) -> Health:
    now = clock.now()
    at = clock.format_time(now)
    snap = hygiene_cache.load(ws)
    items, bad = snap.items, snap.quarantined
    if stats is None:
        stats = access_stats(ws)
    memories = [i.memory for i in items]
    total = len(memories)
    by_scope: Counter[str] = Counter(m.scope for m in memories)
    by_status: Counter[str] = Counter(m.status for m in memories)
    by_review: Counter[str] = Counter(m.review_state or "none" for m in memories)
    live = [i for i in items if i.memory.is_live]
    live_hashes = [h for i, h in zip(items, snap.hashes, strict=True) if i.memory.is_live]
    eligible = [i.memory for i in live if not lifecycle.is_expired(i.memory, at)
                and i.memory.review_state != "rejected"]
    # Each live item's retention once: the report's states and clean's disuse test.
    marks = retentions((i.memory for i in live), stats, now)
    states = Counter(r.state for r in marks.values())
    words = pairs.WordIds()
    counts: Counter[int] | None = None  # of the live memories' words: both passes use it
    if snap.cached("duplicates") is None or snap.cached("conflicts") is None:
        words, counts = _read_words(ws, live, live_hashes, progress)
    rot = rot_candidates(items, stats, now, cached_duplicates(snap, words, counts), marks)
    cached = snap.cached("conflicts")
    if cached is None:
        earlier = snap.previous("conflicts")
        comparing = None if progress is None else functools.partial(progress, COMPARING)
        found = (conflicts.update(_conflicts_of(earlier), (i.memory for i in live),
                                  snap.touched, words)
                 if earlier is not None else
                 conflicts.find((i.memory for i in live), words, comparing, counts))
        snap.remember("conflicts", [c.as_json() for c in found])
    else:
        found = _conflicts_of(cached)
    snap.save()
    current = {m.id for m in eligible}
    open_conflicts = [c for c in found if not c.acknowledged and c.a in current
                      and c.b in current]
    in_conflict = {x for c in open_conflicts for x in (c.a, c.b)}
    base = len(live) or 1
    parts = {
        "active_ratio": by_status.get("active", 0) / total if total else 1.0,
        "rot_ratio": len(rot) / base if live else 0.0,
        "average_confidence": (sum(CONFIDENCE_VALUE.get(i.memory.confidence, 0.7)
                                   for i in live) / len(live)) if live else 1.0,
        "conflict_ratio": len(in_conflict) / base if live else 0.0,
    }
    score = round(100 * (0.3 * parts["active_ratio"] + 0.2 * (1 - parts["rot_ratio"])
                         + 0.3 * parts["average_confidence"]
                         + 0.2 * (1 - parts["conflict_ratio"])))
    legacy = sum(1 for q in bad if q.reason == store.LEGACY_REASON)
    outbox = sum(1 for i in items if i.home.kind == "outbox")
    private = sum(1 for i in items if i.home.kind == "outbox"
                  and i.memory.visibility == "private")
    pull = pull_state(ws, now)
    steps: list[str] = []
    if legacy:
        steps.append(f"git memex migrate: {legacy} v1 file(s) are skipped until migrated")
    if len(bad) > legacy:
        steps.append(f"fix or remove {len(bad) - legacy} unreadable file(s) "
                     "(git memex list shows which)")
    if open_conflicts:
        steps.append(f"git memex conflicts: {len(open_conflicts)} possible contradiction(s) "
                     "to decide")
    if rot:
        steps.append(f"git memex clean: {len(rot)} ROT candidate(s) to review")
    if pull.stale and pull.age_days is not None:
        steps.append(f"git memex pull: last fetched {int(pull.age_days)} days ago")
    if outbox - private:  # a private draft stays here: submit refuses it
        steps.append(f"git memex submit: {outbox - private} draft(s) in the outbox")
    proposed = sum(1 for i in items if i.home.in_git and i.memory.review_state == "proposed")
    if proposed:
        steps.append(f"git memex promote: {proposed} proposed memory(ies) await review")
    return Health(
        total=total, by_scope=dict(by_scope), by_status=dict(by_status),
        by_review_state=dict(by_review), outbox=outbox, quarantined=len(bad), legacy=legacy,
        pull=pull, parts=parts, score=score, grade=grade(score), rot=len(rot),
        conflicts=len(open_conflicts), retention_states=dict(states), next_steps=steps,
        outbox_private=private,
    )


def clean_plan(ws: Workspace, only: Sequence[str] = ()
               ) -> tuple[list[Candidate], list[store.Quarantined]]:
    """The ROT candidates `clean` offers (only: restrict to these id prefixes)."""
    with gcpause.paused():
        snap = hygiene_cache.load(ws)
        found = rot_candidates(snap.items, access_stats(ws), clock.now(),
                               cached_duplicates(snap))
        snap.save()
    if only:
        wanted = [store.find(ws, x).id for x in only]
        found = [c for c in found if c.id in wanted]
        missing = [w for w in wanted if w not in {c.id for c in found}]
        if missing:
            raise MemexError(f"not a clean-up candidate: {', '.join(m[:10] for m in missing)}")
    return found, snap.quarantined
