"""JSON as `json.dumps(value, ensure_ascii=False, indent=2, default=str)` writes it,
for an element of a top-level array (two spaces deep), written faster: what `--json`
listings stream, and what the index keeps of a memory's listing (index.listing).

A mapping of plain values is one call of the C encoder; only nested non-empty values
and long texts go through slower paths. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from memex.core import lazyre
from memex.core.model import LAYOUT_CONTROLS

# The C encoder (json's when there is no indent) writes an element's scalars and empty
# containers exactly as indent=2 does when its item separator carries the newline and
# indent: the slow pure-Python indenting encoder is left for nested non-empty values.
_FLAT = json.JSONEncoder(ensure_ascii=False, separators=(",\n    ", ": "), default=str).encode
_STRING = json.encoder.encode_basestring
_ASCII = json.encoder.encode_basestring_ascii
# _FLAT made once, without the look for cycles (for mappings of scalars: none to find).
_MAKE: Any = getattr(json.encoder, "c_make_encoder", None)
_SCALARS = (_MAKE(None, str, _STRING, None, ": ", ",\n    ", False, False, True)
            if _MAKE is not None else None)
_SCALAR = frozenset({str, int, float, bool, type(None)})
# json.dumps(value, ensure_ascii=False, default=str), from a C encoder made once, without
# the look for reference cycles: JSONEncoder.encode makes an encoder on every call (~2 us
# of ~4; an index build encodes three values a memory).
_COMPACT = (_MAKE(None, str, _STRING, None, ": ", ", ", False, False, True)
            if _MAKE is not None else None)
LONG = 200  # a text longer than this is written by _string, apart from the C encoder's run
# An element's value types -> the positions of its lists and mappings and of its texts
# (None: a value of another type is there): a row of a known shape is not looped over.
_SHAPES: dict[tuple[type, ...], tuple[tuple[int, ...], tuple[int, ...]] | None] = {}


def _string(text: str) -> str:
    """_STRING(text); the ASCII encoder (twice as fast) where it writes the same: an
    ASCII text without DEL, which only it escapes."""
    return _ASCII(text) if text.isascii() and "\x7f" not in text else _STRING(text)


def _nested(value: object, indent: str) -> str:
    """json.dumps(value, indent=2) as it appears INDENT deep."""
    if type(value) is list and value and all(type(v) is str for v in value):
        inner = ",\n  " + indent
        return f"[\n  {indent}{inner.join(map(_STRING, value))}\n{indent}]"
    return json.dumps(value, ensure_ascii=False, indent=2, default=str).replace(
        "\n", "\n" + indent)


def _shape(types: tuple[type, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    if types in _SHAPES:
        return _SHAPES[types]
    shape = None
    if all(t in _SCALAR or t is list or t is dict for t in types):
        shape = (tuple(i for i, t in enumerate(types) if t is list or t is dict),
                 tuple(i for i, t in enumerate(types) if t is str))
    if len(_SHAPES) < 512:
        _SHAPES[types] = shape
    return shape


def compact(value: object) -> str:
    """json.dumps(value, ensure_ascii=False, default=str) of a value without a reference
    cycle (parsed front matter, a list of texts: a cycle would recurse until Python's
    limit rather than be reported)."""
    if _COMPACT is None:  # pragma: no cover - a Python without json's C encoder
        return json.dumps(value, ensure_ascii=False, default=str)
    return "".join(_COMPACT(value, 0))


def element(item: object) -> str:
    """json.dumps(item, ensure_ascii=False, indent=2, default=str) as an element of a
    top-level array (two spaces deep)."""
    return "".join(parts(item))


def parts(item: object) -> list[str]:
    """element as texts written one after another. A mapping of plain values is one
    call of the C encoder with its non-empty lists and mappings and its long texts
    written as null: no text the encoder writes holds a newline, so its item separator
    splits that into the items, and each value set apart takes its null's place as a
    part of its own. Else _mixed."""
    if type(item) is not dict or not item:
        return [_nested(item, "  ")]
    shape = _shape(tuple(map(type, item.values())))
    if shape is None:
        return [_mixed(item)]
    values = list(item.values())
    nested = [i for i in shape[0] if values[i]]
    long = [i for i in shape[1] if len(values[i]) > LONG]
    if not nested and not long:
        return ["{\n    ", _flat(item)[1:-1], "\n  }"]
    flat = dict(item)
    keys = list(item)
    apart = sorted(nested + long)
    for i in apart:
        flat[keys[i]] = None
    items = _flat(flat)[1:-1].split(",\n    ")
    out = ["{\n    "]
    start = 0
    for i in apart:
        if i > start:
            out += (",\n    ".join(items[start:i]), ",\n    ")
        value = values[i]
        out += (items[i][:-4],  # '"key": null' -> '"key": ' and the value
                _string(value) if type(value) is str else _nested(value, "    "), ",\n    ")
        start = i + 1
    if start < len(items):
        out.append(",\n    ".join(items[start:]))
    else:
        out.pop()
    out.append("\n  }")
    return out


def _flat(item: dict[Any, object]) -> str:
    """_FLAT(item) for a mapping of scalars and empty lists and mappings."""
    return "".join(_SCALARS(item, 0)) if _SCALARS is not None else _FLAT(item)


def _mixed(item: dict[Any, object]) -> str:
    """element of any mapping: runs of flat values through the C encoder, long texts
    and everything else (non-empty lists and mappings, other types) one by one."""
    keys = list(item)
    values = list(item.values())
    apart = [i for i, v in enumerate(values)
             if type(v) not in _SCALAR and (v or type(v) not in (list, dict))
             or type(v) is str and len(v) > LONG]
    parts: list[str] = []
    start = 0
    for i in apart:
        key = keys[i]
        if type(key) is not str:  # json's own key conversions
            return _nested(item, "  ")
        if i > start:
            parts.append(_FLAT(dict(zip(keys[start:i], values[start:i], strict=True)))[1:-1])
        value = values[i]
        text = _string(value) if type(value) is str else _nested(value, "    ")
        parts.append(f"{_STRING(key)}: {text}")
        start = i + 1
    if start < len(keys):
        parts.append(_FLAT(dict(zip(keys[start:], values[start:], strict=True)))[1:-1])
    return "{\n    " + ",\n    ".join(parts) + "\n  }"


# The bytes of an ASCII text the byte path below cannot write: control characters but
# newline and tab (escaped as \u00nn or by letter) and DEL (escaped by _STRING alone).
_NOT_PLAIN = bytes([*range(0x09), *range(0x0B, 0x20), 0x7F])
# A translation that changes those bytes alone: a text it leaves as it was holds none
# (one pass that deletes nothing: ~30% fewer instructions than deleting them and
# comparing lengths; CPython hands the same object back, which == sees at once).
_MARK_NOT_PLAIN = bytes(0x80 if byte in _NOT_PLAIN else byte for byte in range(256))


def plain(raw: bytes) -> bool:
    """Whether the UTF-8 text RAW is one string_bytes escapes on its bytes (plain_bytes):
    ASCII, its only control characters newlines and tabs (a usual body)."""
    return raw.isascii() and raw.translate(_MARK_NOT_PLAIN) == raw


def plain_bytes(raw: bytes) -> bytes:
    """string_bytes of a text that is `plain`: four replaces write what _ASCII writes,
    without decoding it to a str and encoding it back (a third of a listing's time per
    memory)."""
    return b'"%s"' % raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(
        b"\n", b"\\n").replace(b"\t", b"\\t")


def string_bytes(raw: bytes) -> bytes:
    """The JSON string (as element writes it) of the UTF-8 text RAW, as UTF-8 bytes: a
    `plain` text escaped on its bytes (plain_bytes)."""
    if plain(raw):
        return plain_bytes(raw)
    if raw.isascii() and b"\x7f" not in raw:  # _ASCII is the faster, and writes the same
        return _ASCII(raw.decode("ascii")).encode("ascii")
    return _STRING(raw.decode("utf-8")).encode("utf-8")


def string(text: str) -> str:
    """The JSON string element writes for TEXT."""
    return _string(text)


# What JSON (ensure_ascii=False) writes raw that changes how a terminal lays text out:
# DEL, C1 controls, line and paragraph separators, bidi controls, joiners and invisible
# format characters. Each can stand only inside a JSON string (the rest of JSON is ASCII
# punctuation), so writing it as its \\u escape (four hex digits; a surrogate pair past
# U+FFFF) leaves the JSON's value exactly as it was.
_LAYOUT = lazyre.compile(f"[{LAYOUT_CONTROLS}]")


def _layout_escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # past the BMP: JSON writes a surrogate pair
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def document(data: object) -> str:
    """DATA as a command's `--json` prints it (`show --json`: indented, layout controls
    escaped), without the final newline."""
    return escape_layout(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def escape_layout(text: str) -> str:
    """The JSON text TEXT with every layout control written as its \\u escape (four
    hex digits): what `--json`, `export` and the MCP tools print, parsing to the same value."""
    if text.isascii() and not any(char in text for char in _ASCII_LAYOUT):
        return text
    return _LAYOUT.sub(_layout_escape, text)


def escape_layout_values(value: Any) -> Any:
    """Parsed JSON VALUE with every layout control in its strings (keys too) replaced by
    the six characters of its \\u escape: what the escaped JSON text shows, as the value
    itself, for a reader that displays the values (MCP's structuredContent). Not exact:
    a text holding those six characters already reads the same."""
    return map_strings(value, _escape_string)


def _escape_string(text: str) -> str:
    return _LAYOUT.sub(_layout_escape, text) if _LAYOUT.search(text) else text


def redacted(data: object) -> Any:
    """DATA as JSON gives it (`json.dumps(default=str)` parsed back) with every string,
    key too, masked on its own by the one masking function (`redact.redact`): review
    --json and an MCP error's data. Masking the JSON text instead missed a quoted secret,
    escaped there as `\\"...\\"`, and a mask that ate a JSON quote left text `json.loads`
    refused."""
    from memex.core import redact  # ~100 patterns compile on import: only when masking

    plain = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    return map_strings(plain, lambda text: redact.redact(text).text if text else text)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """Parsed JSON VALUE with CHANGE applied to each of its strings (keys too) on its
    own: a change of the JSON text as a whole sees a quoted string escaped (`\\"`) and
    may break the text's own quotes."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, change) for v in value]
    return value


def _expand(chars: str) -> str:
    """The characters of a regex class body of single characters and `a-z` ranges."""
    out, at = [], 0
    while at < len(chars):
        if at + 2 < len(chars) and chars[at + 1] == "-":
            out += [chr(c) for c in range(ord(chars[at]), ord(chars[at + 2]) + 1)]
            at += 3
        else:
            out.append(chars[at])
            at += 1
    return "".join(out)


def _lead_bytes(chars: str) -> dict[int, tuple[int, frozenset[bytes]]]:
    """Each UTF-8 lead byte of CHARS -> (the encoding's length, the bytes after it)."""
    tails: dict[int, set[bytes]] = {}
    for char in chars:
        raw = char.encode("utf-8")
        tails.setdefault(raw[0], set()).add(raw[1:])
    return {lead: (1 + len(next(iter(rest))), frozenset(rest))
            for lead, rest in sorted(tails.items())}


# LAYOUT_CONTROLS by UTF-8 lead byte, made from the one set at import.
_LEADS = _lead_bytes(_expand(LAYOUT_CONTROLS))
_ASCII_LAYOUT = [chr(lead) for lead, (size, _) in _LEADS.items() if lead < 0x80]


def _has_layout(raw: bytes) -> bool:
    """Whether the UTF-8 text RAW holds a layout control (`_LEADS`): a search for each
    lead byte (as fast as memchr; a two-byte needle is five times slower, a search of
    the decoded text ten times: a listing's elements hold `…`, E2 80 A6, in most
    summaries)."""
    ascii_only = raw.isascii()
    for lead, (size, tails) in _LEADS.items():
        if size == 1:
            if lead in raw:
                return True
            continue
        if ascii_only:
            continue
        at = raw.find(lead)
        while at >= 0:
            if raw[at + 1:at + size] in tails:
                return True
            at = raw.find(lead, at + 1)
    return False


def escape_layout_bytes(raw: bytes) -> bytes:
    """escape_layout of the UTF-8 JSON text RAW, as UTF-8 (an index's kept listing)."""
    if not _has_layout(raw):
        return raw
    return _LAYOUT.sub(_layout_escape, raw.decode("utf-8")).encode("utf-8")
