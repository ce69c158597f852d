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
# What a YAML 1.1 or 1.2 reader (ruamel's resolvers, PyYAML's) takes for a bool, null,
# number or time: such a text is quoted. Underscores count anywhere in a number's digits
# ("0._" is the float 0.0) and "1:30" is a 1.1 sexagesimal int.
_NOT_PLAIN = re.compile(
    r"^(?:true|false|yes|no|on|off|null|y|n|~"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])*(?:\.[0-9_]*)?(?:e[-+]?[0-9]+)?"
    r"|[-+]?0b[01_]+|[-+]?0o[0-7_]+|[-+]?0x[0-9a-f_]+|[-+]?\.[0-9_]+(?:e[-+]?[0-9]+)?"
    r"|[-+]?\.inf|\.nan|\d{4}-\d\d-\d\d.*)$",
    re.IGNORECASE,
)
_TIME_PLAIN = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


class FrontMatterError(InvalidMemory):
    """The file cannot be read as a memory; it is quarantined, never rewritten."""


@dataclass
class Parsed:
    """A memory file read: its front matter, body and header text."""

    data: dict[str, Any]
    body: str
    raw_header: str
    # Whether the header is exactly what emit writes (a rewrite then emits; else it
    # goes through ruamel's round trip); worked out when first asked.
    known_canonical: bool | None = None

    @property
    def canonical(self) -> bool:
        if self.known_canonical is None:
            self.known_canonical = emit_header(self.data) == self.raw_header
        return self.known_canonical


# ---------------------------------------------------------------- emitting


def _scalar(value: Any, in_flow: bool = False) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if type(value) is str and len(text) <= 64:  # the same few values on every memory
        written = _WRITTEN[in_flow].get(text)
        if written is None:
            written = _text_scalar(text, in_flow)
            cache = _WRITTEN[in_flow]
            if len(cache) >= 4096:
                cache.clear()
            cache[text] = written
        return written
    return _text_scalar(text, in_flow)


# _text_scalar's short results (a bulk write emits the same scopes, states, tags and
# identities on every memory), in a block and in a flow list.
_WRITTEN: tuple[dict[str, str], dict[str, str]] = ({}, {})


def _text_scalar(text: str, in_flow: bool) -> str:
    if _TIME_PLAIN.match(text):
        return text
    if _PLAIN.match(text) and not _NOT_PLAIN.match(text) and not (in_flow and ":" in text):
        return text
    return _quote(text)


# Characters JSON leaves as they are but YAML does not allow raw (DEL, the C1 controls,
# the BOM, the two non-characters) or reads as line breaks (NEL, LS, PS).
_YAML_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _quote(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    return _YAML_ESCAPE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", quoted)


# A key written as it is: every known key, and any unknown one that reads back the same.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def _emit_value(key: str, value: Any) -> str:
    if not _PLAIN_KEY.fullmatch(key):  # an unknown key from a file (arrived by git)
        key = _quote(key)  # a raw newline in it would write a line of its own
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


# The lines of short text values already written ("scope: project", "status: active"):
# _emit_value of a key and a str is a function of the two, and most recur in every
# header a bulk write (an import) emits, twice each (rewrite's canonical check).
_LINES: dict[tuple[str, str], str] = {}


def emit_header(data: dict[str, Any]) -> str:
    lines = []
    for key, value in data.items():
        if type(value) is str and len(value) <= 64:
            line = _LINES.get((key, value))
            if line is None:
                line = _emit_value(key, value) + "\n"
                if len(_LINES) >= 4096:
                    _LINES.clear()
                _LINES[(key, value)] = line
            lines.append(line)
        else:
            lines.append(_emit_value(key, value) + "\n")
    return "".join(lines)


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
    if "\r" in text:
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


# Characters the fast reader leaves to ruamel: anything YAML does not print (tabs,
# control characters, surrogates, U+FFFE/FFFF), its other line breaks (NEL, LS, PS),
# and the BOM. Written as the characters refused (the complement of what YAML prints:
# the same set), which compiles in a fraction of a millisecond; the negated class of
# the printable ranges cost ~9 ms CPU of every process's start.
_NOT_SIMPLE = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?:( +)(.*))?$")
_ITEM_LINE = re.compile(r"( *)- +(.*)$")
_FLOW_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*): +")
_DOUBLE = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SINGLE = re.compile(r"'((?:[^']|'')*)'")
# A backslash escape JSON does not share with YAML, or a surrogate written as \u.
_ODD_ESCAPE = re.compile(r"\\(?:[^\"\\/bfnrtu]|u[dD][89abAB])")
_FLOW_PLAIN = re.compile(r"[^,\[\]{}#:'\"]*")
_FLOW_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z(?=[ ,\]}]|$)")
_INT = re.compile(r"0|[1-9][0-9]*")
# Plain words a YAML resolver may read as something other than text (numbers, dates,
# booleans, nulls, YAML 1.1's yes/no): left to ruamel.
_MAYBE_TYPED = re.compile(
    r"[-+]?\.?[0-9][0-9a-fox_.:+e-]*|[-+]?\.(?:inf|nan)|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[t ].*"
    r"|true|false|null|yes|no|on|off|y|n|~|=|<<", re.IGNORECASE)
_RESERVED_KEYS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n"})
_PLAIN_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_BARE = {"true": True, "True": True, "TRUE": True, "false": False, "False": False,
         "FALSE": False, "null": None, "Null": None, "NULL": None, "~": None}


def _simple(header: str) -> bool:
    """Whether HEADER holds none of _NOT_SIMPLE's characters. An ASCII header holds one
    exactly when it is not printable with its newlines made spaces (ASCII's printable
    characters are space to tilde): str.isprintable's one pass over a table costs less
    than the regex's class test per character (a full build asks it of every file)."""
    if header.isascii():
        return header.replace("\n", " ").isprintable()
    return _NOT_SIMPLE.search(header) is None


# Lines of one scalar already read ("type: knowledge"): most recur in every file.
_SEEN_LINES: dict[str, tuple[str, Any]] = {}
_SEEN_MAX = 4096


class _Unsure(Exception):
    """The fast reader does not handle this text; ruamel decides."""


def _resolve(text: str, timed: bool) -> Any:
    """A plain scalar as YAML 1.2 reads it, for the words the fast reader handles."""
    if text in _BARE:
        return _BARE[text]
    if _INT.fullmatch(text):
        return int(text)
    if timed and _TIME_PLAIN.match(text):
        return text  # a YAML timestamp; the model reads it as this same text
    if _MAYBE_TYPED.fullmatch(text):
        raise _Unsure
    return text


def _quoted(text: str, start: int) -> tuple[str, int]:
    """The quoted scalar at text[start]; (value, index after it)."""
    if text[start] == '"':
        match = _DOUBLE.match(text, start)
        if match is None:
            raise _Unsure
        inner = match.group(1)
        if "\\" in inner:
            if _ODD_ESCAPE.search(inner):
                raise _Unsure
            try:
                value = json.loads(f'"{inner}"')
            except ValueError:
                raise _Unsure from None
        else:
            value = inner
        return value, match.end()
    match = _SINGLE.match(text, start)
    if match is None:
        raise _Unsure
    return match.group(1).replace("''", "'"), match.end()


def _after(text: str, at: int) -> None:
    """What may follow a value on its line: spaces, then perhaps a comment."""
    rest = text[at:]
    if rest and not (rest[0] == " " and (not rest.strip() or rest.lstrip()[0] == "#")):
        raise _Unsure


def _flow_item(text: str, at: int, timed: bool) -> tuple[Any, int]:
    """A scalar inside [...] or {...}; (value, index after it and its spaces)."""
    time = _FLOW_TIME.match(text, at) if timed else None
    if text[at] in "\"'":
        value, at = _quoted(text, at)
    elif time is not None:
        value, at = time.group(0), time.end()
    else:
        match = _FLOW_PLAIN.match(text, at)
        assert match is not None  # the pattern matches the empty string
        word = match.group(0).rstrip()
        if not word or word[0] in _PLAIN_START:
            raise _Unsure
        value, at = _resolve(word, timed), match.end()
    while at < len(text) and text[at] == " ":
        at += 1
    return value, at


def _flow(text: str, history: bool = False) -> Any:
    """A flow sequence of scalars ([a, "b"]) or, in a history item, a flow mapping
    of scalars ({at: ..., by: ...}), alone on its line but for a comment.  ``history``:
    the mapping is an entry of a history field, whose ``at`` is a time the model reads
    as its text (under another key ruamel types a timestamp: left to it)."""
    closing = "]" if text[0] == "[" else "}"
    items: list[Any] = []
    entry: dict[str, Any] = {}
    at = 1
    while True:
        while at < len(text) and text[at] == " ":
            at += 1
        if at >= len(text):
            raise _Unsure
        if text[at] == closing:
            break
        if closing == "}":
            match = _FLOW_KEY.match(text, at)
            if match is None or match.group(1) in entry or (
                    match.group(1).lower() in _RESERVED_KEYS):
                raise _Unsure
            at = match.end()
            if at >= len(text):
                raise _Unsure
            entry[match.group(1)], at = _flow_item(text, at,
                                                   history and match.group(1) == "at")
        else:
            value, at = _flow_item(text, at, False)
            items.append(value)
        if at < len(text) and text[at] == ",":
            at += 1
        elif at >= len(text) or text[at] != closing:
            raise _Unsure
    _after(text, at + 1)
    return entry if closing == "}" else items


# A flow list as git-memex writes one ([a, b]: plain words that start with a letter)
# or as many hand-written files hold it (["a", "b"]: double-quoted texts without an
# escape), one space after each comma and nothing after it. _flow reads a list item by
# item (~9 us for two tags, a twentieth of a full build's time per file); these whole.
_WORD_LIST = re.compile(r"\[[A-Za-z][A-Za-z0-9_./@+-]*(?:, [A-Za-z][A-Za-z0-9_./@+-]*)*\]")
_QUOTED_LIST = re.compile(r'\["[^"\\]*"(?:, "[^"\\]*")*\]')


def _flow_list(text: str) -> Any:
    """_flow(text) for a flow sequence: a list of _WORD_LIST's words, none of which
    YAML reads as a flag or null (_RESERVED_KEYS: every word of a letter and these
    characters that _resolve does not keep as text), or of _QUOTED_LIST's texts, read
    whole; any other through _flow."""
    if _WORD_LIST.fullmatch(text):
        words = text[1:-1].split(", ")
        if _RESERVED_KEYS.isdisjoint(map(str.lower, words)):
            return words
    elif _QUOTED_LIST.fullmatch(text):
        return text[2:-2].split('", "')
    return _flow(text)


def _value(text: str, key: str, timed: bool = False) -> Any:
    """The value after `key: ` on its line (TIMED: a plain time is kept as its text, as
    under a time field)."""
    first = text[0]
    if first in "\"'":
        value, at = _quoted(text, 0)
        _after(text, at)
        return value
    if first == "[":
        return _flow_list(text)
    if first in _PLAIN_START:
        raise _Unsure  # block scalars, anchors, aliases, tags, mappings ...
    cut = text.find(" #")
    word = (text if cut < 0 else text[:cut]).rstrip()
    if ": " in word or word.endswith(":"):
        raise _Unsure
    return _resolve(word, timed or key in model.TIME_FIELDS)


def _entry_key(entry: dict[str, Any], text: str, history: bool) -> None:
    """One `key: value` line of a block mapping in a list item (open-memex writes its
    history entries so: `- at: ...` then `  by: ...` under it) into ENTRY. ``history``:
    ENTRY is an entry of a history field, whose plain ``at`` time is read as its text
    (as `_flow` reads a flow mapping's); a key without a value (null, or a nested
    block) is left to ruamel."""
    match = _KEY_LINE.match(text)
    if match is None:
        raise _Unsure
    name, value = match.group(1), match.group(3)
    if name in entry or name.lower() in _RESERVED_KEYS or not value or value[0] == "#":
        raise _Unsure
    entry[name] = _value(value, "", history and name == "at")


def read_plain(header: str) -> dict[str, Any] | None:
    """Front matter of plain YAML (block mappings of scalars, flow and block lists of
    scalars, list items as flow mappings or block mappings of scalars (history
    entries), quoted strings, comments) read
    without ruamel: the dict ruamel would build, or None for anything else (ruamel
    then decides: aliases, tags, multi-line scalars, nested mappings, duplicates)."""
    if not _simple(header):
        return None
    data: dict[str, Any] = {}
    key = ""
    items: list[Any] | None = None  # the block list under `key`, while one may follow
    indent = -1
    entry: dict[str, Any] | None = None  # the block mapping the last item began
    entry_indent = -1  # the column of its keys
    try:
        for line in header.split("\n"):
            seen = _SEEN_LINES.get(line)
            if seen is not None:  # "scope: project", "status: active" ...
                items, indent, entry = None, -1, None
                key, value = seen
                if key in data:
                    raise _Unsure
                data[key] = value
                continue
            if not line or line.lstrip().startswith("#") or not line.strip():
                continue
            if line[0] == " " or line[0] == "-":
                item = _ITEM_LINE.match(line)
                if item is None and entry is not None and \
                        len(line) - len(line.lstrip(" ")) == entry_indent:
                    _entry_key(entry, line[entry_indent:], key in model.HISTORY_FIELDS)
                    continue
                entry = None
                if item is None or items is None:
                    raise _Unsure
                if indent < 0:
                    indent = len(item.group(1))
                    data[key] = items
                elif len(item.group(1)) != indent:
                    raise _Unsure
                text = item.group(2)
                if not text:
                    raise _Unsure
                if text[0] == "{":
                    items.append(_flow(text, key in model.HISTORY_FIELDS))
                elif text[0] == "[":
                    raise _Unsure
                elif _KEY_LINE.match(text) is not None:  # "- at: ...": a block mapping
                    entry, entry_indent = {}, item.start(2)
                    _entry_key(entry, text, key in model.HISTORY_FIELDS)
                    items.append(entry)
                else:
                    items.append(_value(text, key))
                continue
            items, indent, entry = None, -1, None
            match = _KEY_LINE.match(line)
            if match is None:
                raise _Unsure
            key = match.group(1)
            if key in data or key.lower() in _RESERVED_KEYS:
                raise _Unsure
            text = match.group(3)
            if not text or text[0] == "#":
                data[key] = None
                items = []
            else:
                value = data[key] = _value(text, key)
                if not isinstance(value, list):
                    if len(_SEEN_LINES) >= _SEEN_MAX:
                        _SEEN_LINES.clear()
                    _SEEN_LINES[line] = (key, value)
    except _Unsure:
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


def _has_surrogate(text: str) -> bool:
    """Whether TEXT holds a surrogate code point (_SURROGATE's class): the only code
    points a strict UTF-8 encode refuses. The encoder's one pass costs a fraction of the
    class search over a whole non-ASCII file (every such file of a build is asked)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_text(text: str, header: str, data: dict[str, Any]) -> None:
    """Refuse text that is not valid Unicode: a file decodes from UTF-8 without
    surrogates, but an escape in a quoted value (\\ud800) can still make one."""
    if not text.isascii() and _has_surrogate(text):
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
                from memex.core import redact  # only for this refusal

                raise FrontMatterError("a value holds an unpaired surrogate (not valid "
                                       f"Unicode): {redact.quoted(item, 60)}")


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


def parse(text: str, fast: bool = True) -> Parsed:
    """Parse a memory file's text; raises FrontMatterError if it is not one. Plain
    front matter is read by read_plain; anything else, or everything when `fast` is
    off (the tests compare the two), by ruamel."""
    header, body = split(text)
    body = body.strip("\n").rstrip()
    data = read_plain(header) if fast else None
    if data is not None:
        _check_text(text, header, data)
        return Parsed(data=data, body=body, raw_header=header)
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
    return Parsed(data=data, body=body, raw_header=header, known_canonical=False)


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
