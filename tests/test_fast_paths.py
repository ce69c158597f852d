"""Shortcuts taken for large stores give exactly what the plain code gives: the
summary of a long body from its prefix."""

from __future__ import annotations

import random

from memex.core import model


def _summary_in_full(title: str, body: str, limit: int) -> str:
    """model.summarise as it was: the whole body normalised."""
    text = title.strip()
    first_body = " ".join(body.split())
    if text and first_body and first_body.lower() != text.lower():
        text = f"{text}: {first_body}"
    elif not text:
        text = first_body
    text = model.escape_controls(" ".join(text.split()))
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "\u2026"
    return text


def test_a_summary_from_the_body_s_start_is_the_summary_of_the_whole() -> None:
    rng = random.Random(7)
    pieces = ["a", "B", " ", "\n", "\t", "\u0130", "\u00df", "\u2028", "x" * 50, " " * 300,
              "\u00e9", "\x1b"]
    for _ in range(600):
        title = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 200)))
        if rng.random() < 0.3:
            body = title + body if rng.random() < 0.5 else title
        body *= rng.randint(1, 30)
        for limit in (240, 20, 5):
            assert model.summarise(title, body, limit) == \
                _summary_in_full(title, body, limit), (title, body, limit)
    title = "\u0130" * 100  # lower-cased, twice as long
    assert model.summarise(title, title.lower() * 3) == \
        _summary_in_full(title, title.lower() * 3, 240)
