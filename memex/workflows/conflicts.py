"""Contradictions between live memories: small heuristics that explain themselves (pure).

Two memories are compared only when they share a tag or their paths overlap; then
four rules look for opposing content, each naming the words that fired:

- negation: one says "never X", the other says X with mostly the same words;
- antonym: one says "enable X", the other "disable X" (a fixed list of pairs);
- value: both give a number or version for the same subject ("node 18" / "node 20");
- alternative: both pick a different member of one family ("pnpm" / "npm").

Nothing here writes: a human decides (`supersede`, `link A contradicts B`, or
`link A related B` to mark the pair as compatible).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence, Set
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import Any

from memex.core import gcpause, model
from memex.storage.sources import of_sources
from memex.workflows import pairs

_SENTENCE_SPLIT = re.compile(r"[.;!?\n]+(?:\s|$)")
# Where a sentence is cut into clauses: a comma, a colon and a space, or "but",
# "whereas" or a dash between spaces. The spaces before a word are taken whole
# (possessive: no shorter run can be followed by the word), and one run is tried
# for the three words (about half the time of an alternative each, measured).
_CLAUSE_SPLIT = re.compile(r",\s*|:\s+|\s++(?:but|whereas|-{1,2})\s+")
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_+#'./-]*[a-z0-9+#]|[a-z0-9]")
_INSTEAD = re.compile(r"\s+(?:instead of|rather than)\s+")
_PREFER_OVER = re.compile(r"\b(prefer(?:s|red)?\s+\S+)\s+over\s+")
_DIGIT = re.compile(r"\d")
_VALUE = re.compile(r"^v?(\d+(?:\.\d+)*)([a-z%]*)$")

NEGATORS = frozenset({
    "not", "never", "no", "don't", "dont", "doesn't", "isn't", "aren't", "won't",
    "shouldn't", "mustn't", "cannot", "can't", "avoid", "stop", "without", "nor",
    "forbidden", "disallowed", "banned", "neither", "removed", "dropped", "deprecated",
    "replaced", "obsolete",
})
STOP = frozenset({
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "we", "our",
    "you", "your", "it", "its", "is", "are", "be", "been", "was", "were", "this", "that",
    "these", "those", "do", "does", "did", "should", "must", "always", "please", "all",
    "any", "by", "as", "at", "from", "so", "if", "when", "then", "than", "can", "will",
    "only", "also", "just", "here", "there", "i", "me", "my", "us", "they", "them",
    "has", "have", "had", "every", "each", "into", "via", "now", "new", "get", "set",
    "make", "sure", "want", "need", "needs", "like", "use", "uses", "using", "used",
}) | NEGATORS
# Words that join a subject to its value: "timeout is 30s", "set retries to 3".
_LINKING = frozenset({
    "is", "are", "=", "to", "of", "at", "on", "be", "was", "version", "v", "uses",
    "use", "using", "set", "target", "targets", "requires", "require", "needs", "with",
    "the", "a", "an", "from", "run", "runs", "pinned", "pin", "upgrade", "upgraded",
    "keep", "stay", "stays", "max", "maximum", "default", "limit", "than",
})
_UNITS = {
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "m": "min", "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hour": "h", "hours": "h", "d": "d", "day": "d", "days": "d",
    "kb": "kb", "mb": "mb", "gb": "gb", "%": "%", "percent": "%",
}

# word -> (concept, sign): "enable X" and "disable X" are one concept with opposite signs.
ANTONYMS: dict[str, tuple[str, int]] = {}
for _concept, _plus, _minus in (
    ("enable", ("enable", "enabled", "enables", "turn-on"),
     ("disable", "disabled", "disables", "turn-off")),
    ("allow", ("allow", "allowed", "allows", "permit", "permitted"),
     ("forbid", "forbidden", "disallow", "disallowed", "prohibit", "prohibited", "ban",
      "banned", "block", "blocked")),
    ("require", ("required", "require", "requires", "mandatory", "compulsory"),
     ("optional",)),
    ("include", ("include", "included", "includes"), ("exclude", "excluded", "excludes")),
    ("sync", ("sync", "synchronous", "synchronously", "blocking"),
     ("async", "asynchronous", "asynchronously", "non-blocking")),
    ("mutable", ("mutable",), ("immutable", "frozen")),
    ("public", ("public",), ("private", "internal-only")),
    ("increase", ("increase", "raise", "higher", "more"), ("decrease", "lower", "fewer")),
    ("before", ("before",), ("after",)),
    ("pass", ("pass", "passes", "succeed", "succeeds"), ("fail", "fails", "failing")),
    ("commit", ("commit", "committed", "check-in"), ("gitignore", "gitignored", "ignored")),
    ("keep", ("keep", "kept", "retain"), ("remove", "delete", "drop")),
):
    for _w in _plus:
        ANTONYMS[_w] = (_concept, 1)
    for _w in _minus:
        ANTONYMS[_w] = (_concept, -1)


_NOT_CONTENT = STOP | frozenset(ANTONYMS) | frozenset(_UNITS)


@dataclass(frozen=True)
class Family:
    """Alternatives for one job; picking two different ones is a contradiction."""

    name: str
    members: dict[str, str]  # spelling -> canonical member
    context: frozenset[str] = frozenset()  # one of these must appear too (ambiguous members)


def _family(name: str, groups: Sequence[Sequence[str]], context: Iterable[str] = ()) -> Family:
    members = {spelling: group[0] for group in groups for spelling in group}
    return Family(name, members, frozenset(context))


FAMILIES = (
    _family("package manager", [["npm"], ["pnpm"], ["yarn"], ["bun"]]),
    _family("python packaging", [["pip"], ["poetry"], ["uv"], ["pipenv"], ["conda"]]),
    _family("test runner", [["pytest"], ["unittest"], ["nose"], ["jest"], ["vitest"],
                            ["mocha"]]),
    _family("python formatter", [["black"], ["yapf"], ["autopep8"], ["ruff-format", "ruff"]],
            {"format", "formatter", "formatting", "formats", "formatted"}),
    _family("linter", [["flake8"], ["pylint"], ["ruff"], ["eslint"], ["biome"]],
            {"lint", "linter", "linting", "lints"}),
    _family("type checker", [["mypy"], ["pyright"], ["pytype"]]),
    _family("indentation", [["tabs", "tab"], ["spaces", "space"]],
            {"indent", "indentation", "indents", "indented"}),
    _family("quote style", [["single"], ["double"]], {"quote", "quotes", "quoted"}),
    _family("default branch", [["main"], ["master"], ["develop"], ["trunk"]],
            {"branch", "branches", "default-branch"}),
    _family("merge strategy", [["rebase", "rebased", "rebasing"],
                               ["squash", "squashed", "squashing"],
                               ["merge-commit", "merge-commits"]],
            {"merge", "merging", "pr", "prs", "pull", "history", "strategy"}),
    _family("database", [["postgres", "postgresql"], ["mysql", "mariadb"], ["sqlite"],
                         ["mongodb", "mongo"]]),
    _family("http client", [["requests"], ["httpx"], ["aiohttp"], ["urllib3"]],
            {"http", "client", "library", "calls", "requests"}),
    _family("js modules", [["esm"], ["commonjs", "cjs"]]),
    _family("container runtime", [["docker"], ["podman"]]),
    _family("logging library", [["logging"], ["loguru"], ["structlog"]],
            {"log", "logs", "logger", "logging"}),
    _family("date library", [["moment", "moment.js"], ["dayjs"], ["date-fns"], ["luxon"]]),
    _family("time zone", [["utc", "gmt"], ["local", "localtime"]],
            {"time", "times", "timestamp", "timestamps", "timezone", "zone", "dates", "date"}),
    _family("css framework", [["tailwind", "tailwindcss"], ["bootstrap"]]),
    _family("orm", [["sqlalchemy"], ["peewee"], ["tortoise"], ["prisma"], ["typeorm"]]),
)


# spelling -> the families it belongs to (with its canonical member)
MEMBERS: dict[str, list[tuple[Family, str]]] = {}
for _fam in FAMILIES:
    for _spelling, _canonical in _fam.members.items():
        MEMBERS.setdefault(_spelling, []).append((_fam, _canonical))
# The tokens features_of looks up in MEMBERS or ANTONYMS (most tokens are neither).
_RULE_WORDS = frozenset(MEMBERS) | frozenset(ANTONYMS)


@dataclass(frozen=True)
class Clause:
    """One clause of a memory's text, as the contradiction rules compare it."""

    text: str
    words: frozenset[str]  # stemmed content words: no negators, stop words or numbers
    tokens: tuple[str, ...]
    negated: bool
    sentence: frozenset[str]  # every token of the sentence the clause is in


@dataclass
class Features:
    """What the rules compare, extracted once per memory."""

    id: str
    tags: frozenset[str]
    paths: tuple[str, ...]
    clauses: list[Clause]
    values: dict[str, set[str]] = field(default_factory=dict)
    alternatives: dict[str, tuple[set[str], set[str]]] = field(default_factory=dict)
    antonyms: list[tuple[str, int, frozenset[str], str]] = field(default_factory=list)
    antonym_clauses: list[int] = field(default_factory=list)  # each antonym's clause


@dataclass(frozen=True)
class Reason:
    """Why two memories are said to contradict: a rule and its detail."""

    rule: str
    detail: str


@dataclass
class Contradiction:
    """Two memories that contradict each other, and why."""

    a: str
    b: str
    reasons: list[Reason]
    acknowledged: bool = False  # already linked `contradicts` by a person

    def as_json(self) -> dict[str, object]:
        return {"a": self.a, "b": self.b, "acknowledged": self.acknowledged,
                "reasons": [{"rule": r.rule, "detail": r.detail} for r in self.reasons]}


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix strip so cache / cached / caching compare equal."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


class _ContentStems(dict[str, str]):
    """token -> its stem if it is a content word (no negator, stop word or number),
    else "" (a stem is never empty); filled on first sight, bounded."""

    LIMIT = 200_000

    def __missing__(self, token: str) -> str:
        found = "" if token in _NOT_CONTENT or _DIGIT.search(token) else stem(token)
        if len(self) < self.LIMIT:
            self[token] = found
        return found


_CONTENT_STEM = _ContentStems()


def _content_stems(tokens: Iterable[str]) -> Iterator[str]:
    """The stems of the content words of tokens."""
    return filter(None, map(_CONTENT_STEM.__getitem__, tokens))


# Each alternative of _CLAUSE_SPLIT needs one of these: without them, no split to try.
_CLAUSE_MARKS = (",", ":", "-", "but", "whereas")


# _TOKEN's matches without the pattern: every character a token may hold is one byte
# of _TOKEN_CHARS, so a run of them (any other character, and any non-ASCII one,
# encoded as "?", a space) holds one match at most, the run less its leading
# characters that cannot start one and its trailing ones that cannot end one.
_TOKEN_CHARS = b"abcdefghijklmnopqrstuvwxyz0123456789_+#'./-"
_TOKEN_RUNS = bytes(b if b in _TOKEN_CHARS else 32 for b in range(256))
_NOT_ALNUM = re.compile(r"[_+#'./-]")


def _tokens(text: str) -> tuple[str, ...]:
    """`_TOKEN.findall(text)`, made by a byte table and a split (a third less time)."""
    runs = text.encode("ascii", "replace").translate(_TOKEN_RUNS).decode("ascii").split()
    if not _NOT_ALNUM.search(text):  # every run is one token as it is
        return tuple(runs)
    return tuple(token for run in runs if (token := run.lstrip("_+#'./-").rstrip("_'./-")))


def _prepared(text: str) -> str:
    """TEXT as its clauses are cut from it: lower-cased, "instead of" and "prefer X
    over" turned into a negated clause."""
    text = text.lower().replace("\u2019", "'")
    if "instead of" in text or "rather than" in text:  # what _INSTEAD needs
        text = _INSTEAD.sub(", not ", text)
    if "prefer" in text and "over" in text:  # what _PREFER_OVER needs
        text = _PREFER_OVER.sub(r"\1, not ", text)
    return text


def _pieces(text: str) -> Iterator[list[str]]:
    """The clause pieces of each sentence of TEXT (_prepared)."""
    for sentence in _SENTENCE_SPLIT.split(_prepared(text)):
        yield (_CLAUSE_SPLIT.split(sentence) if any(m in sentence for m in _CLAUSE_MARKS)
               else [sentence])


def _clauses(text: str) -> list[Clause]:
    out: list[Clause] = []
    for pieces in _pieces(text):
        parts = [(part, _tokens(part)) for part in pieces]
        sentence_tokens = frozenset(chain.from_iterable(tokens for _, tokens in parts))
        for part, tokens in parts:
            if not tokens:
                continue
            negated = not NEGATORS.isdisjoint(tokens) or "no longer" in part
            words = frozenset(_content_stems(tokens))
            out.append(Clause(part.strip(), words, tokens, negated, sentence_tokens))
    return out


def _value_of(tokens: Sequence[str], i: int) -> str | None:
    match = _VALUE.match(tokens[i])
    if not match:
        return None
    number, unit = match.group(1), match.group(2)
    if not unit and i + 1 < len(tokens) and tokens[i + 1] in _UNITS:
        unit = tokens[i + 1]
    unit = _UNITS.get(unit, unit)
    return number + unit


def _subject_before(tokens: Sequence[str], i: int) -> str | None:
    j = i - 1
    # "3.11 and 3.12": a list of values shares the first one's subject
    while j >= 1 and tokens[j] in ("and", "or", "/") and _VALUE.match(tokens[j - 1]):
        j -= 2
        while j >= 0 and _VALUE.match(tokens[j]):
            j -= 1
    while j >= 0 and (tokens[j] in _LINKING or tokens[j] in NEGATORS):
        j -= 1
    if j < 0 or _DIGIT.search(tokens[j]) or tokens[j] in STOP:
        return None
    return tokens[j]


def features(memory: model.Memory) -> Features:
    return features_of(memory.id, memory.title, memory.body, memory.tags, memory.paths)


def features_of(memory_id: str, title_text: str, body: str, tags: Iterable[str],
                paths: Sequence[str]) -> Features:
    """features() of the memory with these fields."""
    title = _clauses(title_text)
    clauses = title + _clauses(body)
    feats = Features(memory_id, frozenset(t.lower() for t in tags), tuple(paths), clauses)
    for number, clause in enumerate(clauses):
        tokens = clause.tokens
        # titles are labels ("ADR 12", "Step 3"): values come from the body only
        digits = number >= len(title) and _DIGIT.search(clause.text)
        for i in range(len(tokens) if digits else 0):
            if not _DIGIT.search(tokens[i]):
                continue
            value = _value_of(tokens, i)
            subject = _subject_before(tokens, i) if value is not None else None
            if subject is not None and value is not None and not clause.negated:
                feats.values.setdefault(subject, set()).add(value)
        ruled = [token for token in tokens if token in _RULE_WORDS]  # in their order
        for token in ruled:
            for family, member in MEMBERS.get(token, ()):
                if family.context and not family.context & clause.sentence:
                    continue
                yes, no = feats.alternatives.setdefault(family.name, (set(), set()))
                (no if clause.negated else yes).add(member)
        for token in ruled:
            if token in ANTONYMS:
                concept, sign = ANTONYMS[token]
                if clause.negated and token not in NEGATORS:
                    sign = -sign
                feats.antonyms.append((concept, sign, clause.words, clause.text))
                feats.antonym_clauses.append(number)
    return feats


def paths_overlap(a: Sequence[str], b: Sequence[str]) -> bool:
    """Globs about the same files: equal, one matches the other, or nested folders."""
    for x in a:
        for y in b:
            if x == y or fnmatch.fnmatch(x, y) or fnmatch.fnmatch(y, x):
                return True
            px, py = _fixed_prefix(x), _fixed_prefix(y)
            if px and py and (px.startswith(py) or py.startswith(px)):
                return True
    return False


def _fixed_prefix(glob: str) -> str:
    cut = re.split(r"[*?\[]", glob, maxsplit=1)[0]
    return cut if cut.endswith("/") else cut.rsplit("/", 1)[0] + "/" if "/" in cut else ""


def related(a: Features, b: Features) -> bool:
    """The gate: a shared tag or overlapping paths."""
    return bool(a.tags & b.tags) or paths_overlap(a.paths, b.paths)


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    union = x | y
    return len(x & y) / len(union) if union else 0.0


def compare(a: Features, b: Features) -> list[Reason]:
    """The reasons two memories contradict each other (empty: compatible)."""
    reasons: list[Reason] = []
    for subject, values_a in a.values.items():
        values_b = b.values.get(subject)
        if values_b and not (values_a & values_b):
            reasons.append(Reason("value", f"{subject} {'/'.join(sorted(values_a))} vs "
                                           f"{subject} {'/'.join(sorted(values_b))}"))
    for name, (yes_a, no_a) in a.alternatives.items():
        if name not in b.alternatives:
            continue
        yes_b, no_b = b.alternatives[name]
        if yes_a and yes_b and not (yes_a & yes_b) and not (yes_a & no_a) and not (
                yes_b & no_b):
            reasons.append(Reason("alternative", f"{name}: {', '.join(sorted(yes_a))} vs "
                                                 f"{', '.join(sorted(yes_b))}"))
        elif (yes_a - yes_b) & no_b or (yes_b - yes_a) & no_a:
            said = sorted(((yes_a - yes_b) & no_b) | ((yes_b - yes_a) & no_a))
            reasons.append(Reason("alternative", f"{name}: one uses {', '.join(said)}, "
                                                 "the other rules it out"))
    for concept, sign, words, text in a.antonyms:
        for concept_b, sign_b, words_b, text_b in b.antonyms:
            if concept == concept_b and sign != sign_b and (
                    len(words & words_b) >= 1 or not (words or words_b)):
                reasons.append(Reason("antonym", f'"{text}" vs "{text_b}"'))
                break
        else:
            continue
        break
    if not reasons:
        for ca in a.clauses:
            for cb in b.clauses:
                if ca.negated == cb.negated:
                    continue
                neg, pos = (ca, cb) if ca.negated else (cb, ca)
                shared = len(neg.words & pos.words)
                # mostly the same words, or most of what the negated clause rules out
                if shared >= 2 and (_jaccard(neg.words, pos.words) >= 0.5
                                    or shared / len(neg.words) >= 0.67):
                    reasons.append(Reason("negation", f'"{neg.text}" vs "{pos.text}"'))
                    break
            if reasons:
                break
    return reasons


@dataclass(frozen=True)
class Entry:
    """What the candidate pass needs of a memory, without building the memory: a
    caller with thousands of them (an index's rows) makes Memory objects only for the
    few that reach `compare`."""

    id: str
    text: str  # title, a newline and the body: one word pass (pairs.Words) per text
    tags: frozenset[str]  # lower-cased
    paths: tuple[str, ...]

    @classmethod
    def of(cls, memory: model.Memory, words: pairs.Words | pairs.WordIds | None = None
           ) -> Entry:
        """MEMORY's entry; with WORDS, its text is the one WORDS made (Words.text)."""
        text = (words.text(memory.title, memory.body) if words is not None
                else pairs.paired_text(memory.title, memory.body))
        return cls(memory.id, text, frozenset(t.lower() for t in memory.tags),
                   tuple(memory.paths))


def gates(tags: Iterable[str], paths: Iterable[str]) -> set[str]:
    """Where a pair can meet: a shared tag (lower-cased), or the top folder of a path."""
    found = {f"tag:{t}" for t in tags}
    found.update(f"dir:{_fixed_prefix(p).split('/', 1)[0]}" for p in paths)
    return found


def _word_keys(word: str) -> tuple[str, ...]:
    """What one word (pairs.word_set) can give a rule to share: the stem of a content
    word, or the subject of a rule (a family, an antonym concept, a unit)."""
    keys: list[str] = []
    for token in _TOKEN.findall(word):
        content = _CONTENT_STEM[token]
        if content:
            keys.append(content)
        if token in MEMBERS:  # few are: no generator for the others
            keys.extend(f"alt:{family.name}" for family, _ in MEMBERS[token])
        if token in ANTONYMS:
            keys.append(f"ant:{ANTONYMS[token][0]}")
        if token in _UNITS:
            keys.append(f"unit:{token}")  # a value's subject may be one ("after 3 s")
    return tuple(keys)


class _WordKeys(dict[str, tuple[str, ...]]):
    """word -> _word_keys(word), filled on first sight, bounded."""

    LIMIT = 200_000

    def __missing__(self, word: str) -> tuple[str, ...]:
        found = _word_keys(word)
        if len(self) < self.LIMIT:
            self[word] = found
        return found


_WORD_KEYS = _WordKeys()
# Spellings word_set cuts in pieces ("date-fns", "turn-on"): their keys when every
# piece is there.
_COMPOUNDS = [(frozenset(pieces), _word_keys(spelling))
              for spelling in chain(MEMBERS, ANTONYMS)
              if len(pieces := pairs.word_set(spelling)) > 1]


def word_keys(word: str) -> tuple[str, ...]:
    """The keys one word of a word set gives (`pair_keys` is these for every word,
    plus `compound_keys`)."""
    return _WORD_KEYS[word]


def compound_keys() -> list[tuple[frozenset[str], tuple[str, ...]]]:
    """(pieces, keys): a word set holding all the pieces has these keys too."""
    return _COMPOUNDS


def pair_keys(words: frozenset[str]) -> set[str]:
    """The keys of a memory with these words (pairs.word_set of its title and body):
    every content stem and rule subject `compare` could find in both of a pair."""
    keys = set(chain.from_iterable(map(_WORD_KEYS.__getitem__, words)))
    for pieces, more in _COMPOUNDS:
        if pieces <= words:
            keys.update(more)
    return keys


def _keys_by_id(spelled: dict[int, str], number: int) -> tuple[str, ...]:
    return _WORD_KEYS[spelled[number]]


def rare_keys(sets: Sequence[Collection[Any]], rare: int = pairs.RARE,
              counts: Counter[Any] | None = None, words: pairs.WordIds | None = None
              ) -> list[set[str]]:
    """`pair_keys` of each word set less the keys more than `rare` of the sets hold: all
    that `pairs.rare_pairs` looks at. A key is held at least as often as any word that
    gives it, so the keys of a word in more than `rare` sets are common: they are
    looked up once for the whole store, and each set looks up only its rare words.
    SETS hold words, or with WORDS the ids of words.spelled (each once); `counts`:
    pairs.counts(sets) when the caller has it."""
    if counts is None:
        counts = pairs.counts(sets)
    keys_of: Callable[[Any], tuple[str, ...]] = _WORD_KEYS.__getitem__
    if words is not None:
        keys_of = functools.partial(_keys_by_id, words.spelled)
    common: set[str] = set()
    few: set[Any] = set()  # the words of at most `rare` sets
    for word, count in counts.items():
        if count > rare:
            common.update(keys_of(word))
        else:
            few.add(word)
    # each compound's pieces as the sets hold them; one with a piece no set holds is in
    # no set (most: no set is then walked for them)
    compounds: list[tuple[frozenset[Any], tuple[str, ...]]] = []
    for pieces, given in _COMPOUNDS:
        more = tuple(k for k in given if k not in common)
        held = pieces if words is None else frozenset(words.ids.get(p, -1) for p in pieces)
        if more and all(counts.get(piece) for piece in held):
            compounds.append((held, more))
    wanted = frozenset(few).union(*(pieces for pieces, _ in compounds))
    out: list[set[str]] = []
    if not wanted:  # no rare word, no compound: no set holds a key that is not common
        return [set() for _ in sets]
    for found in sets:
        held = wanted.intersection(found)  # one pass over the set: its rare words and pieces
        keys = set(chain.from_iterable(map(keys_of, few.intersection(held))))
        for pieces, more in compounds:
            if pieces <= held:
                keys.update(more)
        keys -= common
        out.append(keys)
    return out


def find(memories: Iterable[model.Memory], words: pairs.WordIds | None = None,
         progress: pairs.Progress | None = None, counts: Counter[int] | None = None
         ) -> list[Contradiction]:
    """Every contradicting pair among `memories` (pass live ones), oldest id first.

    Candidate pairs share a gate (a tag or a top folder) and a rare key (a word or a
    rule's subject in at most pairs.RARE of the memories: `pairs.rare_pairs`), so a
    store of thousands of memories is never compared pair by pair; each memory's
    features are extracted once, and only for memories in a candidate pair.
    `progress` (done, total) follows the comparison of the candidate pairs; `counts`
    is pairs.counts of the live memories' word ids when the caller has it.
    """
    live = [m for m in memories if m.status in model.LIVE_STATUSES]
    words = words if words is not None else pairs.WordIds()
    found = among([Entry.of(m, words) for m in live], live.__getitem__, words=words,
                  progress=progress, counts=counts)
    found.sort(key=lambda c: (c.a, c.b))
    return found


def among(entries: Sequence[Entry], load: Callable[[int], model.Memory],
          focus: Collection[str] | None = None, words: pairs.WordIds | None = None,
          cache: dict[str, Features] | None = None,
          progress: pairs.Progress | None = None, counts: Counter[int] | None = None
          ) -> list[Contradiction]:
    """The contradicting candidate pairs among `entries` (live memories; `load(i)`
    gives entry i's memory): with `focus` (ids), only pairs with one of those, each
    as (focus id, other id); else every pair as (older id, newer id). `cache` keeps
    features by id for a caller that asks again about the same memories; `counts` is
    pairs.counts of the entries' word ids when the caller has it."""
    with gcpause.paused():
        return _among(entries, load, focus, words if words is not None else pairs.WordIds(),
                      cache if cache is not None else {}, progress, counts)


def _among(entries: Sequence[Entry], load: Callable[[int], model.Memory],
           focus: Collection[str] | None, words: pairs.WordIds, cache: dict[str, Features],
           progress: pairs.Progress | None, counts: Counter[int] | None
           ) -> list[Contradiction]:
    rare = pairs.RARE
    keys = rare_keys([words[e.text] for e in entries], rare, counts, words)
    where = [gates(e.tags, e.paths) for e in entries]
    chosen = None if focus is None else {i for i, e in enumerate(entries) if e.id in focus}
    candidates = sorted(pairs.rare_pairs(keys, where, chosen, rare))
    return compare_pairs(candidates, entries.__getitem__, load, chosen, cache, progress)


def compare_pairs(candidates: Sequence[tuple[int, int]], entry: Callable[[int], Entry],
                  load: Callable[[int], model.Memory], chosen: Collection[int] | None,
                  cache: dict[str, Features], progress: pairs.Progress | None = None
                  ) -> list[Contradiction]:
    """The contradictions among candidate pairs (x, y), in their order (`_compare`'s
    rule), each memory loaded (`load`) and its features extracted once. With `chosen`
    (indexes of the focus memories), each comes as (focus id, other id), else as
    (older id, newer id)."""
    memories: dict[int, model.Memory] = {}

    def memory(index: int) -> model.Memory:
        found = memories.get(index)
        if found is None:
            found = memories[index] = load(index)
        return found

    def feats(index: int) -> Features:
        mem = memory(index)
        found = cache.get(mem.id)
        if found is None:
            found = cache[mem.id] = features(mem)
        return found

    def linked(x: int, y: int, relations: Sequence[str]) -> bool:
        return _linked(memory(x), memory(y), relations)

    return _compare(candidates, entry, chosen, linked, feats, progress)


def _compare(candidates: Sequence[tuple[int, int]], entry: Callable[[int], Entry | Known],
             chosen: Collection[int] | None, linked: Callable[[int, int, Sequence[str]], bool],
             feats: Callable[[int], Features], progress: pairs.Progress | None
             ) -> list[Contradiction]:
    """The one rule of which candidate pairs contradict: pairs past the gate
    (`may_meet`) and not linked `related` or `extends` (`linked(x, y, relations)`) are
    compared (`feats(x)`: x's features); a pair linked `contradicts` is acknowledged."""
    out: list[Contradiction] = []
    for done, (x, y) in enumerate(candidates, 1):
        if progress is not None and (done % 256 == 0 or done == len(candidates)):
            progress(done, len(candidates))
        ex, ey = entry(x), entry(y)
        if ex.id == ey.id or not may_meet(ex.tags, ex.paths, ey.tags, ey.paths):
            continue
        if chosen is not None and x not in chosen:
            x, y, ex, ey = y, x, ey, ex  # the focus memory first
        if linked(x, y, ("related", "extends")):
            continue
        reasons = compare(feats(x), feats(y))
        if reasons:
            a, b = (ex.id, ey.id) if chosen is not None else sorted((ex.id, ey.id))
            out.append(Contradiction(a, b, reasons,
                                     acknowledged=linked(x, y, ("contradicts",))))
    return out


def _linked(a: model.Memory, b: model.Memory, relations: Sequence[str]) -> bool:
    return any(b.id in getattr(a, r) or a.id in getattr(b, r) for r in relations)


def may_meet(tags: frozenset[str] | set[str], paths: Sequence[str], other_tags: Iterable[str],
             other_paths: Sequence[str]) -> bool:
    """The gate (`related`) on raw fields: a shared tag (`tags` lower-cased) or
    overlapping paths; cheap enough to run before any features are computed."""
    return bool(tags & {t.lower() for t in other_tags}) or (
        bool(paths) and bool(other_paths) and paths_overlap(paths, other_paths))


def against(memory: model.Memory, others: Iterable[model.Memory],
            cache: dict[str, Features] | None = None) -> list[Contradiction]:
    """Conflicts between one (new or changed) memory and the others (live ones are
    looked at), by `find`'s rule with the rarity of a key counted among them: the
    notice on write. `cache` keeps features by id across calls."""
    items = [memory] + [m for m in others
                        if m.id != memory.id and m.status in model.LIVE_STATUSES]
    return among([Entry.of(m) for m in items], items.__getitem__, focus={memory.id},
                 cache=cache)


def update(previous: Sequence[Contradiction], memories: Iterable[model.Memory],
           touched: set[str], words: pairs.WordIds | None = None) -> list[Contradiction]:
    """`find` for the same memories, given its earlier result and which ids changed:
    the pairs with a changed memory are found again, the others kept."""
    live = [m for m in memories if m.status in model.LIVE_STATUSES]
    out = [c for c in previous if c.a not in touched and c.b not in touched]
    words = words if words is not None else pairs.WordIds()
    for found in among([Entry.of(m, words) for m in live], live.__getitem__, focus=touched,
                       words=words):
        a, b = sorted((found.a, found.b))
        out.append(Contradiction(a, b, found.reasons, found.acknowledged))
    out.sort(key=lambda c: (c.a, c.b))
    return out


# ------------------------------------------------- a write's check, from what the index kept
#
# A capture compares its memory with every live one sharing a tag (index.views.
# neighbours): at 100,000 memories a thousand of them, each one's word pass, keys and
# features made again on every capture. The index keeps them per memory once made
# (its pair_cache table: the file's content hash and cache_version() say whether they
# still hold), so the next capture reads them; the pairs and verdicts are `against`'s.


# Read once, at import: a long-lived process (the MCP server) whose files are upgraded
# under it keeps running the old rules, so it must keep naming its rows by them.
_SOURCE_DIGEST = of_sources((__name__, pairs.__name__), size=8) or ""


def cache_version() -> str:
    """A digest of the rules behind the kept keys and features (this module's and
    pairs' source, read when this module was imported: the rules running here): a
    change to either leaves every kept one unused. "" (nothing kept): the source
    could not be read."""
    return _SOURCE_DIGEST


def encode_keys(keys: Iterable[str]) -> str:
    """`pair_keys` of a memory as the index keeps them (a key holds no line break)."""
    return "\n".join(sorted(keys))


_FLAG = bytes.maketrans(b"01", b"\0\1")  # a flag's digit as a false or true byte


def encode_features(feats: Features, title: str, body: str, keys: str) -> str:
    """What `compare` reads of the features of a memory with this TITLE and BODY and
    KEYS (encode_keys), as lines of tab-separated fields (no word, value or member holds
    a space, tab or line break): each clause as where its text is in _prepared(title)
    or _prepared(body) (the text is cut again from there), whether it is negated, which
    of KEYS are its words (a bit each, in hex) and its other words; then the values,
    the alternatives and the antonyms (by clause)."""
    texts = (_prepared(title), _prepared(body))
    place = {key: n for n, key in enumerate(keys.split("\n"))} if keys else {}
    part, at = 0, 0
    lines = []
    for clause in feats.clauses:
        found = texts[part].find(clause.text, at)
        if found < 0:  # past the title's clauses: the body's
            part, at = 1, 0
            found = texts[part].find(clause.text, at)
        if found < 0:  # pragma: no cover - a clause's text is a piece of its text
            raise ValueError(f"clause not in its text: {clause.text!r}")
        at = found + len(clause.text)
        bits, other = 0, []
        for word in clause.words:
            n = place.get(word)
            if n is None:
                other.append(word)
            else:
                bits |= 1 << n
        lines.append(f"c\t{part}\t{found}\t{at}\t{int(clause.negated)}\t{bits:x}\t"
                     f"{' '.join(sorted(other))}")
    lines += [f"v\t{subject}\t{' '.join(sorted(values))}"
              for subject, values in feats.values.items()]
    lines += [f"a\t{name}\t{' '.join(sorted(yes))}\t{' '.join(sorted(no))}"
              for name, (yes, no) in feats.alternatives.items()]
    lines += [f"n\t{concept}\t{sign}\t{clause}" for (concept, sign, _, _), clause
              in zip(feats.antonyms, feats.antonym_clauses, strict=True)]
    return "\n".join(lines)


def decode_features(kept: str, memory_id: str, tags: frozenset[str], paths: tuple[str, ...],
                    title: str, body: str, keys: str, listed: Sequence[str] | None = None
                    ) -> Features:
    """The Features encode_features kept of the memory with this TITLE, BODY and KEYS;
    LISTED: KEYS split at its line breaks when the caller has them (a write's key pass:
    the strings it hashed are the clauses' words, not made and hashed again)."""
    texts: list[str | None] = [None, None]
    if listed is None:
        listed = keys.split("\n") if keys else []
    feats = Features(memory_id, tags, paths, [])
    clauses, antonyms, antonym_clauses = feats.clauses, feats.antonyms, feats.antonym_clauses
    # an antonym line comes again for each word of its concept in the clause ("before"
    # twelve times in a bench text): each distinct line is read once
    seen: dict[str, tuple[tuple[str, int, frozenset[str], str], int]] = {}
    for line in kept.split("\n") if kept else ():
        if line[0] == "n":
            found = seen.get(line)
            if found is None:
                _, concept, sign, clause = line.split("\t")
                at = int(clause)
                found = seen[line] = ((concept, int(sign), clauses[at].words,
                                       clauses[at].text), at)
            antonyms.append(found[0])
            antonym_clauses.append(found[1])
            continue
        kind, *fields = line.split("\t")
        if kind == "c":
            part, start, end = int(fields[0]), int(fields[1]), int(fields[2])
            text = texts[part]
            if text is None:
                text = texts[part] = _prepared(body if part else title)
            flags = bin(int(fields[4], 16))[:1:-1]  # bit n: the n-th key
            words = frozenset(chain(compress(listed, flags.encode("ascii").translate(_FLAG)),
                                    fields[5].split()))
            clauses.append(Clause(text[start:end], words, (), fields[3] == "1", frozenset()))
        elif kind == "v":
            feats.values[fields[0]] = set(fields[1].split())
        else:
            feats.alternatives[fields[0]] = (set(fields[1].split()), set(fields[2].split()))
    return feats


@dataclass
class Known:
    """A live memory a write's check compares with, as the index gives it: its gate
    fields, its text on demand, what the index kept of it (None: nothing usable), and
    its memory on demand when its relations name the new one (else None)."""

    id: str
    tags: frozenset[str]  # lower-cased
    paths: tuple[str, ...]
    text: Callable[[], tuple[str, str]]  # (title, body)
    keys: str | None = None  # encode_keys
    feats: str | None = None  # encode_features
    names_me: Callable[[], model.Memory] | None = None


def against_known(memory: model.Memory, others: Sequence[Known]
                  ) -> tuple[list[Contradiction], dict[int, tuple[str, str | None]]]:
    """`against(memory, others)` of live memories as the index gives them: the same
    rule (pairs.rare_pairs, then `_compare`, as `among` with the memory the focus), the
    others' keys and features read from what the index kept where it has them. Also
    what to keep of those made here: {index in OTHERS: (keys, features or None)}."""
    with gcpause.paused():
        return _against_known(memory, others)


def _against_known(memory: model.Memory, others: Sequence[Known]
                   ) -> tuple[list[Contradiction], dict[int, tuple[str, str | None]]]:
    made: dict[int, tuple[str, str | None]] = {}
    at = [i for i, other in enumerate(others) if other.id != memory.id]  # item n + 1
    items = [others[i] for i in at]
    mine = pair_keys(pairs.word_set(pairs.paired_text(memory.title, memory.body)))
    # Of each other memory, only the keys this one holds too: no other key can pair
    # them, and each of this one's keys is counted as often as with all of them.
    keys: list[Set[str]] = [mine]
    listed: dict[int, list[str]] = {}  # index in OTHERS: its kept keys, split once
    for i, other in zip(at, items, strict=True):
        if other.keys is not None:
            listed[i] = split = other.keys.split("\n") if other.keys else []
            keys.append(mine.intersection(split))
            continue
        found = pair_keys(pairs.word_set(pairs.paired_text(*other.text())))
        made[i] = (encode_keys(found), None)
        keys.append(mine & found)
    me = Entry.of(memory)
    where = [gates(me.tags, me.paths)] + [gates(o.tags, o.paths) for o in items]
    candidates = sorted(pairs.rare_pairs(keys, where, {0}, pairs.RARE))
    named: dict[int, model.Memory | None] = {}
    mine_feats: list[Features] = []

    def entry(index: int) -> Entry | Known:
        return items[index - 1] if index else me

    def linked(x: int, y: int, relations: Sequence[str]) -> bool:
        # x is this memory (the focus); y's memory is read only when its links name it
        other = items[y - 1]
        if y not in named:
            named[y] = other.names_me() if other.names_me is not None else None
        found = named[y]
        if found is not None:
            return _linked(memory, found, relations)
        return any(other.id in getattr(memory, r) for r in relations)

    def feats(index: int) -> Features:
        if index:
            return _features_of(at[index - 1], items[index - 1], made, listed)
        if not mine_feats:
            mine_feats.append(features(memory))
        return mine_feats[0]

    return _compare(candidates, entry, {0}, linked, feats, None), made


def _features_of(index: int, other: Known, made: dict[int, tuple[str, str | None]],
                 listed: dict[int, list[str]]) -> Features:
    """OTHER's features: from what the index kept, else made (and noted in MADE);
    LISTED: the kept keys the key pass split, by index."""
    title, body = other.text()
    keys = made[index][0] if index in made else other.keys
    assert keys is not None  # read or made by the key pass
    if other.feats is not None:
        return decode_features(other.feats, other.id, other.tags, other.paths, title, body,
                               keys, listed.get(index))
    found = features_of(other.id, title, body, other.tags, other.paths)
    made[index] = (keys, encode_features(found, title, body, keys))
    return found
