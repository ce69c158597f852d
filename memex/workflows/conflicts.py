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
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

from memex.core import gcpause, model

_SENTENCE_SPLIT = re.compile(r"[.;!?\n]+(?:\s|$)")
_CLAUSE_SPLIT = re.compile(r",\s*|\s+but\s+|\s+whereas\s+|\s+-{1,2}\s+|:\s+")
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


@dataclass(frozen=True)
class Clause:
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


@dataclass(frozen=True)
class Reason:
    rule: str
    detail: str


@dataclass
class Contradiction:
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


def _tokens(text: str) -> tuple[str, ...]:
    # the pattern starts and ends on a letter, digit, + or #: nothing to strip
    return tuple(_TOKEN.findall(text))


def _clauses(text: str) -> list[Clause]:
    text = text.lower().replace("\u2019", "'")
    if "instead of" in text or "rather than" in text:  # what _INSTEAD needs
        text = _INSTEAD.sub(", not ", text)
    if "prefer" in text and "over" in text:  # what _PREFER_OVER needs
        text = _PREFER_OVER.sub(r"\1, not ", text)
    out: list[Clause] = []
    for sentence in _SENTENCE_SPLIT.split(text):
        pieces = (_CLAUSE_SPLIT.split(sentence) if any(m in sentence for m in _CLAUSE_MARKS)
                  else [sentence])
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
    title = _clauses(memory.title)
    clauses = title + _clauses(memory.body)
    feats = Features(memory.id, frozenset(t.lower() for t in memory.tags),
                     tuple(memory.paths), clauses)
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
        for token in tokens:
            for family, member in MEMBERS.get(token, ()):
                if family.context and not family.context & clause.sentence:
                    continue
                yes, no = feats.alternatives.setdefault(family.name, (set(), set()))
                (no if clause.negated else yes).add(member)
        for token in tokens:
            if token in ANTONYMS:
                concept, sign = ANTONYMS[token]
                if clause.negated and token not in NEGATORS:
                    sign = -sign
                feats.antonyms.append((concept, sign, clause.words, clause.text))
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


def _gates(f: Features) -> set[str]:
    """Where a pair can meet: a shared tag, or the top folder of a path."""
    gates = {f"tag:{t}" for t in f.tags}
    gates.update(f"dir:{_fixed_prefix(p).split('/', 1)[0]}" for p in f.paths)
    return gates


def find(memories: Iterable[model.Memory]) -> list[Contradiction]:
    """Every contradicting pair among `memories` (pass live ones), oldest id first.

    Candidate pairs come from a hash join on (tag or folder, what a rule looks at:
    a subject, a family, an antonym concept, a rare word of a negated clause), so
    a store of thousands of memories is never compared pair by pair.
    """
    with gcpause.paused():
        return _find(memories)


def _find(memories: Iterable[model.Memory]) -> list[Contradiction]:
    items = [m for m in memories if m.status in model.LIVE_STATUSES]
    feats = [features(m) for m in items]
    by_id = {m.id: m for m in items}
    both: dict[tuple[str, str], list[int]] = defaultdict(list)
    positive: dict[tuple[str, str], list[int]] = defaultdict(list)
    df: Counter[str] = Counter()
    for f in feats:
        df.update({w for c in f.clauses for w in c.words})
    probes: list[tuple[int, set[str], set[str]]] = []
    positive_words: list[set[str]] = []
    all_gates: list[set[str]] = []
    for index, f in enumerate(feats):
        keys = {f"value:{s}" for s in f.values}
        keys.update(f"alt:{name}" for name in f.alternatives)
        keys.update(f"ant:{concept}" for concept, _, _, _ in f.antonyms)
        gates = _gates(f)
        all_gates.append(gates)
        positive_words.append({w for c in f.clauses if not c.negated for w in c.words})
        for gate in gates:
            for key in keys:
                both[(gate, key)].append(index)
        probe: set[str] = set()
        for clause in f.clauses:
            if clause.negated and len(clause.words) >= 2:
                # the negation rule needs half the clause's words shared: one of its
                # rarest ceil(k/2) + 1 words must be among them (a prefix filter)
                ranked = sorted(clause.words, key=lambda w: (df[w], w))
                probe.update(ranked[: len(ranked) - math.ceil(len(ranked) / 2) + 1])
        if probe:
            probes.append((index, gates, probe))
    # Only a probe looks words up: the others need no posting.
    probed = {w for _, _, probe in probes for w in probe}
    for index, (gates, pos_words) in enumerate(zip(all_gates, positive_words, strict=True)):
        looked_up = pos_words & probed
        for gate in gates:
            for word in looked_up:
                positive[(gate, word)].append(index)
    pairs: set[tuple[int, int]] = set()
    for members in both.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                pairs.add((members[x], members[y]))
    for x, gates, probe in probes:
        negated_clauses = [(words, max(2, math.ceil(len(words) / 2)))
                           for c in feats[x].clauses if c.negated and len(words := c.words) >= 2]
        seen: set[int] = set()  # the check depends on the pair only: once per y
        for gate in gates:
            for word in probe:
                for y in positive.get((gate, word), ()):
                    if y in seen:
                        continue
                    seen.add(y)
                    pair = (x, y) if x < y else (y, x)
                    if x == y or pair in pairs:
                        continue
                    # cheap check before compare(): enough of some negated clause shared
                    theirs = positive_words[y]
                    for words, need in negated_clauses:
                        if len(words & theirs) >= need:
                            pairs.add(pair)
                            break
    conflicts: list[Contradiction] = []
    for x, y in pairs:
        fa, fb = feats[x], feats[y]
        if fa.id == fb.id or not related(fa, fb):
            continue
        ma, mb = by_id[fa.id], by_id[fb.id]
        if _linked(ma, mb, ("related", "extends")):
            continue
        reasons = compare(fa, fb)
        if reasons:
            a, b = sorted((fa.id, fb.id))
            conflicts.append(Contradiction(a, b, reasons,
                                      acknowledged=_linked(ma, mb, ("contradicts",))))
    conflicts.sort(key=lambda c: (c.a, c.b))
    return conflicts


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
    """Conflicts between one (new or changed) memory and the others: the notice on
    write, and the update of a cached result. `cache` keeps the others' features
    (by id) for a caller that compares many memories against the same set."""
    mine = features(memory)
    out: list[Contradiction] = []
    for other in others:
        if other.id == memory.id or other.status not in model.LIVE_STATUSES:
            continue
        if not may_meet(mine.tags, mine.paths, other.tags, other.paths):
            continue  # the gate, before the costlier features
        theirs = cache.get(other.id) if cache is not None else None
        if theirs is None:
            theirs = features(other)
            if cache is not None:
                cache[other.id] = theirs
        if _linked(memory, other, ("related", "extends")):
            continue
        reasons = compare(mine, theirs)
        if reasons:
            out.append(Contradiction(memory.id, other.id, reasons,
                                acknowledged=_linked(memory, other, ("contradicts",))))
    return out


def update(previous: Sequence[Contradiction], memories: Iterable[model.Memory],
           touched: set[str]) -> list[Contradiction]:
    """`find` for the same memories, given its earlier result and which ids changed."""
    live = [m for m in memories if m.status in model.LIVE_STATUSES]
    out = [c for c in previous if c.a not in touched and c.b not in touched]
    changed = [m for m in live if m.id in touched]
    done: set[str] = set()
    for memory in changed:
        others = [m for m in live if m.id not in done]
        for found in against(memory, others):
            a, b = sorted((found.a, found.b))
            out.append(Contradiction(a, b, found.reasons, found.acknowledged))
        done.add(memory.id)
    out.sort(key=lambda c: (c.a, c.b))
    return out
