"""The bare-token detector's prefilter is found on the text's bytes translated to character
classes (issue 14: masking a 3 KB memory under 0.2 ms); it must find exactly what the two
regular expressions it stands for find on the text itself, whatever the text holds
(non-ASCII letters and digits, surrogates, symbols)."""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from memex.core import bare_secrets

# the rule as written in bare_secrets' comment, on the text itself
_DIGITS_AROUND_LETTERS = re.compile(r"[0-9][A-Za-z]{1,12}[0-9]")
_CASE_FLIP = re.compile(r"[A-Z](?:[A-Z][a-z]|[a-z]{1,2})[A-Z]")


def _spec(text: str) -> list[int]:
    return sorted({m.start() for p in (_DIGITS_AROUND_LETTERS, _CASE_FLIP)
                   for m in p.finditer(text)})


_TEXT = st.text(st.sampled_from("aeybcdxzAEYBCDXZ0159٣é中ǅ_-. \n\ud800"), max_size=80) | st.text()


@given(_TEXT)
@example("a٣b1c2")  # an Arabic-Indic digit is not [0-9]
@example("Ab\ud800Cd")  # a lone surrogate is one character, one byte
@example("é1ab2 Xy\u00e9Ab")  # a non-ASCII character before a suspect keeps its offset
def test_the_byte_prefilter_finds_what_the_patterns_find(text: str) -> None:
    assert bare_secrets._suspects(text) == _spec(text)
