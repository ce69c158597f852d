"""Redaction of private blocks and secrets in memory text.

Two operations share one detector:

* :func:`redact` rewrites text before it is stored: every ``<private>...</private>`` block
  (case-insensitive tag, may span lines) becomes ``[REDACTED]`` and every recognised secret is
  masked in place with :func:`mask` (first four characters kept, the rest replaced by ``x``, same
  length, so the surrounding text and the line structure are untouched).
* :func:`scan` reports what :func:`redact` would change without changing anything; it is used on
  files that arrived by git (pre-commit hook, ``verify``).

Both are idempotent by construction: a value that is already masked is never a finding, and
:func:`redact` re-runs the detector over its own output until nothing is left, so
``scan(redact(t).text) == []`` always holds.

The module is pure (stdlib only) and every pattern is compiled once at import.  Patterns are
anchored on literal prefixes, have no ambiguous nested quantifiers, are tried only at the start of
a run of token characters and are skipped entirely when their prefix does not occur, so large
inputs are scanned in linear time.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Finding", "Redaction", "mask", "redact", "redact_parts", "scan"]

_KEEP = 4
_MASK_CHAR = "x"
_PLACEHOLDER = "[REDACTED]"

_PRIVATE_KIND = "private-block"
_PEM_KIND = "pem-private-key"
_ASSIGN_KIND = "secret-assignment"


@dataclass(frozen=True)
class Finding:
    """One private block or secret; ``start``/``end`` index the original text."""

    kind: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """The result of :func:`redact`."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def changed(self) -> bool:
        return bool(self.findings)

    def notice(self) -> str:
        """One human-readable line describing what was changed (never the secret itself)."""
        blocks = sum(1 for f in self.findings if f.kind == _PRIVATE_KIND)
        secrets = [f for f in self.findings if f.kind != _PRIVATE_KIND]
        parts: list[str] = []
        if blocks:
            parts.append(f"redacted {blocks} private block{'s' if blocks != 1 else ''}")
        if secrets:
            kinds: list[str] = []
            for f in secrets:
                if f.kind not in kinds:
                    kinds.append(f.kind)
            n = len(secrets)
            parts.append(f"masked {n} secret{'s' if n != 1 else ''} ({', '.join(kinds)})")
        return ", ".join(parts) if parts else "nothing redacted"


def mask(secret: str) -> str:
    """Keep the first four characters of ``secret`` and replace the rest by ``x``."""
    if len(secret) <= _KEEP:
        return secret
    return secret[:_KEEP] + _MASK_CHAR * (len(secret) - _KEEP)


_FIRST_VISIBLE = re.compile(rf"(?:\s*\S){{{_KEEP}}}")
_VISIBLE_RUN = re.compile(r"\S+")
_UNMASKED = re.compile(rf"[^\s{_MASK_CHAR}]")


def _is_masked(value: str) -> bool:
    """Is ``value`` already the output of :func:`mask` (nothing left to hide)?"""
    return not value[_KEEP:].lstrip(_MASK_CHAR)


def _mask_run(m: re.Match[str]) -> str:
    return _MASK_CHAR * (m.end() - m.start())


def _mask_block(body: str) -> str:
    """Like :func:`mask`, but whitespace (line breaks) is preserved and not counted."""
    m = _FIRST_VISIBLE.match(body)
    if m is None:
        return body
    return body[: m.end()] + _VISIBLE_RUN.sub(_mask_run, body[m.end() :])


def _is_masked_block(body: str) -> bool:
    """Is ``body`` already the output of :func:`_mask_block`?"""
    m = _FIRST_VISIBLE.match(body)
    return m is None or _UNMASKED.search(body, m.end()) is None


def _entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    n = len(value)
    if n == 0:
        return 0.0
    log2 = math.log2
    return log2(n) - sum(c * log2(c) for c in map(value.count, set(value))) / n


# --------------------------------------------------------------------------------------------
# Patterns.  Order is priority: when two candidates overlap, the earlier rule wins, so a
# specific token inside an assignment is reported once, with its specific kind.

_CHECK_NONE = 0
_CHECK_SLACK = 1  # at least four digits ("xoxb-your-token-here" is not a token)
_CHECK_MIXED = 2  # the body has a digit, an upper- and a lower-case letter

_ALNUM = "A-Za-z0-9"
_WORD = "A-Za-z0-9_"
_B64URL = "A-Za-z0-9_-"


def _token(prefix: str, before: str, body: str, width: int = 0) -> re.Pattern[str]:
    """Compile ``prefix`` (``width`` characters long, default: a literal) followed by ``body``.

    A match whose prefix is preceded by a ``before`` character is part of a longer word and is
    rejected right after the prefix (a look-behind placed there rather than in front keeps the
    literal-prefix search fast, and means only the start of a run of token characters is ever
    tried, so a long run containing the prefix many times is still scanned once).
    """
    width = width or len(prefix)
    return re.compile(f"{prefix}(?<![{before}].{{{width}}}){body}")


@dataclass(frozen=True)
class _Rule:
    kind: str
    regex: re.Pattern[str]
    needles: tuple[str, ...]  # the regex only runs when one of these occurs in the text
    check: int = _CHECK_NONE
    skip: int = 0  # characters of fixed prefix excluded from the check


_TOKEN_RULES: tuple[_Rule, ...] = (
    _Rule(
        "aws-access-key-id",
        _token("(?:AKIA|ASIA)", _ALNUM, "[A-Z0-9]{16}(?![A-Za-z0-9])", 4),
        ("AKIA", "ASIA"),
    ),
    _Rule(
        "github-token",
        _token("gh[pousr]_", _WORD, "[A-Za-z0-9]{36,}", 4),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _Rule(
        "github-token",
        _token("github_pat_", _WORD, "[A-Za-z0-9_]{60,}"),
        ("github_pat_",),
    ),
    _Rule(
        "gitlab-token",
        _token("glpat-", _B64URL, r"[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*"),
        ("glpat-",),
    ),
    _Rule(
        "slack-token",
        _token("xox[abposr]-", _B64URL, "[A-Za-z0-9-]{10,}", 5),
        ("xox",),
        _CHECK_SLACK,
        5,
    ),
    _Rule(
        "stripe-key",
        _token("[sr]k_(?:live|test)_", _WORD, "[A-Za-z0-9]{16,}", 8),
        ("k_live_", "k_test_"),
    ),
    _Rule(
        "anthropic-api-key",
        _token("sk-ant-", _B64URL, "[A-Za-z0-9_-]{32,}"),
        ("sk-ant-",),
    ),
    _Rule(
        "openai-api-key",
        _token("sk-", _B64URL, "(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}"),
        ("sk-",),
        _CHECK_MIXED,
        3,
    ),
    _Rule(
        "npm-token",
        _token("npm_", _WORD, "[A-Za-z0-9]{36}(?![A-Za-z0-9])"),
        ("npm_",),
    ),
    _Rule(
        "pypi-token",
        _token("pypi-AgEIcHlwaS5vcmc", _B64URL, "[A-Za-z0-9_-]{50,}"),
        ("pypi-AgEIcHlwaS5vcmc",),
    ),
    _Rule(
        "google-api-key",
        _token("AIza", _B64URL, "[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"),
        ("AIza",),
    ),
    _Rule(
        "jwt",
        _token("eyJ", _B64URL, r"[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{16,}"),
        ("eyJ",),
        _CHECK_MIXED,
        3,
    ),
)

_PEM_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Body of a BEGIN without END: the following lines that look like base64 or PEM headers.
_PEM_LOOSE_BODY = re.compile(
    r"(?:[ \t]*\r?\n[ \t]*(?:[A-Za-z0-9+/=]+|[A-Za-z-]+:[^\r\n]*)(?=[ \t]*(?:\r?\n|$)))*"
)

# An assignment is found from its key word, then matched forwards from the end of that word (the
# rest of the key name, which may be anything like AWS_ or client, does not matter).
_ASSIGN_WORD = r"passw(?:or)?d|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key"
_ASSIGN_KEY = re.compile(_ASSIGN_WORD)  # run on the lower-cased text
_ASSIGN_KEY_I = re.compile(_ASSIGN_WORD, re.IGNORECASE)  # when lower() changes the length
_ASSIGN_SUFFIX = re.compile(  # rest of the key name: _KEY, _ACCESS_KEY, Value
    r"(?:[_.-]?(?:key|value|secret|token|access[_-]?key))*", re.IGNORECASE
)
_ASSIGN_VALUE = re.compile(
    r"""
    (?:\*\*|__)?["']?[ \t]*             # closing **bold** or quote around the key
    (?:=>|:=|=(?!=)|:(?![:/]))
    [ \t]*(?:(?:\*\*|__)[ \t]*)?       # "**Password:** value"
    (?P<quote>["'`]?)
    (?P<value>[^\s"'`<>(){}\[\],;|\\]+)
    """,
    re.VERBOSE,
)
_DOTTED_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_PLACEHOLDER_WORDS = re.compile(
    r"example|change[_-]?me|placeholder|redacted|your|dummy|xxxx|\*\*\*\*|\.\.\.",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_SPECIAL = re.compile(r"[^A-Za-z0-9_.-]")
_FOUR_DIGITS = re.compile(r"(?:[^0-9]*[0-9]){4}")
_MIN_ASSIGN_LEN = 8
_MIN_ASSIGN_ENTROPY = 3.0

_PRIVATE_OPEN = re.compile(r"<private\s*>", re.IGNORECASE)
_PRIVATE_CLOSE = re.compile(r"</private\s*>", re.IGNORECASE)


def _valid_token(check: int, body: str) -> bool:
    if check == _CHECK_SLACK:
        return _FOUR_DIGITS.match(body) is not None
    if check == _CHECK_MIXED:
        return bool(_DIGIT.search(body) and _UPPER.search(body) and _LOWER.search(body))
    return True


def _valid_assignment(value: str) -> bool:
    """Is an assigned value a real, high-entropy secret rather than a placeholder or code?"""
    if len(value) < _MIN_ASSIGN_LEN:
        return False
    if value[0] in "$%&*~/." or "://" in value or "{{" in value:
        return False
    if _PLACEHOLDER_WORDS.search(value):
        return False
    if _DOTTED_IDENT.fullmatch(value):
        return False
    digit = _DIGIT.search(value) is not None
    special = _SPECIAL.search(value) is not None
    classes = (
        digit + special + (_UPPER.search(value) is not None) + (_LOWER.search(value) is not None)
    )
    if not (digit or special) or classes < 2:
        return False
    return _entropy(value) >= _MIN_ASSIGN_ENTROPY


# A candidate: (priority, start, end, kind, already_masked)
_Cand = tuple[int, int, int, str, bool]
# A hit to mask: (start, end, kind)
_Hit = tuple[int, int, str]


def _pem_candidates(text: str, prio: int, out: list[_Cand]) -> None:
    if "PRIVATE KEY" not in text:
        return
    pos = 0
    end_m: re.Match[str] | None = None
    end_known = False  # end_m is the first END at or after the current position
    while True:
        begin = _PEM_BEGIN.search(text, pos)
        if begin is None:
            return
        if not end_known or (end_m is not None and end_m.start() < begin.end()):
            end_m = _PEM_END.search(text, begin.end())
            end_known = True
        nxt = _PEM_BEGIN.search(text, begin.end())
        if end_m is not None and (nxt is None or end_m.start() < nxt.start()):
            body_start, body_end, pos = begin.end(), end_m.start(), end_m.end()
        else:
            loose = _PEM_LOOSE_BODY.match(text, begin.end())
            body_start = begin.end()
            body_end = loose.end() if loose else body_start
            pos = max(body_end, begin.end())
        # trim surrounding whitespace: the finding is the key material itself
        while body_start < body_end and text[body_start].isspace():
            body_start += 1
        while body_end > body_start and text[body_end - 1].isspace():
            body_end -= 1
        if body_end > body_start:
            body = text[body_start:body_end]
            out.append((prio, body_start, body_end, _PEM_KIND, _is_masked_block(body)))


def _token_candidates(text: str, prio: int, rule: _Rule, out: list[_Cand]) -> None:
    if not any(needle in text for needle in rule.needles):
        return
    for m in rule.regex.finditer(text):
        start, end = m.span()
        value = m.group()
        if not _valid_token(rule.check, value[rule.skip :]):
            continue
        out.append((prio, start, end, rule.kind, _is_masked(value)))


def _assignment_candidates(text: str, prio: int, out: list[_Cand]) -> None:
    low = text.lower()
    keys = _ASSIGN_KEY.finditer(low) if len(low) == len(text) else _ASSIGN_KEY_I.finditer(text)
    reached = 0  # key words before this were part of an earlier key or value
    for key in keys:
        if key.start() < reached:
            continue
        suffix = _ASSIGN_SUFFIX.match(text, key.end())
        reached = suffix.end() if suffix else key.end()
        m = _ASSIGN_VALUE.match(text, reached)
        if m is None:
            continue
        start, end = m.span("value")
        reached = end
        value = m.group("value")
        if not m.group("quote"):
            if end < len(text) and text[end] in "([":
                continue  # a call or subscript: code, not a literal
            stripped = value.rstrip(".")
            end -= len(value) - len(stripped)
            value = stripped
        if not value:
            continue
        if _is_masked(value):
            out.append((prio, start, end, _ASSIGN_KIND, True))
        elif _valid_assignment(value):
            out.append((prio, start, end, _ASSIGN_KIND, False))


def _detect(text: str) -> list[_Hit]:
    """Unmasked secrets in ``text`` (private blocks already removed), sorted by start."""
    cands: list[_Cand] = []
    _pem_candidates(text, 0, cands)
    for i, rule in enumerate(_TOKEN_RULES, start=1):
        _token_candidates(text, i, rule, cands)
    _assignment_candidates(text, len(_TOKEN_RULES) + 1, cands)
    if not cands:
        return []
    cands.sort()
    claimed = bytearray(len(text))
    hits: list[_Hit] = []
    for _prio, start, end, kind, masked in cands:
        if claimed.find(1, start, end) != -1:
            continue
        claimed[start:end] = b"\x01" * (end - start)
        if not masked:
            hits.append((start, end, kind))
    hits.sort()
    return hits


def _apply_masks(text: str, hits: list[_Hit]) -> str:
    pieces: list[str] = []
    pos = 0
    for start, end, kind in hits:
        pieces.append(text[pos:start])
        secret = text[start:end]
        pieces.append(_mask_block(secret) if kind == _PEM_KIND else mask(secret))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)


# A removed private block: (original start, original end, start of its placeholder)
_Block = tuple[int, int, int]


def _strip_private(text: str) -> tuple[str, list[_Block]]:
    """Replace every closed ``<private>`` block by the placeholder."""
    if "<" not in text:
        return text, []
    blocks: list[_Block] = []
    pieces: list[str] = []
    pos = 0
    out_len = 0
    close: re.Match[str] | None = None
    while True:
        opening = _PRIVATE_OPEN.search(text, pos)
        if opening is None:
            break
        if close is None or close.start() < opening.end():
            close = _PRIVATE_CLOSE.search(text, opening.end())
            if close is None:
                break  # unclosed: left alone, and no later tag can be closed either
        kept = text[pos : opening.start()]
        pieces.append(kept)
        out_len += len(kept)
        blocks.append((opening.start(), close.end(), out_len))
        pieces.append(_PLACEHOLDER)
        out_len += len(_PLACEHOLDER)
        pos = close.end()
    if not blocks:
        return text, []
    pieces.append(text[pos:])
    return "".join(pieces), blocks


def _to_original(offset: int, blocks: list[_Block], is_end: bool) -> int:
    """Map an offset in the stripped text back to the original text."""
    lo, hi = 0, len(blocks)
    while lo < hi:  # the last block whose placeholder starts before offset
        mid = (lo + hi) // 2
        if blocks[mid][2] < offset:
            lo = mid + 1
        else:
            hi = mid
    if lo == 0:
        return offset
    start, end, placeholder = blocks[lo - 1]
    inside = offset - placeholder
    if inside < len(_PLACEHOLDER):
        return end if is_end else start
    return end + inside - len(_PLACEHOLDER)


def _findings(text: str, spans: list[_Hit]) -> tuple[Finding, ...]:
    """Attach 1-based line numbers (in ``text``) to sorted spans."""
    out: list[Finding] = []
    line, pos = 1, 0
    for start, end, kind in sorted(spans):
        line += text.count("\n", pos, start)
        pos = start
        out.append(Finding(kind=kind, line=line, start=start, end=end))
    return tuple(out)


def _private_spans(blocks: list[_Block]) -> list[_Hit]:
    return [(start, end, _PRIVATE_KIND) for start, end, _ in blocks]


def _map_hits(hits: list[_Hit], blocks: list[_Block]) -> list[_Hit]:
    if not blocks:
        return hits
    return [
        (_to_original(s, blocks, False), _to_original(e, blocks, True), kind) for s, e, kind in hits
    ]


def redact(text: str) -> Redaction:
    """Replace private blocks by ``[REDACTED]`` and mask every recognised secret in place."""
    stripped, blocks = _strip_private(text)
    hits: list[_Hit] = []
    while True:  # each pass only turns characters into "x", so this terminates
        found = _detect(stripped)
        if not found:
            break
        stripped = _apply_masks(stripped, found)
        hits.extend(found)
    spans = _private_spans(blocks) + _map_hits(hits, blocks)
    return Redaction(text=stripped, findings=_findings(text, spans))


_PART_SEP = "\n\0\n"


def redact_parts(parts: Sequence[str]) -> tuple[list[str], Redaction]:
    """Several texts of one memory (title, body, aliases) through :func:`redact` in
    one pass: the same findings and one notice for all of them."""
    if not parts:
        return [], Redaction(text="", findings=())
    joined = redact(_PART_SEP.join(parts))
    return joined.text.split(_PART_SEP), joined


def scan(text: str) -> list[Finding]:
    """The unredacted private blocks and unmasked secrets in ``text``; ``text`` is unchanged."""
    stripped, blocks = _strip_private(text)
    spans = _private_spans(blocks) + _map_hits(_detect(stripped), blocks)
    return list(_findings(text, spans))
