"""Keyword capture: find "remember ...", "TIL ...", "记住..." in what a user typed.

Each line of a message is one utterance and makes at most one memory. Patterns are
tried in order and the first match claims the line: "about me" patterns (remember
for me, 记住我, 替我记, 我觉得, 我喜欢) come first and route to personal; "about us"
patterns (我们决定, 帮我们记住, plain 记住, remember, note that, TIL, save this:) route
to project. `记住我们` is about us: the personal patterns refuse a 我 followed by 们.

Only user text is scanned: fenced code and quoted lines (`> ...`, usually pasted
assistant output or logs) are skipped, and so are questions ("remember when ...?").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from memex.core.errors import MemexError
from memex.storage.homes import Workspace
from memex.workflows import writes

_POLITE_EN = r"(?:(?:please|pls|hey|ok|okay|also|and)\s*[,:]?\s*)?"
_POLITE_ZH = r"(?:请|麻烦|麻烦你|帮忙)?"
_SEP = r"[\s:：,，\-—]*"
_QUESTION = re.compile(r"[?？]\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SENTENCE = re.compile(r"[^.!?。！？]*(?:[.!?。！？]+|$)", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    name: str
    scope: str
    type: str
    pattern: re.Pattern[str]


def _rule(name: str, scope: str, mtype: str, regex: str) -> Rule:
    return Rule(name, scope, mtype, re.compile(regex, re.IGNORECASE))


# Order matters: the first rule that matches a line claims it.
RULES: tuple[Rule, ...] = (
    # about me -> personal
    _rule("remember for me", "personal", "knowledge",
          rf"^{_POLITE_EN}remember\s+(?:this\s+)?(?:for|about)\s+me\b{_SEP}(?:that\s+)?(?P<text>.*)$"),
    _rule("替我记", "personal", "knowledge",
          rf"^{_POLITE_ZH}(?:替我|帮我|给我)(?:记住|记下|记一下|记){_SEP}(?P<text>.*)$"),
    _rule("记住我", "personal", "knowledge",
          rf"^{_POLITE_ZH}记住{_SEP}(?P<text>我(?!们).*)$"),
    _rule("我喜欢", "personal", "preference",
          r"^(?P<text>我(?:不喜欢|更喜欢|喜欢|偏好|习惯).+)$"),
    _rule("我觉得", "personal", "observation",
          r"^(?P<text>我(?:觉得|认为).+)$"),
    # about us -> project
    _rule("remember for us", "project", "knowledge",
          rf"^{_POLITE_EN}remember\s+(?:this\s+)?(?:for|about)\s+us\b{_SEP}(?:that\s+)?(?P<text>.*)$"),
    _rule("帮我们记住", "project", "knowledge",
          rf"^{_POLITE_ZH}(?:帮我们|替我们|给我们)(?:记住|记下|记一下|记){_SEP}(?P<text>.*)$"),
    _rule("我们决定", "project", "decision",
          r"^(?P<text>我们(?:决定|约定|规定|商定).+)$"),
    _rule("我们认为", "project", "knowledge",
          r"^(?P<text>我们(?:认为|觉得).+)$"),
    _rule("记住", "project", "knowledge",
          rf"^{_POLITE_ZH}(?:记住|记下|记一下){_SEP}(?P<text>.*)$"),
    _rule("remember", "project", "knowledge",
          rf"^{_POLITE_EN}remember\b(?:\s+that\b)?{_SEP}(?P<text>.*)$"),
    _rule("note that", "project", "knowledge",
          rf"^{_POLITE_EN}(?:note\s+that\b|note\s*:){_SEP}(?P<text>.*)$"),
    _rule("TIL", "project", "lesson",
          rf"^TIL\b{_SEP}(?:that\s+)?(?P<text>.*)$"),
    _rule("save this", "project", "knowledge",
          rf"^{_POLITE_EN}save\s+this\s*[:：\-—]\s*(?P<text>.*)$"),
)


@dataclass(frozen=True)
class Match:
    """One utterance to remember: where it goes and what it says."""

    rule: str
    scope: str
    type: str
    text: str
    line: int  # 1-based line of the trigger


def _user_lines(message: str) -> Iterator[tuple[int, str]]:
    """Lines a person typed: outside code fences, not quoted."""
    in_fence = False
    for number, raw in enumerate(message.replace("\r\n", "\n").split("\n"), start=1):
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence or raw.lstrip().startswith(">"):
            yield number, ""
            continue
        yield number, raw


def _clean(line: str) -> str:
    """Strip list markers and emphasis so '- **Remember** x' reads as 'Remember x'."""
    text = line.strip()
    text = re.sub(r"^(?:[-*+•]|\d+[.)])\s+", "", text)
    text = re.sub(r"^\*\*([^*]+)\*\*", r"\1", text)
    return text.strip()


def _drop_questions(text: str) -> str:
    """TEXT without its trailing questions: "remember when...?" is not a memory, and
    "TIL x. How do we y?" keeps only "TIL x."."""
    sentences = [x for x in _SENTENCE.findall(text) if x.strip()]
    while sentences and _QUESTION.search(sentences[-1]):
        sentences.pop()
    return "".join(sentences).strip()


def _refine_type(rule: Rule, text: str) -> str:
    """A generic trigger whose text is itself a preference ("记住我喜欢...")."""
    if rule.type == "knowledge":
        for other in RULES:
            if other.type != "knowledge" and other.scope == rule.scope \
                    and other.pattern.match(text):
                return other.type
    return rule.type


def find_matches(message: str) -> list[Match]:
    """Every trigger in MESSAGE, one memory per utterance (pure)."""
    lines = list(_user_lines(message))
    found: list[Match] = []
    index = 0
    while index < len(lines):
        number, raw = lines[index]
        index += 1
        line = _clean(raw)
        if not line:
            continue
        for rule in RULES:
            hit = rule.pattern.match(line)
            if hit is None:
                continue
            text = hit.group("text").strip()
            if not text:
                # "remember:" on its own line: the following lines, to a blank one.
                body: list[str] = []
                while index < len(lines) and _clean(lines[index][1]):
                    body.append(lines[index][1].strip())
                    index += 1
                text = "\n".join(body).strip()
            text = _drop_questions(text)
            if len(text) >= 2:
                found.append(Match(rule.name, rule.scope, _refine_type(rule, text), text,
                                   number))
            break
    return found


def capture_message(ws: Workspace, message: str, dry_run: bool = False,
                    scopes: tuple[str, ...] = ("personal", "project")
                    ) -> tuple[list[writes.WriteResult], list[str]]:
    """Save every trigger in MESSAGE (source keyword, via hook); returns results, errors.

    A match whose scope is not in SCOPES is skipped (reported as an error line).
    One failing match does not stop the others.
    """
    results: list[writes.WriteResult] = []
    errors: list[str] = []
    for match in find_matches(message):
        if match.scope not in scopes:
            errors.append(f"line {match.line}: {match.scope} capture is turned off here")
            continue
        request = writes.CaptureRequest(
            text=match.text, scope=match.scope, type=match.type, source="keyword", via="hook",
        )
        try:
            results.append(writes.capture(ws, request, dry_run=dry_run))
        except MemexError as exc:
            errors.append(f"line {match.line}: {exc}")
    return results, errors
