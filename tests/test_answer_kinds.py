"""search.answers: whether a text holds the kind of answer a question asks for is
looked for in parts (issue 18: the place pattern's four alternatives, tried at every
place of a 3 KB memory, were ~0.5-1 ms a text and a question looks at 60; an ASCII
text's words are split from its bytes). The answer is the rule's own:
a word of the kind among the text's words, or a match of the kind's whole pattern."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from memex.search import answers


def _by_the_rule(kind: answers.AnswerKind, text: str) -> bool:
    """The kind's rule as written: its words among the text's, or its pattern."""
    if kind.words and not kind.words.isdisjoint(answers._WORD.findall(text.lower())):
        return True
    return kind.pattern is not None and kind.pattern.search(text) is not None


_PIECES = st.sampled_from([
    # words of the kinds, inside other words, in other cases
    "ago", "someone", "often", "written", "Yesterday", "MAY", "may2", "2nd", "one_two",
    "twice", "first-class", "Monday's", "recently.", "weeks", "x9", "_last_", "ten",
    # names after prepositions, paths, folders, files, near misses
    "in", "at", "to", "from", "visited", "the", "Lisbon", "Louvre", "lisbon", "PARIS",
    "~/.cache/memex", "/etc/memex", "src/memex/", "a/b", "CI/CD", "read/write",
    "config.toml", "README.md", "Node.js", "e.g.", "main.c", "x.cpp", "A.PY", ".env",
    "notes.mdx", "log.", "db", ".", "..", "/", "~", "-", "_", "1.2", "v1.2", "k8s",
    "python3", "2024", "1999", "8080", "3,5", "(12)",
    # other scripts and case changes that move lengths
    "é", "Über", "缓存", "ǅ", "İstanbul", "ß", "Ⅻ", "٣", "\u00a0", "\u2028",
])
_SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", "", ",", ". ", "/", "-", "(", ")"])


@st.composite
def _texts(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.tuples(_PIECES | st.text(max_size=6), _SEPARATORS),
                           max_size=8))
    return "".join(piece + sep for piece, sep in pieces)


@settings(max_examples=400)
@given(_texts() | _PIECES)
@example("Yesterday")
@example("We met in MAY")
@example("It ran Twice!")
@example("see config.toml,")
@example("README.md")
@example("under src/memex/")
@example("the 缓存 in Lisbon")
@example("frozen in 2024")
@example("built 1999-12")
@example("\uff13 workers")  # a digit of another script: \\d holds it
@example("build \u0663 of the image")
@example("flew to Zurich")
def test_a_text_holds_a_kind_as_the_rule_says(text: str) -> None:
    for kind in answers.KINDS:
        assert kind.answered_by(text) is _by_the_rule(kind, text), kind.name


def test_the_parts_are_the_pattern_and_the_words_what_the_ascii_search_finds() -> None:
    for kind in answers.KINDS:
        assert all(re.fullmatch(r"[a-z0-9]+", word) for word in kind.words)
        if kind.parts:
            assert kind.pattern is not None
            assert kind.pattern.pattern == "|".join(part.pattern for _, part in kind.parts)
    [place] = [kind for kind in answers.KINDS if kind.name == "place"]
    assert len(place.parts) == 4
    [time] = [kind for kind in answers.KINDS if kind.name == "time"]
    assert [needs for needs, _ in time.parts] == [("19", "20")]


def test_a_part_is_looked_for_only_where_its_need_is_held() -> None:
    looked: list[str] = []

    class Counting:
        def __init__(self, source: str) -> None:
            self.compiled = re.compile(source)

        def search(self, text: str) -> re.Match[str] | None:
            looked.append(self.compiled.pattern)
            return self.compiled.search(text)

    kind = answers.AnswerKind("test", re.compile("x"), frozenset(), None, (
        ("/", Counting(r"\w+/\w+")),  # type: ignore[arg-type]
        (("ab", "cd"), Counting(r"(?:ab|cd)!")),  # type: ignore[arg-type]
        (re.compile("[0-9]"), Counting(r"\d{4}"))))  # type: ignore[arg-type]
    assert kind.answered_by("in 2024") and looked == [r"\d{4}"]
    looked.clear()
    assert kind.answered_by("a/b") and looked == [r"\w+/\w+"]
    looked.clear()
    assert kind.answered_by("x cd!") and looked == [r"(?:ab|cd)!"]
    looked.clear()
    assert not kind.answered_by("no answer") and looked == []


def test_a_number_is_looked_for_only_in_a_text_holding_a_digit() -> None:
    """The number part (~90 us a 3 KB text, tried at every place) only where the text
    holds a digit: an ASCII text is asked for each of the ten, any other for \\d."""
    [number] = [kind for kind in answers.KINDS if kind.name == "number"]
    assert [needs for needs, _ in number.parts] == [answers.holds_a_digit]
    looked: list[str] = []

    class Counting:
        def __init__(self, compiled: re.Pattern[str]) -> None:
            self.compiled = compiled

        def search(self, text: str) -> re.Match[str] | None:
            looked.append(text)
            return self.compiled.search(text)

    counting = answers.AnswerKind("number", number.question, frozenset(), None, tuple(
        (needs, Counting(part)) for needs, part in number.parts))  # type: ignore[misc]
    assert not counting.answered_by("no numbers in this note, v-two") and looked == []
    for text, held in [("it runs 12 workers", True), ("sha256 only", False),
                       ("\uff13 workers", True), ("caf\u00e9 k8s", False),
                       ("caf\u00e9 \u0663", True)]:
        looked.clear()
        assert counting.answered_by(text) is held
        assert looked == [text]
    assert not answers.holds_a_digit("caf\u00e9 \u2167")  # a Roman numeral is no digit


def test_a_name_after_a_preposition_is_looked_for_only_in_a_text_with_a_capital() -> None:
    """The place kind's first part needs a capital letter ([A-Z]): a text whose every
    cased letter is lower case (str.islower) is passed over, any other is looked at."""
    [place] = [kind for kind in answers.KINDS if kind.name == "place"]
    needs, part = place.parts[0]
    assert needs is answers.holds_a_capital and "[A-Z]" in part.pattern
    for text, looked, held in [
            ("we met in lisbon", False, False), ("we met in Lisbon", True, True),
            ("in the LOUVRE", True, False), ("123 / - .", True, False),
            ("\u01c5 in Rome", True, True), ("in \u00dcber", True, False),
            ("\u00fcber in paris", False, False)]:
        assert answers.holds_a_capital(text) is looked
        assert (looked and part.search(text) is not None) is held
