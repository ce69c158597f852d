"""Parse and emit memory files.

Two paths: a fast line parser for the canonical form git-memex itself writes
(checked by re-emitting: a file is canonical only if emit(parse(f)) == f), and
the ruamel.yaml round trip for anything hand-edited, so comments, key order and
unknown keys survive a rewrite. ruamel is imported only when a file needs it.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import re
from dataclasses import dataclass
from typing import Any

from memex.core import model
from memex.core.errors import InvalidMemory

FENCE = "---"
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@+-]*(?::[A-Za-z0-9_./@+-]+)*$")
_NOT_PLAIN = re.compile(
    r"^(?:true|false|yes|no|on|off|null|y|n|~|[-+]?\d[\d_]*(?:\.\d*)?(?:e[-+]?\d+)?|0x[0-9a-f]+"
    r"|0o[0-7]+|\.inf|\.nan|\d{4}-\d\d-\d\d.*)$",
    re.IGNORECASE,
)
_TIME_PLAIN = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
_KEY_LINE = re.compile(r"^([a-z_][a-z0-9_]*): ?(.*)$")
_ITEM_LINE = re.compile(r"^  - \{(.*)\}$")


class FrontMatterError(InvalidMemory):
    """The file cannot be read as a memory; it is quarantined, never rewritten."""


@dataclass
class Parsed:
    data: dict[str, Any]
    body: str
    canonical: bool
    raw_header: str


# ---------------------------------------------------------------- emitting


def _scalar(value: Any, in_flow: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if _TIME_PLAIN.match(text):
        return text
    if _PLAIN.match(text) and not _NOT_PLAIN.match(text) and not (in_flow and ":" in text):
        return text
    return _quote(text)


def _quote(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    # YAML treats these as line breaks inside a double-quoted scalar; JSON does not escape them.
    return quoted.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace(
        "\u0085", "\\u0085"
    )


def _emit_value(key: str, value: Any) -> str:
    if key in model.HISTORY_FIELDS or (
        isinstance(value, list) and value and all(isinstance(v, dict) for v in value)
    ):
        lines = [f"{key}:"]
        for entry in value:
            parts = ", ".join(f"{k}: {_scalar(v, in_flow=True)}" for k, v in entry.items())
            lines.append(f"  - {{{parts}}}")
        return "\n".join(lines)
    if isinstance(value, list):
        return f"{key}: [" + ", ".join(_scalar(v, in_flow=True) for v in value) + "]"
    if isinstance(value, dict):
        return f"{key}: {_quote(json.dumps(value, ensure_ascii=False))}"
    return f"{key}: {_scalar(value)}"


def emit_header(data: dict[str, Any]) -> str:
    return "".join(_emit_value(k, v) + "\n" for k, v in data.items())


def emit(memory: model.Memory) -> str:
    """The canonical file text of a memory."""
    body = memory.body.strip("\n").rstrip()
    header = emit_header(memory.front_matter())
    return f"{FENCE}\n{header}{FENCE}\n" + (f"\n{body}\n" if body else "")


# ---------------------------------------------------------------- parsing


def split(text: str) -> tuple[str, str]:
    """(header, body) of a file; raises FrontMatterError without front matter."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        raise FrontMatterError("no front matter: the file must start with a '---' line")
    text = text.replace("\r\n", "\n")
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise FrontMatterError("front matter is not closed by a '---' line")
    header = text[4 : end + 1]
    body = text[end + 5 :]
    return header, body


def _split_flow(inner: str) -> list[str]:
    items: list[str] = []
    buf: list[str] = []
    in_quote = False
    escape = False
    for ch in inner:
        if in_quote:
            buf.append(ch)
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_quote = False
            continue
        if ch == '"':
            in_quote = True
            buf.append(ch)
        elif ch == ",":
            items.append("".join(buf).strip())
            buf = []
        else:
            buf.append(ch)
    if in_quote:
        raise ValueError("unclosed quote")
    tail = "".join(buf).strip()
    if tail or items:
        items.append(tail)
    return items


def _fast_scalar(text: str) -> Any:
    if text.startswith('"'):
        value = json.loads(text)
        if not isinstance(value, str):
            raise ValueError("not a string")
        return value
    if text in ("true", "false"):
        return text == "true"
    if text.isdigit():
        return int(text)
    if text == "" or text[0] in "[]{}'&*!|>%@`#":
        raise ValueError("not a plain scalar")
    return text


def _fast_parse(header: str) -> dict[str, Any] | None:
    data: dict[str, Any] = {}
    current_list: list[dict[str, Any]] | None = None
    try:
        for line in header.split("\n")[:-1]:
            item = _ITEM_LINE.match(line)
            if item and current_list is not None:
                entry: dict[str, Any] = {}
                for part in _split_flow(item.group(1)):
                    k, sep, v = part.partition(": ")
                    if not sep:
                        return None
                    entry[k] = _fast_scalar(v)
                current_list.append(entry)
                continue
            match = _KEY_LINE.match(line)
            if not match:
                return None
            key, value = match.group(1), match.group(2)
            if key in data or (key in model.HISTORY_FIELDS and value != ""):
                return None  # a duplicate, or a history that is not one entry a line
            current_list = None
            if value == "":
                current_list = []
                data[key] = current_list
            elif value.startswith("[") and value.endswith("]"):
                data[key] = [_fast_scalar(v) for v in _split_flow(value[1:-1])]
            else:
                data[key] = _fast_scalar(value)
    except ValueError:
        return None
    return data


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def _plain_data(value: Any) -> Any:
    """ruamel's Commented* types as plain dicts and lists; any other value that is not
    a JSON scalar (a YAML timestamp, date, binary) as its text, except the datetimes
    the time fields take."""
    if isinstance(value, dict):
        return {str(k): _plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_data(v) for v in value]
    if value is None or isinstance(value, (str, int, float, datetime.date)):
        return value
    return str(value)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_text(text: str, header: str, data: dict[str, Any]) -> None:
    """Refuse text that is not valid Unicode: a file decodes from UTF-8 without
    surrogates, but an escape in a quoted value (\\ud800) can still make one."""
    if _SURROGATE.search(text) is not None:
        raise FrontMatterError("the file holds an unpaired surrogate (not valid Unicode)")
    if "\\u" in header or "\\U" in header:
        stack: list[Any] = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.keys())
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, str) and _SURROGATE.search(item) is not None:
                raise FrontMatterError(
                    f"a value holds an unpaired surrogate (not valid Unicode): {item!r:.60}")


def _refuse_aliases(header: str) -> None:
    """Memory files have no use for YAML anchors and aliases, and an alias bomb (a
    kilobyte that expands to gigabytes) would hang every command: any anchor or alias
    is refused from the parser's events, before anything is built or expanded."""
    if "&" not in header and "*" not in header:
        return
    from ruamel.yaml.events import AliasEvent

    try:
        for event in _yaml().parse(header):
            if isinstance(event, AliasEvent) or getattr(event, "anchor", None):
                raise FrontMatterError(
                    "front matter uses a YAML anchor or alias (&, *), which memory files "
                    "do not allow")
    except FrontMatterError:
        raise
    except Exception as exc:  # ruamel raises many error types; all mean "unparseable"
        raise _yaml_error(exc) from None


def _yaml_error(exc: BaseException) -> FrontMatterError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FrontMatterError(f"front matter is not valid YAML: {first}")


def parse(text: str) -> Parsed:
    """Parse a memory file's text; raises FrontMatterError if it is not one."""
    header, body = split(text)
    body = body.strip("\n").rstrip()
    data = _fast_parse(header)
    if data is not None and emit_header(data) == header:
        _check_text(text, header, data)
        return Parsed(data=data, body=body, canonical=True, raw_header=header)
    _refuse_aliases(header)
    try:
        loaded = _yaml().load(header)
    except Exception as exc:  # ruamel raises many error types; all mean "unparseable"
        raise _yaml_error(exc) from None
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise FrontMatterError("front matter is not a mapping of keys to values")
    data = _plain_data(loaded)
    _check_text(text, header, data)
    return Parsed(data=data, body=body, canonical=False, raw_header=header)


def load(text: str) -> tuple[model.Memory, Parsed]:
    parsed = parse(text)
    return model.from_front_matter(parsed.data, parsed.body), parsed


# ---------------------------------------------------------------- rewriting


def rewrite(memory: model.Memory, original: Parsed | None) -> str:
    """The new text of a memory: canonical, or the original's round trip if hand-edited."""
    if original is None or original.canonical:
        return emit(memory)
    yaml = _yaml()
    doc = yaml.load(original.raw_header) or {}
    wanted = memory.front_matter()
    known = set(model.FIELD_ORDER)
    for key in list(doc.keys()):
        name = str(key)
        if name in known and name not in wanted:
            del doc[key]
    defaults = _field_defaults()
    for key, value in wanted.items():
        if key not in doc and key in defaults and defaults[key] == value:
            continue  # a hand-written file that relied on a default keeps relying on it
        if key in doc:
            try:
                old = model._coerce(key, _plain_data(doc[key])) if key in known else None
            except InvalidMemory:
                old = None
            if key in known and old == value:
                continue
            if key not in known and _plain_data(doc[key]) == value:
                continue
        doc[key] = _round_trip_value(yaml, key, value, doc.get(key))
    stream = io.StringIO()
    yaml.dump(doc, stream)
    body = memory.body.strip("\n").rstrip()
    return f"{FENCE}\n{stream.getvalue()}{FENCE}\n" + (f"\n{body}\n" if body else "")


def _field_defaults() -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(model.Memory)
            if f.default is not dataclasses.MISSING}


def _round_trip_value(yaml: Any, key: str, value: Any, old: Any) -> Any:
    """A value for the ruamel document in the style the canonical form uses: times bare,
    lists in flow style (or the style the user gave them), history entries one per line."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if key in model.TIME_FIELDS and isinstance(value, str):
        return yaml.load(f"v: {value}\n")["v"]  # a fresh TimeStamp: dumped bare, as given
    if key in model.HISTORY_FIELDS and isinstance(value, list):
        seq = old if isinstance(old, CommentedSeq) else CommentedSeq()
        try:
            kept = model._coerce(key, _plain_data(seq))
        except InvalidMemory:
            kept = None
        if kept is None or kept != value[: len(kept)]:
            seq = CommentedSeq()
            kept = []
        for entry in value[len(kept):]:
            item = CommentedMap()
            for k, v in entry.items():
                item[k] = yaml.load(f"v: {v}\n")["v"] if k == "at" and isinstance(
                    v, str) and _TIME_PLAIN.match(v) else v
            item.fa.set_flow_style()
            seq.append(item)
        return seq
    if isinstance(value, list):
        seq = CommentedSeq(value)
        if not isinstance(old, CommentedSeq) or old.fa.flow_style():
            seq.fa.set_flow_style()
        return seq
    return value
