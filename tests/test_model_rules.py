"""Pure rules of the model that several workflows share: "same content"."""

from __future__ import annotations

from memex.core import model
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
