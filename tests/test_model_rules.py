"""Pure rules of the model that several workflows share: "same content"."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import model
from memex.core.errors import InvalidMemory
from tests.helpers.memfiles import memory


def test_same_content_is_title_and_body_whitespace_aside() -> None:
    a = memory(title="Use  pnpm", body="We use pnpm.\n\nAlways.")
    assert model.same_content(a, a.copy(title="Use pnpm", body=" We use pnpm. Always.\n"))
    assert model.same_content(a, a.copy(tags=["other"], importance="high"))  # fields aside
    assert not model.same_content(a, a.copy(title="Use npm"))
    assert not model.same_content(a, a.copy(body="We use pnpm. Never."))
    assert not model.same_content(a, a.copy(body="WE USE PNPM. ALWAYS."))  # case counts


def test_normalised_text() -> None:
    assert model.normalised_text("  a\n\tb  c \n") == "a b c"
    assert model.normalised_text("") == ""


_SOME = st.one_of(st.none(), st.just(""), st.just([]), st.booleans(), st.integers(-1, 2),
                  st.just({}), st.just({"a": 1}), st.text(max_size=3),
                  st.lists(st.text(max_size=2), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(model.FIELD_ORDER[2:]), _SOME, max_size=8),
       st.dictionaries(st.sampled_from(["x-a", "id", "b"]), _SOME, max_size=2))
def test_the_front_matter_leaves_out_exactly_the_empty_values(
        values: dict[str, object], extra: dict[str, object]) -> None:
    """Every field in FIELD_ORDER but those None, "", [] or False (0 and {} are kept),
    then the unknown keys a field does not already hold: whatever the values' types."""
    m = memory(title="t")
    for name, value in values.items():
        setattr(m, name, value)
    m.extra = dict(extra)
    expected: dict[str, object] = {}
    for name in model.FIELD_ORDER:
        value = getattr(m, name)
        if not (value is None or value == "" or value == [] or value is False):
            expected[name] = value
    for key, value in extra.items():
        expected.setdefault(key, value)
    got = m.front_matter()
    assert list(got.items()) == list(expected.items())
    assert all(type(got[k]) is type(expected[k]) for k in got)


def test_validate_refuses_a_bad_enum_value_after_good_ones() -> None:
    """validate's memory of valid enum combinations never lets an invalid one through."""
    good = memory(title="t")
    model.validate(good)
    model.validate(good)
    for field, bad in (("status", "gone"), ("scope", 5), ("review_state", ""),
                       ("type", "Knowledge"), ("type", ["knowledge"])):
        with pytest.raises(InvalidMemory):
            model.validate(good.copy(**{field: bad}))
