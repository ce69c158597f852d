"""The form `list --json` gives a memory, and what each index row keeps for it.

A listed memory is reads.as_json's mapping (every field: the front matter, then the rest
of model.FIELD_ORDER with their defaults; then body, path, home and summary) written as
jsonout.element writes it. Building and encoding that mapping per memory was most of a
listing's time, so the build (build.memory_row, so it changes when the row does) keeps
the row's doc column in that form: the front matter as jsonout.element writes it, which
is also the element's text up to its last front-matter field (schema 10). Beside it the
row keeps (`stored`) which of FIELD_ORDER's fields the doc holds (`listed`: bit i for
FIELD_ORDER[i]; bit 62, PLAIN: the body is plain ASCII, jsonout.plain) and the summary
(model.summarise of the title and body) as a JSON string in UTF-8 (`summary`).

A listing then copies the doc, the items of the fields it leaves out (the same text
for every row that leaves out the same fields: made once per set), the inflated body,
the path, the home and the summary (`element`): nothing is parsed or inflated but the
body, and a PLAIN body is escaped with no look for control characters first. Schema
8-9 kept a second, deflated copy of the element's head instead (~350 bytes a row, ~40
us a row of a full build to make). A row the columns cannot give is
built whole as before: one whose chain completion changed a field (eff_*), or whose
front matter names a field written after it (`listed` is NULL). build.text_rule
digests the stored form of a few memories, so an index made by another encoder or
field order is rebuilt.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Sequence
from typing import Any, cast

from memex.core import fingerprint, jsonout, model
from memex.index import bodies

# The fields an element holds after the front matter's, in order.
AFTER = ("body", "path", "home", "summary")

# The columns `element` reads, in its order (the doc as its UTF-8 bytes: no str made and
# encoded again); then the id and what the eligibility rule reads, as chain completion
# left them (policy.eligible_fields' order).
ELIGIBLE_COLUMNS = ("coalesce(eff_status, status), review_state, created_at, "
                    "coalesce(eff_retired_at, retired_at), valid_from, valid_until, expires_at")
COLUMNS = (
    "path, home, listed, zbody, eff_status, eff_retired_at, eff_superseded_by, "
    "CAST(doc AS BLOB), summary, "
    f"id, {ELIGIBLE_COLUMNS}")
ID = 9  # the id's place in a row of COLUMNS
# What `list`'s table shows of a memory (`brief` of the row: its id, review state, status
# as chain completion left it, type, scope, update time, title, and where the title is
# empty its summary), then ELIGIBLE_COLUMNS: no doc or body read into Python but where
# SQLite's JSON cannot give the title (json_extract ends a text at an escaped NUL, so a
# doc holding one is read whole).
_TITLE = "coalesce(json_extract(doc, '$.title'), '')"
BRIEF_COLUMNS = (
    "id, review_state, coalesce(eff_status, status), type, scope, coalesce(updated_at, ''), "
    f"{_TITLE}, CASE WHEN {_TITLE} = '' THEN summary END, "
    f"CASE WHEN {_TITLE} = '' AND summary IS NULL THEN zbody END, "
    f"CASE WHEN instr(doc, '\\u0000') > 0 THEN doc END, {ELIGIBLE_COLUMNS}")
ELIGIBILITY = slice(-7, None)  # ELIGIBLE_COLUMNS' fields: the last of a row (reads' too)

_BODY = b',\n    "body": '
_PATH = b',\n    "path": '
_HOME = b',\n    "home": '
_SUMMARY = b',\n    "summary": '
_CLOSE = b"\n  }"
_END = len("\n  }")  # what ends an element (and a doc): the element goes on after its head

_HOMES: dict[str, bytes] = {}  # a home kind -> its JSON string

# The `listed` bit of each of FIELD_ORDER's fields.
_BITS = {name: 1 << i for i, name in enumerate(model.FIELD_ORDER)}
# The `listed` bit of a body that is jsonout.plain: its JSON string is made on its bytes
# with no look for other control characters first (a pass over every body a listing, a
# tenth of its instructions; schema 11, build.text_rule rebuilds an index without it).
PLAIN = 1 << 62
# The `listed` value of a front matter with these keys, in order (None: built whole).
_LISTED: dict[tuple[str, ...], int | None] = {}
# A `listed` value -> the items of the fields it leaves out, with their defaults, in
# order, as an element writes them after the doc's (b"": none left out).
_TAILS: dict[int, bytes] = {}
_CACHED = 512  # how many sets of keys each of the two keeps


def stored(front: dict[str, Any], body: str, raw: bytes | None = None,
           plain_types: bool = False) -> tuple[str, int | None, bytes | None]:
    """The doc, listed and summary columns of the row of a memory whose front matter is
    FRONT (model.Memory.front_matter, or `front`'s) and body BODY (RAW: its UTF-8, when
    made already). The doc is the front matter as jsonout.element writes it; a mapping
    json.loads would not give back as it is (a float, a time, a key that is no text) is
    written as the JSON of it decodes, as jsonout.compact's text was before (schema 9).
    PLAIN_TYPES: FRONT is known to round-trip (`front` said so): not looked at again."""
    data = front if plain_types or _round_trips(front) else json.loads(jsonout.compact(front))
    doc = jsonout.element(data)
    shape = tuple(data)
    if shape in _LISTED:
        listed = _LISTED[shape]
    else:
        listed = (sum(_BITS.get(key, 0) for key in set(data))
                  if data and data.keys().isdisjoint(AFTER) else None)
        if len(_LISTED) < _CACHED:
            _LISTED[shape] = listed
    if listed is None:
        return doc, None, None
    title = data["title"] if "title" in data else model.DEFAULTS["title"]
    try:
        summary = jsonout.string(model.summarise(str(title), body)).encode("utf-8")
        plain = body.isascii() and jsonout.plain(body.encode("ascii") if raw is None else raw)
    except UnicodeEncodeError:  # a lone surrogate: built whole, as before
        return doc, None, None
    return doc, listed | PLAIN if plain else listed, summary


def brief(row: tuple[Any, ...]) -> tuple[str, ...]:
    """(id, review_state, status, type, scope, updated_at, title, summary) of a row of
    BRIEF_COLUMNS; the summary (model.Memory.summary: the stored one, else made from the
    body for a row built whole) only when the title is empty, else ""."""
    title = row[6] if row[9] is None else str(json.loads(row[9]).get("title", ""))
    if title:
        return (*row[:6], title, "")
    summary, zbody = row[7], row[8]
    if summary is not None:
        return (*row[:6], title, json.loads(summary))
    return (*row[:6], title, model.summarise("", bodies.body_text(zbody or "")))


# A shape of parsed front matter (its keys, in order) -> how `front` checks a row of it:
# the memory's attributes of those names in one call, the type each value must have,
# and the places of its lists. Only shapes front_matter() can give back are kept (a
# store has a few); any other is turned down again each time, by its first cheap look
# (hand-written files come in many key orders: none is kept).
_Plan = tuple[Callable[[Any], tuple[Any, ...]], tuple[type, ...], tuple[int, ...]]
_PLANS: dict[tuple[str, ...], _Plan] = {}
# The fields front_matter() writes even at their default (a value that is no None, "",
# [] or False): a shape without one of them is not what it gives back.
_KEPT_DEFAULTS = frozenset(
    name for name in model.FIELD_ORDER
    if (value := model.DEFAULTS[name]) is not None and value is not False
    and value != "" and value != [])
_PLACE = {name: i for i, name in enumerate(model.FIELD_ORDER)}


def _plan(keys: tuple[str, ...]) -> _Plan | None:
    places = list(map(_PLACE.get, keys))
    if None in places or len(keys) < 2 or not _KEPT_DEFAULTS.issubset(keys) \
            or places != sorted(cast(list[int], places)):
        return None
    # a history's value (a list of mappings) is no text: its rows are turned down
    types = tuple(int if key in model.INT_FIELDS else bool if key in model.BOOL_FIELDS
                  else list if key in model.LIST_FIELDS else str for key in keys)
    lists = tuple(i for i, kind in enumerate(types) if kind is list)
    return operator.attrgetter(*keys), types, lists


def front(data: dict[str, Any], memory: model.Memory) -> tuple[dict[str, Any], bool]:
    """MEMORY's front_matter() and whether `stored` may skip its round-trip look, for a
    memory made from the parsed front matter DATA (model.from_front_matter): DATA itself
    (and True) when it is that very mapping. It is when its keys are known fields in
    FIELD_ORDER's order, every field front_matter() writes at its default
    among them (a shape, looked at once) and, for the row, every value is set (none
    that front_matter() leaves out), of its field's exact type (a list: of exact
    texts) and equal to the memory's: then front_matter() gives the same keys, in the
    same order, with values of the same types and equal, so the same JSON, and those
    types (texts, whole numbers, flags, lists of texts) always round-trip. A canonical
    file's front matter is such a mapping; other shapes and values go the long way."""
    if next(iter(data), None) != "id":  # front_matter() begins with the id, FIELD_ORDER's
        return memory.front_matter(), False  # first (a hand-written file seldom does)
    keys = tuple(data)
    plan = _PLANS.get(keys)
    if plan is None:
        plan = _plan(keys)
        if plan is not None and len(_PLANS) < _CACHED:
            _PLANS[keys] = plan
    if plan is not None and not memory.extra:
        get, types, lists = plan
        values = tuple(data.values())
        if all(values) and tuple(map(type, values)) == types and get(memory) == values \
                and all(type(item) is str for i in lists for item in values[i]):
            return data, True
    return memory.front_matter(), False


def _tail(listed: int) -> bytes:
    """The items an element of a doc whose fields are LISTED writes after the doc's."""
    tail = _TAILS.get(listed)
    if tail is None:
        items = _items(_missing(listed))
        tail = f",\n    {items}".encode() if items else b""
        if len(_TAILS) < _CACHED:
            _TAILS[listed] = tail
    return tail


def _missing(listed: int) -> dict[str, object]:
    """FIELD_ORDER's fields not in LISTED, with their defaults, in order."""
    return {n: model.DEFAULTS[n] for n in model.FIELD_ORDER if not listed & _BITS[n]}


def shown_fields(memory: model.Memory, path: object, home: str) -> dict[str, object]:
    """A memory as `show --json`, `list --json` and the MCP tools give it (reads.as_json):
    every field, then its body, path, home and summary."""
    data = fields(memory)
    data["body"] = memory.body
    data["path"] = str(path)
    data["home"] = home
    data["summary"] = memory.summary
    return data


def shown_text(memory: model.Memory, path: object, warnings: Sequence[str] = ()) -> str:
    """`show`'s text of a memory at PATH (before its links): a header line, each front
    matter field on one line (control characters escaped: files that arrive by git are
    never trusted to be one line), the path, WARNINGS, a blank line, the body escaped."""
    lines = [f"memory {memory.id}  {memory.label}"]
    for key, value in memory.front_matter().items():
        if key in ("id",):
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{key}:")
            for entry in value:
                lines.append("  - " + ", ".join(f"{k}: {_safe(v)}" for k, v in entry.items()))
        elif isinstance(value, list):
            lines.append(f"{key}: {', '.join(_safe(v) for v in value)}")
        else:
            lines.append(f"{key}: {_safe(value)}")
    lines.append(f"path: {path}")
    for warning in warnings:
        lines.append(f"warning: {warning}")
    lines.append("")
    lines.append(model.escape_text(memory.body))
    return "\n".join(lines)


def _safe(value: object) -> str:
    return model.escape_controls(str(value))


def shown_hashes(memory: model.Memory, path: object, home: str) -> list[str]:
    """The body hashes (fingerprint.body_hash) of what `show` and `show --json` print for
    a memory with no links, when not on a terminal: a personal memory's `show ID >
    file` staged anywhere is then one whole-file hash the commit scan already makes."""
    texts = (shown_text(memory, path),
             jsonout.document({**shown_fields(memory, path, home), "links": []}))
    return [h for h in map(fingerprint.body_hash, texts) if h]


def fields(memory: model.Memory) -> dict[str, object]:
    """as_json's mapping up to the body: the front matter, then every other field."""
    data: dict[str, object] = dict(memory.front_matter())
    for name in model.FIELD_ORDER:
        data.setdefault(name, getattr(memory, name, None))
    return data


def stored_fields(doc: str) -> dict[str, object]:
    """`fields` of the memory whose front matter's JSON is DOC (the doc column), with no
    Memory made."""
    data: dict[str, object] = json.loads(doc)
    data.update((n, model.DEFAULTS[n]) for n in model.FIELD_ORDER if n not in data)
    return data


def _items(data: dict[str, object]) -> str:
    """jsonout.element(DATA) without its braces: its items, one a line ("" for none)."""
    return jsonout.element(data)[len("{\n    "):-len("\n  }")] if data else ""


# The types json.loads gives back as json.dumps was given them (exactly: no subclass).
_SAME = frozenset({str, int, bool, type(None)})


def _round_trips(front: dict[str, Any]) -> bool:
    """Whether json.loads(jsonout.element(FRONT)) == FRONT with every value of the same
    type, in the same order: text keys, and values that are texts, whole numbers,
    flags, nulls or lists of texts (a float, a time, a mapping, a list of anything else
    or a subclass is left to the round trip)."""
    same = _SAME
    for key, value in front.items():
        kind = type(value)
        if type(key) is not str or kind not in same and not (
                kind is list and all(type(item) is str for item in value)):
            return False
    return True


def element(row: tuple[Any, ...]) -> bytes | None:
    """The element (UTF-8) of a row of COLUMNS; None when chain completion changed one
    of its fields (eff_*): then `whole` of its memory as reads see it is."""
    path, home, listed, zbody, eff_status, eff_retired, eff_by, doc, summary = row[:9]
    if eff_status is not None or eff_retired is not None or eff_by is not None:
        return None
    raw = bodies.body_bytes(zbody)
    if listed is None:
        body = raw.decode("utf-8")
        data = stored_fields(doc.decode("utf-8"))
        return _written(data, str(data["title"]), body, path, home)
    home_json = _HOMES.get(home)
    if home_json is None:
        home_json = _HOMES[home] = jsonout.string(home).encode("utf-8")  # a few home kinds
    tail = _TAILS.get(listed)
    return b"".join((memoryview(doc)[:-_END], _tail(listed) if tail is None else tail,
                     _BODY, jsonout.plain_bytes(raw) if listed & PLAIN else
                     jsonout.string_bytes(raw), _PATH, jsonout.string(path).encode("utf-8"),
                     _HOME, home_json, _SUMMARY, summary, _CLOSE))


def whole(memory: model.Memory, path: str, home: str) -> bytes:
    """The element (UTF-8) of MEMORY, whose file is PATH in a home of kind HOME."""
    return _written(fields(memory), memory.title, memory.body, path, home)


def _written(data: dict[str, object], title: str, body: str, path: str, home: str) -> bytes:
    data["body"] = body
    data["path"] = path
    data["home"] = home
    data["summary"] = model.summarise(title, body)
    return jsonout.element(data).encode("utf-8")
