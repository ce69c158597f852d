"""The secret detector's faster scans find exactly what the regular expressions they
replace find: the long runs of token characters (redact.runs against redact._RUN)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import redact

# Run characters, their neighbours in ASCII, a space, a line break and non-ASCII text.
_ALPHABET = "aZ09_.~+/=:@%|-!#$&*'\" \n\t,;()[]{}<>?^`\\é依\x7f\x00"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_ALPHABET), st.integers(1, 20)), max_size=30))
def test_runs_are_the_regular_expressions_matches(parts: list[tuple[str, int]]) -> None:
    text = "".join(char * count for char, count in parts)
    assert redact.runs(text) == [m.span() for m in redact._RUN.finditer(text)]


def test_runs_at_the_edges_of_a_text() -> None:
    token = "A1b2" * 4  # 16 run characters: the shortest run
    for text in (token, " " + token, token + " ", token[:-1], f"{token}:{token} {token}é",
                 f"x {token[:-1]} y", "", "é" + token, token + "\n" + token):
        assert redact.runs(text) == [m.span() for m in redact._RUN.finditer(text)], text
