"""Query text reduced to a token alphabet; CJK runs cut into bigrams (pure)."""

from __future__ import annotations

import random

from memex.index import tokens
from memex.index.tokens import query_terms, segment


def test_segment_cuts_cjk_runs_into_overlapping_bigrams() -> None:
    assert segment("pnpm的依赖管理").split() == ["pnpm", "的依", "依赖", "赖管", "管理"]
    assert segment("用 ruff").split() == ["用", "ruff"]
    assert segment("plain text") == "plain text"
    assert segment("データ").split() == ["デー", "ータ"]
    assert segment("데이터").split() == ["데이", "이터"]


def test_segment_of_the_non_ascii_span_equals_a_sub_over_the_whole_text() -> None:
    # segment rewrites only the span from the first to the last non-ASCII character;
    # the regex over the whole text is the rule it must equal
    pieces = ["a", " ", "\n", "ruff", "依赖", "管", "データ", "데이터", "\u2014", "é", "\U00020001",
              "\ud800", "😀", "\u3000", "ｶ", "x\u0301", "\t", "_"]
    rng = random.Random(35)
    texts = ["", "依", "a依", "依a", "\u2014", "é依é", "依\u2014依"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randrange(1, 12)))
              for _ in range(3000)]
    for text in texts:
        whole = tokens._CJK_RUN.sub(tokens._bigrams, text)
        assert segment(text) == whole, repr(text)
    body = "plain words " * 200 + "pnpm的依赖管理" + " more words" * 100
    assert segment(body) == tokens._CJK_RUN.sub(tokens._bigrams, body)
    assert segment(body).count("依赖") == 1


def test_operators_quotes_and_symbols_become_plain_terms() -> None:
    assert query_terms('"deploy AND NEAR(staging, 3) -prod* 🎉 col:x ^y') == [
        "deploy", "near", "staging", "3", "prod", "col"]
    assert query_terms('"""') == []
    assert query_terms("🎉🎉") == []


def test_stop_words_dropped_unless_nothing_else_is_left() -> None:
    assert query_terms("What is the pnpm rule?") == ["pnpm", "rule"]
    assert query_terms("the who") == []
    assert query_terms("the who", keep_stop_words=True) == ["the", "who"]


def test_long_input_is_capped() -> None:
    text = " ".join(f"word{i}" for i in range(5000))
    terms = query_terms(text)
    assert 0 < len(terms) <= 32


def test_cjk_question_words_dropped_before_bigrams() -> None:
    terms = query_terms("数据库是什么？")
    assert "什么" not in terms and "是什" not in terms
    assert "数据" in terms and "据库" in terms
    assert query_terms("如何用 ruff 检查") == ["用", "ruff", "检查"]
    assert "為什" not in query_terms("為什麼資料庫很慢")
