"""The contradiction check's tokens are cut without its token pattern (issue 18: capture's
first check with a tag extracts the features of hundreds of memories): a byte table and a
split must give exactly what the pattern finds, whatever the text holds (non-ASCII
letters, combining marks, surrogates, the characters a token may hold inside)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from memex.workflows import conflicts

# the pattern as conflicts writes it
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_+#'./-]*[a-z0-9+#]|[a-z0-9]")

_TEXT = st.text(st.sampled_from("az09_+#'./- \n,:;!?Aé\u0130\u0308\ue000\ud800中٣"),
                max_size=60) | st.text()


@given(_TEXT)
@example("node.js v18.2 c++ c# -x- _a_ ./b/ 'q' x+ #y")  # the strips at both ends
@example("na\u0308ive \u0130stanbul caf\u00e9s")  # non-ASCII: a separator, as for the pattern
@example("a\ud800b")  # a lone surrogate is one separator
@example("__ -- .. ++ ##")  # runs with nothing a token may start with
def test_tokens_are_what_the_token_pattern_finds(text: str) -> None:
    assert conflicts._tokens(text) == tuple(_TOKEN.findall(text))
    assert conflicts._tokens(text.lower()) == tuple(_TOKEN.findall(text.lower()))


class _Counting:
    """The token pattern, counting what it is asked."""

    def __init__(self) -> None:
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        self.calls += 1
        return getattr(_TOKEN, name)


def test_features_are_extracted_without_the_token_pattern(monkeypatch: Any) -> None:
    counting = _Counting()
    monkeypatch.setattr(conflicts, "_TOKEN", counting)
    feats = conflicts.features_of(
        "m1", "Package manager", "We use pnpm, not npm. Enable the cache before deploys; "
        "the timeout is 30s.", ["build"], [])
    assert counting.calls == 0
    # and they are what the rules need
    assert feats.alternatives["package manager"] == ({"pnpm"}, {"npm"})
    assert feats.values == {"timeout": {"30s"}}
    assert [a[:2] for a in feats.antonyms] == [("enable", 1), ("before", 1)]


# the clause cut as conflicts wrote it before (one alternative per word)
_CLAUSE_SPLIT = re.compile(r",\s*|\s+but\s+|\s+whereas\s+|\s+-{1,2}\s+|:\s+")
_CLAUSE_TEXT = st.lists(st.sampled_from([
    " ", "  ", "\t", "\n", "\u00a0", "\u2003", ",", ":", "-", "--", "---", "but", "whereas",
    "bu", "butt", "a", "w", "x"]), max_size=40).map("".join) | st.text()


@given(_CLAUSE_TEXT)
@example("one, two:  three -- four - five but six whereas seven")
@example("a  \t but  b \u00a0whereas\u00a0 c --- d : e :f")
def test_clauses_are_cut_where_the_old_pattern_cut_them(text: str) -> None:
    assert conflicts._CLAUSE_SPLIT.split(text) == _CLAUSE_SPLIT.split(text)
