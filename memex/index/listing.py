"""The form `list --json` gives a memory, and the part of it each index row keeps.

A listed memory is reads.as_json's mapping (every field: the front matter, then the rest
of model.FIELD_ORDER with their defaults; then body, path, home and summary) written as
jsonout.element writes it. Building and encoding that mapping per memory was most of a
listing's time, so the build keeps per row (schema 8, written with the row by
build.memory_row, so it changes when the row does) a `listed` column: the element's
text up to its last front-matter field, a NUL and the summary as a JSON string
(model.summarise of the title and body), as UTF-8 compressed with zlib against a
fixed dictionary of the element's keys and usual values (~320 bytes a row, not ~1,400:
the index stays within 1.5x its files).

A listing then inflates that and copies it around the inflated body and the path and
home, which it writes as JSON strings (`element`). A row the column cannot give is
built whole as before: one whose chain completion changed a field (eff_*), or whose
front matter names a field written after it (`listed` is NULL). build.text_rule
digests the stored form of a few memories (before compression), so an index made by
another encoder or field order is rebuilt.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from memex.core import jsonout, model
from memex.index import bodies

# The fields an element holds after the front matter's, in order.
AFTER = ("body", "path", "home", "summary")

# The columns `element` reads, in its order; then the id and what the eligibility rule
# reads, as chain completion left them (policy.eligible_fields' order).
COLUMNS = (
    "path, home, listed, zbody, eff_status, eff_retired_at, eff_superseded_by, "
    "CASE WHEN listed IS NULL OR eff_status IS NOT NULL OR eff_retired_at IS NOT NULL "
    "OR eff_superseded_by IS NOT NULL THEN doc END, "
    "id, coalesce(eff_status, status), review_state, created_at, "
    "coalesce(eff_retired_at, retired_at), valid_from, valid_until, expires_at")
ID = 8  # the id's place in a row of COLUMNS
ELIGIBILITY = slice(9, 16)  # the eligibility rule's fields

_BODY = b',\n    "body": '
_PATH = b',\n    "path": '
_HOME = b',\n    "home": '
_SUMMARY = b',\n    "summary": '
_CLOSE = b"\n  }"
_OPEN_END = len("\n  }")  # what `listed` leaves off an element of the front matter alone

# What `listed` is compressed against: an element of every field at its default, and
# one with the values most memories hold (zlib finds a row's keys and usual values
# here rather than spelling them out).
DICTIONARY = (
    jsonout.element({n: model.DEFAULTS[n] for n in model.FIELD_ORDER})
    + jsonout.element({**{n: model.DEFAULTS[n] for n in model.FIELD_ORDER}, **{
        "schema_version": model.SCHEMA_VERSION, "revision": 1,
        "repo_id": "git-origin-sha256:", "scope": "project", "visibility": "internal",
        "type": "knowledge", "role": "knowledge", "trust_level": "reviewed",
        "importance": "normal", "confidence": "medium", "status": "active",
        "review_state": "draft", "source": "user", "via": "cli", "created_by": "local:",
        "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}})
).encode("utf-8")

_HOMES: dict[str, bytes] = {}  # a home kind -> its JSON string

# A row's text deflated against the dictionary (bodies.deflater: ISA-L's where it
# imports, else zlib's); the inflater reads either, and any window.
_DEFLATE = bodies.deflater(DICTIONARY)

# The fields a stored doc with these keys leaves out, with their defaults, in order, and
# their items as an element writes them (the same text for every memory with these keys).
_MISSING: dict[tuple[str, ...], tuple[dict[str, object], str]] = {}


def fields(memory: model.Memory) -> dict[str, object]:
    """as_json's mapping up to the body: the front matter, then every other field."""
    data: dict[str, object] = dict(memory.front_matter())
    for name in model.FIELD_ORDER:
        data.setdefault(name, getattr(memory, name, None))
    return data


def stored_fields(doc: str, front: dict[str, Any] | None = None) -> dict[str, object]:
    """`fields` of the memory whose front matter's JSON is DOC (build.memory_row's doc
    column), with no Memory made. FRONT, when given, is the mapping DOC was encoded
    from: used as it is (copied) when json.loads(DOC) would give it back unchanged,
    which saves decoding DOC again on a build."""
    data, (missing, _) = _given(doc, front)
    data.update(missing)
    return data


def _given(doc: str, front: dict[str, Any] | None
           ) -> tuple[dict[str, object], tuple[dict[str, object], str]]:
    """The front matter's mapping (see stored_fields), and the fields it leaves out with
    their defaults, in order, with their _items (one pair per set of keys: kept as is)."""
    data: dict[str, object] = json.loads(doc) if front is None or not _round_trips(front) \
        else dict(front)
    shape = tuple(data)
    missing = _MISSING.get(shape)
    if missing is None:
        left = {n: model.DEFAULTS[n] for n in model.FIELD_ORDER if n not in data}
        missing = (left, _items(left))
        if len(_MISSING) < 512:
            _MISSING[shape] = missing
    return data, missing


def _items(data: dict[str, object]) -> str:
    """jsonout.element(DATA) without its braces: its items, one a line ("" for none)."""
    return jsonout.element(data)[len("{\n    "):-len("\n  }")] if data else ""


# The types json.loads gives back as json.dumps was given them (exactly: no subclass).
_SAME = frozenset({str, int, bool, type(None)})


def _round_trips(front: dict[str, Any]) -> bool:
    """Whether json.loads(jsonout.compact(FRONT)) == FRONT with every value of the same
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


def plain(doc: str, body: str, front: dict[str, Any] | None = None) -> bytes | None:
    """The `listed` column of the row whose doc is DOC and body BODY, before it is
    compressed (None: the column is NULL). FRONT: see stored_fields."""
    data, (missing, tail) = _given(doc, front)
    if not data.keys().isdisjoint(AFTER):
        return None
    summary = model.summarise(str(data["title"] if "title" in data else missing["title"]),
                              body)
    # the element of the front matter's fields and then the missing ones (never none:
    # FIELD_ORDER's), the missing ones' items written once per set of keys
    given = _items(data)
    try:
        return ("{\n    " + (f"{given},\n    {tail}" if given and tail else given or tail)
                + "\x00" + jsonout.string(summary)).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: built whole, as before
        return None


def stored(doc: str, body: str, front: dict[str, Any] | None = None) -> bytes | None:
    """The `listed` column of the row whose doc is DOC and body BODY (FRONT: see
    stored_fields)."""
    text = plain(doc, body, front)
    if text is None:
        return None
    return _DEFLATE(text)


def element(row: tuple[Any, ...]) -> bytes | None:
    """The element (UTF-8) of a row of COLUMNS; None when chain completion changed one
    of its fields (eff_*): then `whole` of its memory as reads see it is."""
    path, home, listed, zbody, eff_status, eff_retired, eff_by, doc = row[:8]
    raw = bodies.body_bytes(zbody)
    if doc is None:
        string = jsonout.string
        head, _, summary = zlib.decompressobj(zdict=DICTIONARY).decompress(listed).partition(
            b"\x00")
        home_json = _HOMES.get(home)
        if home_json is None:
            home_json = _HOMES[home] = string(home).encode("utf-8")  # a few home kinds
        return b"".join((head, _BODY, jsonout.string_bytes(raw), _PATH,
                         string(path).encode("utf-8"), _HOME, home_json, _SUMMARY, summary,
                         _CLOSE))
    if eff_status is not None or eff_retired is not None or eff_by is not None:
        return None
    body = raw.decode("utf-8")
    data = stored_fields(doc)
    return _written(data, str(data["title"]), body, path, home)


def whole(memory: model.Memory, path: str, home: str) -> bytes:
    """The element (UTF-8) of MEMORY, whose file is PATH in a home of kind HOME."""
    return _written(fields(memory), memory.title, memory.body, path, home)


def _written(data: dict[str, object], title: str, body: str, path: str, home: str) -> bytes:
    data["body"] = body
    data["path"] = path
    data["home"] = home
    data["summary"] = model.summarise(title, body)
    return jsonout.element(data).encode("utf-8")
