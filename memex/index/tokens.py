"""Text as the index sees it: CJK runs cut into overlapping two-character pieces, and
query text reduced to a plain token alphabet (pure).

SQLite's unicode61 tokenizer keeps a run of Chinese or Japanese characters as one
token, so "依赖管理" would only match itself. `segment` rewrites every CJK run into
its bigrams ("依赖 赖管 管理") at index time and at query time, so any two-character
piece finds its text. Latin text passes through unchanged for unicode61 + porter.
"""

from __future__ import annotations

import re
import unicodedata

from memex.core import lazyre

# Han (with extensions and compatibility ideographs), kana, Hangul.
_CJK_CLASS = (
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
    "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af"
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
# The token alphabet: letters and digits of any script (unicode61 splits on the rest,
# including '_', punctuation, symbols and emoji).
_WORD = re.compile(r"[^\W_]+")

MAX_QUERY_TERMS = 32
MAX_QUERY_CHARS = 4096

# English function words and question words: they match nearly every memory.
_STOP_TEXT = """
a about above after again against all also am an and another any are as at be because been
before being below between both but by can cannot could did didn do does doesn doing don
down during each else ever every few for from further get got had has hasn have haven having he
her here hers herself him himself his how i if in into is isn it its itself just let me
many more most much must my myself no nor not now of off on once only or other ought our ours
ourselves out over own really same shall she should so some such than that the their
theirs them themselves then there these they this those through to too under until up upon
us very was wasn way we were weren what whatever when where whether which while who whom
whose why will with within without would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

# How questions are framed, not what they ask about, dropped from queries only (a
# memory's own text keeps them): "what kind of", "the type of", "according to", "what
# things", and the reporting verb of "did X say ..." / "does X mention ...". Only in
# those frames: "type hints", "how do mentions work" and "say hello" keep their words.
_FRAMES = (  # group 1, when there is one, is kept
    re.compile(r"\b(?:kinds?|types?|sorts?)\s+of\b", re.IGNORECASE),
    re.compile(r"\baccording\s+to\b", re.IGNORECASE),
    re.compile(r"\b(what|which|some|any)\s+things?\b", re.IGNORECASE),
    re.compile(r"\b((?:did|does|do|has|have|had)(?:\s+[^\W_]+){1,4}?)\s+"
               r"(?:say|says|said|mention|mentions|mentioned)\b", re.IGNORECASE),
)


def drop_framing(text: str) -> str:
    """A query without its question framing (see _FRAMES)."""
    for frame in _FRAMES:
        text = frame.sub(lambda m: f"{m.group(1)} " if m.groups() else " ", text)
    return text


# Question words and particles of Chinese (both scripts), Japanese and Korean, removed
# from a query before it is cut into bigrams, so they neither match noise nor form
# bigrams with their neighbours. Longer words first: the pattern is an alternation.
CJK_QUESTION_WORDS = (
    "为什么", "為什麼", "什么样", "什麼樣", "怎么样", "怎麼樣", "是什么", "是什麼",
    "什么", "什麼", "怎么", "怎麼", "怎样", "怎樣", "如何", "为何", "為何", "哪里", "哪裡",
    "哪儿", "哪兒", "哪个", "哪個", "哪些", "哪", "多少", "几个", "幾個", "谁", "誰",
    "何时", "何時", "请问", "請問", "吗", "嗎", "呢", "吧",
    "なぜ", "どうして", "どう", "どこ", "いつ", "だれ", "なに", "なん", "ですか", "ますか",
    "무엇", "어떻게", "왜", "어디", "언제", "누가", "누구",
)
_CJK_QUESTION = lazyre.compile("|".join(re.escape(w) for w in CJK_QUESTION_WORDS))


def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) < 2:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


# A byte -> 1 if it is not ASCII, else 0: where a text's non-ASCII characters begin and
# end, found with one encode, one translate and a find each way (~1-2 ns a character).
_NOT_ASCII = bytes(byte >= 0x80 for byte in range(256))


def segment(text: str) -> str:
    """Text with each CJK run replaced by its overlapping bigrams (index and query).
    Every CJK run lies between the text's first and last non-ASCII characters, and
    what lies outside them is ASCII (so a character's place there is its byte's place
    in the UTF-8): only that span is searched and rewritten, the same text as a sub
    over the whole (the regex scan costs ~20 ns a character of a UCS-2 text: a 3 KB
    body with one CJK phrase paid ~130 us for two passes)."""
    if text.isascii():
        return text
    marks = text.encode("utf-8", "surrogatepass").translate(_NOT_ASCII)
    start = marks.find(1)
    end = len(text) - (len(marks) - 1 - marks.rfind(1))
    span = text[start:end]
    if not _CJK_RUN.search(span):
        return text
    return text[:start] + _CJK_RUN.sub(_bigrams, span) + text[end:]


def has_cjk(text: str) -> bool:
    return not text.isascii() and bool(_CJK_RUN.search(text))


def query_terms(text: str, keep_stop_words: bool = False) -> list[str]:
    """The distinct search terms of a query, in order: any input becomes plain tokens.

    Quotes, FTS operators (AND, NEAR(, *, -), emoji and punctuation are dropped by
    the alphabet; stop words, question framing (drop_framing) and CJK question words
    are dropped; very long input is
    cut to its first terms. An empty list means nothing searchable was left.
    """
    text = unicodedata.normalize("NFKC", text[:MAX_QUERY_CHARS])
    if not keep_stop_words:
        text = drop_framing(text)
    if has_cjk(text):
        text = _CJK_QUESTION.sub(" ", text)
        text = segment(text)
    out: list[str] = []
    seen: set[str] = set()
    for raw in _WORD.findall(text):
        word = raw.lower()
        if (word in STOP_WORDS and not keep_stop_words) or word in seen:
            continue
        if len(word) == 1 and not has_cjk(word) and not word.isdigit():
            continue  # a lone Latin letter matches almost everything
        seen.add(word)
        out.append(word)
        if len(out) >= MAX_QUERY_TERMS:
            break
    return out


def words(text: str) -> list[str]:
    """Every term of a text as a query would see it (CJK as bigrams, stop words and
    lone letters dropped), repeats kept: for pseudo-relevance feedback."""
    text = unicodedata.normalize("NFKC", text)
    if has_cjk(text):
        text = segment(text)
    out = []
    for raw in _WORD.findall(text):
        word = raw.lower()
        if word in STOP_WORDS or (len(word) == 1 and not has_cjk(word)):
            continue
        out.append(word)
    return out


def fts_phrase(term: str, prefix: bool = False) -> str:
    """A term as an FTS5 string (terms hold only letters and digits, so quoting is safe)."""
    return f'"{term}"' + ("*" if prefix else "")
