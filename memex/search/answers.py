"""What kind of answer a question asks for, and whether a text holds one (pure).

"When did we move to Postgres?" wants a time, "how many workers run?" a number,
"where is the cache kept?" a place or a path. A memory that matches the question's
words *and* holds an answer of that kind is more likely the one asked about than
one that only repeats the question ("when should we upgrade?"), so search boosts it
(search.ANSWER_BOOST). Only English question forms are recognised; any other query
has no kind and is ranked as before.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from memex.core import lazyre

_MONTHS = ("january february march april may june july august september october "
           "november december")
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
# What a question is asked for compiles with this module; what holds an answer (only
# a question's candidates are looked at) where first used.
_WORD = lazyre.compile(r"[^\W_]+")


# A needed part: what a text must hold for the part to match (a substring, one of a few
# substrings, a match of a pattern far cheaper to look for than the part, or a test of
# the text), None for nothing; then the part.
Needs = str | tuple[str, ...] | re.Pattern[str] | Callable[[str], bool] | None
Part = tuple[Needs, re.Pattern[str]]


@dataclass(frozen=True)
class AnswerKind:
    """A kind of answer: the questions that ask for it and what in a text holds one."""

    name: str
    question: re.Pattern[str]
    words: frozenset[str]  # any of these (lower case letters and digits) in a text answers
    pattern: re.Pattern[str] | None = None  # ... and so does a match of this
    # PATTERN as its alternatives (it is their alternation: `either`), each looked for
    # only in a text that holds what it needs: one pattern of four alternatives tried
    # at every place of a 3 KB memory took ~0.5-1 ms, and a question looks at 60.
    parts: tuple[Part, ...] = ()

    def answered_by(self, text: str) -> bool:
        if self.words and _holds_a_word(self.words, text):
            return True
        if self.parts:
            return any(_holds(needs, text) and part.search(text) is not None
                       for needs, part in self.parts)
        return self.pattern is not None and self.pattern.search(text) is not None


def _holds(needs: Needs, text: str) -> bool:
    if needs is None:
        return True
    if isinstance(needs, str):
        return needs in text
    if isinstance(needs, tuple):
        return any(one in text for one in needs)
    if callable(needs):
        return needs(text)
    return needs.search(text) is not None


_DIGIT = lazyre.compile(r"\d")


def holds_a_digit(text: str) -> bool:
    """Whether TEXT holds a digit (what `\\d` matches): in an ASCII text by a scan for
    each of the ten (~3 us a 3 KB text; the pattern ~30, the number part ~90)."""
    if text.isascii():
        return any(digit in text for digit in "0123456789")
    return _DIGIT.search(text) is not None


def holds_a_capital(text: str) -> bool:
    """Whether TEXT may hold a capital letter: not every cased letter of it is lower
    case (str.islower, ~2 us a 3 KB text; the name part it guards ~80)."""
    return not text.islower()


# An ASCII text's bytes with every one but a letter or a digit made a space and the
# letters lowered: its words ([^\W_]+ of its lower case, as _WORD finds them) are then
# the runs between spaces.
_ASCII_WORDS = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122
                     else 32 for c in range(256))


def _holds_a_word(words: frozenset[str], text: str) -> bool:
    """Whether one of WORDS (lower case letters and digits) is a word of TEXT, by a set
    lookup per word of the text (a regex alternation of WORDS costs ~10x more); an
    ASCII text's words split from its bytes (a third of the time _WORD takes)."""
    if text.isascii():
        return not _as_bytes(words).isdisjoint(
            text.encode("ascii").translate(_ASCII_WORDS).split())
    return not words.isdisjoint(_WORD.findall(text.lower()))


@functools.cache
def _as_bytes(words: frozenset[str]) -> frozenset[bytes]:
    return frozenset(word.encode("ascii") for word in words)


def either(*parts: tuple[Needs, str]) -> tuple[re.Pattern[str], tuple[Part, ...]]:
    """The pattern of these alternatives (NEEDS, SOURCE), and the parts (AnswerKind)."""
    return (lazyre.compile("|".join(source for _, source in parts)),
            tuple((needs, lazyre.compile(source)) for needs, source in parts))


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EXTENSIONS = ("py|pyi|js|mjs|ts|tsx|jsx|toml|ya?ml|json|jsonc|md|rst|txt|sh|bash|zsh|cfg|"
               "ini|conf|env|lock|sql|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|html|"
               "css|scss|xml|gradle|mk|tf|proto|csv|log|sqlite|db")

KINDS = (
    AnswerKind(
        "time",
        # "When did / was / is ..." asks for a time; "when should I ..." and "when using
        # X" are conditions, not questions about a time.
        re.compile(r"\s*(?:when\s+(?:did|was|were|is|are|will|has|have|had)\b|"
                   r"what\s+(?:date|day|year|month)\b|what\s+time\b(?!\s+zones?\b)|"
                   r"(?:in\s+)?which\s+(?:year|month|day|date)\b)", re.IGNORECASE),
        _words("yesterday today tonight tomorrow ago last next week weeks weekend month "
               f"months year years recently morning evening night since {_MONTHS} {_DAYS}"),
        # a year: "19" or "20" in the text first (~15x less than the pattern's scan)
        *either((("19", "20"), r"\b(?:19|20)\d\d\b"))),
    AnswerKind(
        "number",
        re.compile(r"\s*how\s+(?:many|much|long|often|old)\b", re.IGNORECASE),
        _words("one two three four five six seven eight nine ten eleven twelve twenty "
               "hundred dozen once twice several few couple first second third"),
        # A number standing alone: not the digit of k8s, python3 or sha256, nor v1.2 (a
        # digit in the text first: a text with none is passed over in ~3 us, not ~90).
        *either((holds_a_digit, r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w.]|\.\w)"))),
    AnswerKind(
        "place",
        re.compile(r"\s*(?:where\b(?!\s+clauses?\b)|(?:in\s+)?which\s+(?:city|country|"
                   r"place|town|file|folder|directory|path|module|repo|repository)\b)",
                   re.IGNORECASE),
        frozenset(),
        # A capitalised name after a preposition ("in Paris", "at the Louvre"; case
        # matters here), an absolute or home path ("/etc/memex", "~/.cache"; not the
        # "CI/CD" of a word pair), a folder ("src/memex/") or a file ("src/cache.py",
        # "README.md"; not "Node.js").
        *either((holds_a_capital, r"\b(?:in|at|to|from|near|around|visited|visit)\s+"
                                  r"(?:the\s+)?[A-Z][a-z]+"),
                ("/", r"(?<![\w/.~])(?:~|\.{1,2})?/[\w.-]+"),
                ("/", r"\b[\w.-]+/(?:[\w.-]+/)*(?=\s|$)"),
                # the file's extension after its dot: what any match of the part holds
                (lazyre.compile(rf"\.(?:{_EXTENSIONS})\b"),
                 rf"\b(?:[a-z_0-9][\w-]*|[A-Z0-9_-]{{2,}})\.(?:{_EXTENSIONS})\b"))),
)


def kind_of(question: str) -> AnswerKind | None:
    """The kind of answer a question asks for, or None for any other query."""
    for kind in KINDS:
        if kind.question.match(question):
            return kind
    return None
