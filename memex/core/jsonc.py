"""JSON with comments (VS Code, opencode): read it, and add one entry without losing a
comment. Pure.

`strip` blanks comments and trailing commas with spaces, so every offset in the
stripped text is the same offset in the original; `object_start` finds where an
object at a key path opens, which is where `insert_entry` writes a new member.
"""

from __future__ import annotations

import json
from typing import Any


class JsoncError(ValueError):
    """The text is not JSON (with comments)."""


def _blank(text: str, comments: bool) -> str:
    """One string-aware pass: blank comments (COMMENTS) or trailing commas (not)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif comments and text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif comments and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                raise JsoncError("unterminated /* comment")
            for j in range(i, end + 2):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 2
        elif not comments and c == ",":
            j = _skip_ws(text, i + 1)
            if j < n and text[j] in "}]":
                out[i] = " "
            i += 1
        else:
            i += 1
    return "".join(out)


def strip(text: str) -> str:
    """TEXT with // and /* */ comments and trailing commas replaced by spaces."""
    return _blank(_blank(text, comments=True), comments=False)


def has_comments(text: str) -> bool:
    return strip(text) != text


def loads(text: str) -> Any:
    try:
        return json.loads(strip(text)) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise JsoncError(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:  # a file from git nested deeper than the interpreter's stack
        raise JsoncError("nested too deeply") from None


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _skip_value(text: str, i: int) -> int:
    """Index just past the JSON value starting at I (TEXT is stripped, valid JSON)."""
    i = _skip_ws(text, i)
    c = text[i]
    if c == '"':
        i += 1
        while text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return i + 1
    if c in "{[":
        depth = 0
        while True:
            c = text[i]
            if c == '"':
                i = _skip_value(text, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    while i < len(text) and text[i] not in ",}] \t\r\n":
        i += 1
    return i


def _member(stripped: str, obj: int, key: str) -> int | None:
    """Offset where the value of member KEY of the object opening at OBJ starts (the
    last one, as json.loads keeps the last of duplicate keys), or None."""
    j = obj + 1
    found = None
    while True:
        j = _skip_ws(stripped, j)
        if stripped[j] == "}":
            return found
        key_end = _skip_value(stripped, j)
        name = json.loads(stripped[j:key_end])
        j = _skip_ws(stripped, key_end) + 1  # past ':'
        j = _skip_ws(stripped, j)
        if name == key:
            found = j
        j = _skip_ws(stripped, _skip_value(stripped, j))
        if stripped[j] == ",":
            j += 1


def object_start(stripped: str, path: tuple[str, ...]) -> int | None:
    """Offset of the `{` of the object at PATH (keys from the top), or None."""
    i = _skip_ws(stripped, 0)
    if i >= len(stripped) or stripped[i] != "{":
        return None
    for key in path:
        found = _member(stripped, i, key)
        if found is None or stripped[found] != "{":
            return None
        i = found
    return i


def replace_entry(text: str, path: tuple[str, ...], key: str, value: Any) -> str:
    """TEXT with the value of member KEY of the object at PATH replaced by VALUE;
    comments outside that value and the layout elsewhere untouched (comments inside
    the old value go with it)."""
    stripped = strip(text)
    start = object_start(stripped, path)
    at = None if start is None else _member(stripped, start, key)
    if start is None or at is None:
        raise JsoncError(f"{'.'.join((*path, key))} is not there")
    end = _skip_value(stripped, at)
    base = _indent_of(text, at)
    body = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + base)
    return text[:at] + body + text[end:]


def _indent_of(text: str, offset: int) -> str:
    line_start = text.rfind("\n", 0, offset) + 1
    line = text[line_start:offset]
    return line[: len(line) - len(line.lstrip())]


def insert_entry(text: str, path: tuple[str, ...], key: str, value: Any) -> str:
    """TEXT with `"KEY": VALUE` added as the first member of the object at PATH,
    creating the missing objects of PATH; comments and layout elsewhere untouched.
    KEY must not exist yet; a PATH member that is not an object is refused."""
    stripped = strip(text)
    node = loads(text)
    for name in path:
        if not isinstance(node, dict):
            raise JsoncError("the file is not a JSON object")
        node = node.get(name, {})
        if not isinstance(node, dict):
            raise JsoncError(f"{name!r} is not a JSON object")
    if not isinstance(node, dict) or key in node:
        raise JsoncError(f"{key!r} is already there")
    depth = len(path)
    while depth >= 0 and object_start(stripped, path[:depth]) is None:
        depth -= 1
    if depth < 0:
        raise JsoncError("the file is not a JSON object")
    start = object_start(stripped, path[:depth])
    assert start is not None
    member: Any = value
    for name in reversed((*path[depth:], key)[1:]):
        member = {name: member}
    first_key = (*path[depth:], key)[0]
    base = _indent_of(text, start)
    step = "  "
    body = json.dumps(member, indent=len(step), ensure_ascii=False)
    body = body.replace("\n", "\n" + base + step)
    after = _skip_ws(stripped, start + 1)
    empty = stripped[after] == "}"
    entry = f"\n{base}{step}{json.dumps(first_key)}: {body}"
    if empty:
        return text[: start + 1] + entry + "\n" + base + text[after:]
    return text[: start + 1] + entry + "," + text[start + 1:]
