"""What kind of answer a question asks for, and whether a text holds one (pure).

"When did we move to Postgres?" wants a time, "how many workers run?" a number,
"where is the cache kept?" a place or a path. A memory that matches the question's
words *and* holds an answer of that kind is more likely the one asked about than
one that only repeats the question ("when should we upgrade?"), so search boosts it
(search.ANSWER_BOOST). Only English question forms are recognised; any other query
has no kind and is ranked as before.
"""

from __future__ import annotations

import re

from memex.core import lazyre
from memex.core.records import dataclass

_MONTHS = ("january february march april may june july august september october "
           "november december")
_DAYS = "monday tuesday wednesday thursday friday saturday sunday"
# What a question is asked for compiles with this module; what holds an answer (only
# a question's candidates are looked at) where first used.
_WORD = lazyre.compile(r"[^\W_]+")


@dataclass(frozen=True)
class AnswerKind:
    """A kind of answer: the questions that ask for it and what in a text holds one."""

    name: str
    question: re.Pattern[str]
    words: frozenset[str]  # any of these (lower case) in a text answers ...
    pattern: re.Pattern[str] | None = None  # ... and so does a match of this

    def answered_by(self, text: str) -> bool:
        # A set lookup per word: a regex alternation of the words costs ~10x more.
        if self.words and not self.words.isdisjoint(_WORD.findall(text.lower())):
            return True
        return self.pattern is not None and self.pattern.search(text) is not None


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
        lazyre.compile(r"\b(?:19|20)\d\d\b")),
    AnswerKind(
        "number",
        re.compile(r"\s*how\s+(?:many|much|long|often|old)\b", re.IGNORECASE),
        _words("one two three four five six seven eight nine ten eleven twelve twenty "
               "hundred dozen once twice several few couple first second third"),
        # A number standing alone: not the digit of k8s, python3 or sha256, nor v1.2.
        lazyre.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w.]|\.\w)")),
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
        lazyre.compile(r"\b(?:in|at|to|from|near|around|visited|visit)\s+(?:the\s+)?"
                       r"[A-Z][a-z]+|(?<![\w/.~])(?:~|\.{1,2})?/[\w.-]+|"
                       r"\b[\w.-]+/(?:[\w.-]+/)*(?=\s|$)|"
                       rf"\b(?:[a-z_0-9][\w-]*|[A-Z0-9_-]{{2,}})\.(?:{_EXTENSIONS})\b")),
)


def kind_of(question: str) -> AnswerKind | None:
    """The kind of answer a question asks for, or None for any other query."""
    for kind in KINDS:
        if kind.question.match(question):
            return kind
    return None
