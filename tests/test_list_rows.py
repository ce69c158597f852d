"""`list --json` streams JSON built straight from index rows (reads.each_listed: each
row's stored start of its element, index.listing) and written by a faster encoder
(jsonout.element): the bytes must be the ones the Memory path gives (reads.load_view,
as_json, json.dumps(indent=2)) on a varied store, the stored form must be what a full
rebuild writes after any change, and the encoder must write json.dumps's text for any
JSON value."""

from __future__ import annotations

import gc
import io
import json
import os
import random
import re
import sqlite3
import tracemalloc
from collections.abc import Iterator
from contextlib import redirect_stdout
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.adapters.cli import _common
from memex.core import clock, jsonout, policy
from memex.index import bodies, build, listing
from memex.storage import homes
from memex.workflows import reads
from tests.helpers.tracing import untraced
from tests.test_context import approved_instruction, personal, put, shared


def _stream(capsys: pytest.CaptureFixture[str], elements: Any) -> str:
    capsys.readouterr()
    _common.emit_json_elements(elements)
    return capsys.readouterr().out


def _encoded(items: list[object]) -> Iterator[bytes]:
    return (jsonout.element(item).encode("utf-8") for item in items)


def _dumped(capsys: pytest.CaptureFixture[str], data: object) -> str:
    capsys.readouterr()
    _common.emit_json(data)
    return capsys.readouterr().out


def _varied(repo: Path, memex_home: Path) -> None:
    rng = random.Random(7)
    old = put(shared(repo), "project", "the deploy runs from main", "2026-10-01T00:00:00Z",
              tags=["deploy", "ci"], paths=["src/**"])
    # a successor the old file does not know of: chain completion (eff_*) retires it
    put(shared(repo), "project", "the deploy runs from the release branch",
        "2026-10-05T00:00:00Z", supersedes=old.id, related=[old.id])
    fields: list[dict[str, Any]] = [
        {"status": "archived", "retired_at": "2026-10-02T00:00:00Z"},
        {"expires_at": "2026-10-20T00:00:00Z"},
        {"valid_from": "2099-01-01T00:00:00Z"},
        {"valid_until": "2026-10-10T00:00:00Z", "valid_from": "2026-01-01T00:00:00Z"},
        {"review_state": "rejected"},
        {"review_state": "draft", "importance": "high", "confidence": "low"},
        approved_instruction(approved_by="local:lead@example.com"),
        {"extra": {"x-owner": {"team": "infra", "since": 2024, "ratio": 0.5,
                               "ok": True, "none": None},
                   "x-list": [1, "two", [3.25], {"four": []}], "x-empty": [],
                   "x-text": "ünïcödé \u2028 \x7f \x1b[31m"}},
        {"status_history": [{"at": "2026-10-03T00:00:00Z", "by": "local:a@example.com",
                             "from": "active", "to": "deprecated"}],
         "status": "deprecated"},
        {"title": "", "text": "no title; " + "word " * 200},
        {"title": "t" * 300, "text": "\tcontrol\x01 chars\r\nand 日本語 text"},
        {"aliases": ["ship it", "部署"], "language": "en", "pinned": True},
        # names fields the listing writes after the front matter: no stored form
        {"extra": {"summary": "my own words", "home": "elsewhere"}},
    ]
    for i, extra in enumerate(fields):
        day = f"2026-10-{rng.randint(1, 28):02d}T00:00:00Z"
        body = extra.pop("text", f"project note {i} about staging")
        put(shared(repo), "project", body, day, **extra)
    for i in range(4):
        put(personal(memex_home), "personal", f"my habit {i}", "2026-10-03T00:00:00Z",
            **({"expires_at": "2026-10-04T00:00:00Z"} if i == 1 else {}))


@pytest.mark.parametrize("scopes,include_all,as_of", [
    (None, False, None),
    (None, True, None),
    (["project"], False, None),
    (["personal", "org"], True, None),
    (None, False, "2026-10-03T12:00:00Z"),
    (None, False, "2026-10-15T00:00:00Z"),
    (["project"], True, "2026-10-04T00:00:00Z"),
])
def test_rows_stream_the_bytes_of_the_memory_path(
        repo: Path, memex_home: Path, capsys: pytest.CaptureFixture[str],
        scopes: list[str] | None, include_all: bool, as_of: str | None) -> None:
    _varied(repo, memex_home)
    ws = homes.workspace()
    view = reads.load_view(ws, scopes, include_all, as_of)
    items, _ = reads.each_listed(ws, scopes, include_all, as_of)
    assert _stream(capsys, items) == _dumped(capsys, [reads.as_json(x) for x in view.items])
    assert view.items or not include_all


def test_the_varied_store_has_what_the_rows_path_must_handle(
        repo: Path, memex_home: Path) -> None:
    """The store above exercises chain completion (eff_*), unknown keys and every
    eligibility rule: else the comparison proves less than it says."""
    _varied(repo, memex_home)
    ws = homes.workspace()
    everything = reads.load_view(ws, include_all=True).items
    live = reads.load_view(ws).items
    assert any(x.memory.status == "superseded" and "superseded" not in
               x.path.read_text(encoding="utf-8") for x in everything)
    assert any(x.memory.extra for x in live)
    assert len(live) < len(everything) - 6
    items, _ = reads.each_listed(ws, limit=3)
    assert [json.loads(i)["id"] for i in items] == [x.id for x in live[:3]]


def test_one_eligibility_rule_for_memories_and_fields(
        repo: Path, memex_home: Path) -> None:
    _varied(repo, memex_home)
    at = clock.now_str()
    for item in reads.load_view(homes.workspace(), include_all=True).items:
        m = item.memory
        for as_of in (None, "2026-10-03T12:00:00Z", "2026-10-15T00:00:00Z"):
            assert policy.eligible(m, at, as_of) == policy.eligible_fields(
                m.status, m.review_state, m.created_at, m.retired_at, m.valid_from,
                m.valid_until, m.expires_at, at, as_of)


_scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
            | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8)
            | st.text(alphabet=st.characters(max_codepoint=0x7f), min_size=190, max_size=230))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                       max_leaves=8)


def _reference(items: list[object]) -> str:
    """json.dumps's text with its layout controls escaped (what emit_json writes), the
    reference (indented, it is the standard library's Python encoder: run without
    coverage's tracer, tests/helpers/tracing.py); it parses to what json.dumps's does."""
    with untraced():
        plain = json.dumps(items, ensure_ascii=False, indent=2)
    escaped = jsonout.escape_layout(plain)
    assert json.dumps(json.loads(escaped)) == json.dumps(json.loads(plain))
    return escaped + "\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), _values, max_size=6)
                | _values, max_size=3))
def test_the_stream_writes_what_json_dumps_writes(items: list[object]) -> None:
    out = io.StringIO()
    with redirect_stdout(out):
        _common.emit_json_elements(_encoded(items))
    assert out.getvalue() == _reference(items)


@pytest.mark.parametrize("count", [0, 1, 63, 64, 65, 127, 128, 129, 200])
@pytest.mark.parametrize("stream", ["text", "bytes"])
def test_blocks_of_elements_write_what_json_dumps_writes(count: int, stream: str) -> None:
    """emit_json_elements escapes layout controls a block of 64 elements at a time: at
    and around the blocks' edges, with controls in some blocks and not in others, the
    array is json.dumps's with its controls escaped, on both stdout paths."""
    items: list[object] = [
        {"n": i, "text": f"note {i} \u2028 \u202e \x85 \x7f é" if i % 37 == 5 else f"note {i}"}
        for i in range(count)]
    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=True)
    out = io.StringIO() if stream == "text" else text
    with redirect_stdout(out):
        assert (_common._utf8_stdout() is None) == (stream == "text")
        _common.emit_json_elements(_encoded(items))
        text.flush()
    written = out.getvalue() if isinstance(out, io.StringIO) else raw.getvalue().decode()
    assert written == _reference(items)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=6), _values, max_size=6)
                | _values, max_size=3))
def test_the_byte_stream_path_writes_what_json_dumps_writes(items: list[object]) -> None:
    """On a UTF-8 stdout over a byte stream the elements' bytes are written to the
    stream below: the same bytes as the text path."""
    raw = io.BytesIO()
    text = io.TextIOWrapper(raw, encoding="utf-8", newline="", write_through=True)
    with redirect_stdout(text):
        assert _common._utf8_stdout() is not None
        _common.emit_json_elements(_encoded(items))
        text.flush()
    assert raw.getvalue() == _reference(items).encode("utf-8")



@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _values, max_size=6) | _values)
def test_the_compact_form_is_what_json_dumps_writes(value: object) -> None:
    """jsonout.compact (an index row's doc, tags and paths) writes json.dumps's text,
    floats, huge numbers, nesting and text near the encoder's edges included."""
    assert jsonout.compact(value) == json.dumps(value, ensure_ascii=False, default=str)


def test_the_compact_form_writes_other_types_by_their_text() -> None:
    class Label(str):
        pass

    value = {"t": Label("x"), "p": Path("/tmp/y"), "d": date(2026, 12, 1), "n": (1, [2]),
             1: "k", None: float("nan")}
    assert jsonout.compact(value) == json.dumps(value, ensure_ascii=False, default=str)

# Texts near the byte path's edges: quotes, backslashes, newlines, tabs, the other
# control characters, DEL, non-ASCII and the line separators json leaves alone.
_BODY_TEXT = st.text(st.sampled_from('ab "\\/\n\t\r\x00\x08\x0b\x0c\x1b\x1f\x7f'
                                     "\u00e9\u2028\u65e5\U0001f600"), max_size=40)


@settings(max_examples=400, deadline=None)
@given(_BODY_TEXT)
def test_a_body_is_written_as_json_dumps_writes_its_string(text: str) -> None:
    assert jsonout.string_bytes(text.encode("utf-8")) == json.dumps(
        text, ensure_ascii=False).encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(_BODY_TEXT, st.integers(min_value=1, max_value=12))
def test_a_rows_plain_body_flag_gives_the_element_the_memory_gives(
        text: str, times: int) -> None:
    """The row's `listed` marks a plain body (listing.PLAIN: ASCII, no control character
    but newline and tab), whose JSON is then made on its bytes with no look for other
    controls: the element from the row's columns is the one the Memory path writes,
    for short (stored as text) and long (deflated) bodies alike."""
    from memex.core import model

    body = text * times * 10
    memory = model.Memory(id="01ABC", scope="project", title="t", body=body)
    doc, listed, summary = listing.stored(memory.front_matter(), memory.body)
    assert listed is not None
    assert bool(listed & listing.PLAIN) == (body.isascii() and not any(
        c < " " and c not in "\n\t" or c == "\x7f" for c in body))
    assert max(listing._BITS.values()) < listing.PLAIN
    row = ("/tmp/x/01ABC.md", "repo", listed, bodies.pack_body(body), None, None, None,
           doc.encode("utf-8"), summary)  # as listing.COLUMNS reads it
    assert listing.element(row) == listing.whole(memory, "/tmp/x/01ABC.md", "repo")


def test_a_usual_body_is_escaped_on_its_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ASCII body whose control characters are newlines and tabs (most bodies) is
    not decoded to a str for the str encoders (a third of the cost of writing it)."""
    def refused(text: str) -> str:
        raise AssertionError("decoded for a str encoder")

    monkeypatch.setattr(jsonout, "_ASCII", refused)
    monkeypatch.setattr(jsonout, "_STRING", refused)
    body = 'a "quoted" C:\\path,\n\tindented </end>\n' * 20
    assert jsonout.string_bytes(body.encode("ascii")) == json.dumps(body).encode("ascii")


def test_rows_of_the_list_shape_take_the_one_call_path_and_write_json_dumps_bytes() -> None:
    """A row as `list --json` builds it (front matter, then body, path, home and a
    summary ending in an ellipsis; non-ASCII in a short field, nested lists, an empty
    list, a long title) and its variants: the parts joined equal json.dumps."""
    row: dict[str, object] = {
        "id": "01ABC", "schema_version": 2, "title": "déploiement " + "x" * 250,
        "tags": ["ci", "部署"], "aliases": [], "pinned": False, "importance": None,
        "review_history": [{"at": "2026-10-01T00:00:00Z", "by": "local:a@example.com"}],
        "ratio": 0.5, "nan": float("nan"), "big": 2**70,
        "body": "line one\nline \"two\"\t\\ end " * 40, "path": "/tmp/x/01ABC.md",
        "home": "repo", "summary": "déploiement: line one line \"two\" \u2026",
    }
    variants = [row, {**row, "tags": []}, {**row, "body": "short"},
                {**row, "summary": "plain"}, {"only": "x" * 300}, {"a": None},
                {**row, 1: [1]}, {**row, "del": "\x7f" * 300}]
    for item in variants:
        assert jsonout.element(item) == json.dumps(
            [item], ensure_ascii=False, indent=2)[4:-2]
    assert jsonout._shape(tuple(map(type, row.values()))) is not None


def test_values_of_other_types_are_written_as_json_dumps_writes_them() -> None:
    """A tuple, a str subclass or an object json writes by `default=str` is never part
    of a run of plain values (a tuple there was written on one line)."""
    class Label(str):
        pass

    items = [{"a": (1, 2), "b": ()}, {"t": Label("x"), "p": Path("/tmp/y")},
             {"n": [1, (2, 3)], "long": "y" * 300}]
    out = io.StringIO()
    with redirect_stdout(out):
        _common.emit_json_elements(_encoded(items))
    assert out.getvalue() == json.dumps(items, ensure_ascii=False, indent=2,
                                        default=str) + "\n"


def _rows(ws: homes.Workspace) -> list[tuple[object, ...]]:
    """Every column of every memories row but the rowid, by path."""
    with build.open_index(ws, refresh=False) as index:
        names = [row[1] for row in index.conn.execute("PRAGMA table_info(memories)")
                 if row[1] != "rowid"]
        return index.conn.execute(f"SELECT {', '.join(names)} FROM memories "
                                  "ORDER BY path").fetchall()


def test_the_listed_column_after_changes_is_what_a_full_rebuild_writes(
        repo: Path, memex_home: Path) -> None:
    """What each row keeps for its element (index.listing) is written with it: after
    edits, a move between homes, a deletion, a new memory and a chain change, the
    incremental refresh leaves the table a full rebuild makes, and each row's columns
    are what its own front matter and body give."""
    _varied(repo, memex_home)
    ws = homes.workspace()
    build.refresh(ws)
    files = sorted(shared(repo).glob("*.md"))
    edited = files[0].read_text(encoding="utf-8")
    files[0].write_text(edited.replace("\ntitle: ", "\ntitle: Renamed ", 1)
                        .rstrip("\n") + "\nand one more line\n", encoding="utf-8")
    files[1].unlink()
    moved = sorted(personal(memex_home).glob("*.md"))[0]
    moved.rename(shared(repo) / moved.name)
    newer = put(shared(repo), "project", "a memory written after the first build",
                "2026-10-20T00:00:00Z")
    put(shared(repo), "project", "it replaces the newer one", "2026-10-21T00:00:00Z",
        supersedes=newer.id)
    build.refresh(ws)
    incremental = _rows(ws)
    build.refresh(ws, full=True)
    assert _rows(ws) == incremental
    names = [row[1] for row in build.open_index(ws, refresh=False).conn.execute(
        "PRAGMA table_info(memories)") if row[1] != "rowid"]
    doc, zbody, listed, summary = (names.index(n) for n in ("doc", "zbody", "listed",
                                                              "summary"))
    nulls = 0
    for row in incremental:
        front, body = json.loads(str(row[doc])), bodies.body_text(row[zbody])  # type: ignore[arg-type]
        nulls += row[listed] is None
        assert (row[doc], row[listed], row[summary]) == listing.stored(front, body)
    assert nulls == 1  # the memory naming summary and home in its front matter
    assert "Renamed" in _stream_all(ws)


def _stream_all(ws: homes.Workspace) -> str:
    items, _ = reads.each_listed(ws, include_all=True)
    return b"".join(items).decode("utf-8")


def _listing_peak(ws: homes.Workspace) -> int:
    """tracemalloc's peak (bytes) while the whole listing is read and each element
    dropped, its log line written at the end; the refresh (each_listed) before it."""
    items, _ = reads.each_listed(ws)
    gc.collect()
    tracemalloc.start()
    try:
        for _ in items:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_listing_holds_no_object_per_memory(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`list --json` streams: past the page it reads (8 rows here), reading every
    memory holds about the log line's bytes per memory (~30 for its id), not a key, an
    id string or a list slot per memory (~300 bytes). Measured as the growth of the
    listing's peak from 300 memories to 600 (from 30, a one-time step of the usage
    line's buffer and the key table's connection counted as growth: ~100 bytes)."""
    monkeypatch.setattr(reads, "PAGE", 8)
    ws = homes.workspace()
    peaks = []
    for count in (300, 300):
        for i in range(count):
            put(shared(repo), "project", f"note {len(peaks)} {i}",
                f"2026-10-{i % 28 + 1:02d}T00:00:00Z")
        _listing_peak(ws)  # warm: statement caches, the index refreshed
        peaks.append(_listing_peak(ws))
    grown = (peaks[1] - peaks[0]) / 300
    assert grown < 100, f"{grown:.0f} bytes a memory ({peaks})"


def _temp_tables(ws: homes.Workspace) -> list[str]:
    with build.open_index(ws, refresh=False) as index:
        return [n for (n,) in index.conn.execute("SELECT name FROM sqlite_temp_master")]


def test_pages_past_the_first_stream_the_bytes_of_the_memory_path(
        repo: Path, memex_home: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Three rows a page: the keys past the first page come from the index's temporary
    table in order, and the table is gone after a whole listing and after one left
    early (--limit)."""
    monkeypatch.setattr(reads, "PAGE", 3)
    _varied(repo, memex_home)
    ws = homes.workspace()
    for include_all in (False, True):
        view = reads.load_view(ws, include_all=include_all)
        assert len(view.items) > 7
        items, _ = reads.each_listed(ws, include_all=include_all)
        assert _stream(capsys, items) == _dumped(
            capsys, [reads.as_json(x) for x in view.items])
        assert _temp_tables(ws) == []
    items, _ = reads.each_listed(ws, include_all=True, limit=5)
    assert [json.loads(i)["id"] for i in items] == [
        x.id for x in reads.load_view(ws, include_all=True).items[:5]]
    gc.collect()
    assert _temp_tables(ws) == []


def _busy_once(monkeypatch: pytest.MonkeyPatch) -> Any:
    real = build._current

    def busy(conn: sqlite3.Connection) -> bool:
        monkeypatch.setattr(build, "_current", real)
        raise sqlite3.OperationalError("database is locked")
    return busy


@pytest.mark.parametrize("interruption", ["index replaced", "index busy"])
def test_a_listing_goes_on_when_the_kept_connection_is_dropped_between_pages(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch,
        interruption: str) -> None:
    """The index's kept connection is closed between two pages when the index file is
    replaced (another process's rebuild) or found busy: the listing still hands every
    memory, as it did when the keys were held in Python (found by review: 12 of 30)."""
    monkeypatch.setattr(reads, "PAGE", 4)
    for i in range(30):
        put(shared(repo), "project", f"note {i}", f"2026-10-{i % 28 + 1:02d}T00:00:00Z")
    ws = homes.workspace()
    expected = [x.id for x in reads.load_view(ws, include_all=True).items]
    items, _ = reads.each_listed(ws, include_all=True)
    got = []
    for n, item in enumerate(items):
        got.append(json.loads(item)["id"])
        if n == 5:
            if interruption == "index replaced":
                path = build.db_path(ws)
                with build.open_index(ws, refresh=False) as index:
                    copy = sqlite3.connect(f"{path}.copy")
                    index.conn.backup(copy)
                    copy.close()
                os.replace(f"{path}.copy", path)
            else:
                monkeypatch.setattr(build, "_current", _busy_once(monkeypatch))
    assert got == expected


_LAYOUT_CHARS = st.sampled_from(["\x7f", "\x80", "\x85", "\x9f", "\u2028", "\u2029",
                                 "\u202a", "\u202e", "\u2066", "\u2069", "\u00a0", "é",
                                 "\n", "a", "\u2027", "\u202f", "\u2065", "\u206a",
                                 "\u2026", "\u2080", "\u00c2"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(_LAYOUT_CHARS, max_size=8) | st.text(max_size=8), max_size=4))
def test_layout_controls_are_escaped_and_the_json_kept_exact(texts: list[str]) -> None:
    """audit31: escape_layout writes DEL, C1, U+2028/9 and bidi controls as \\uXXXX; the
    JSON parses to the same value, and the byte form writes the same bytes."""
    plain = json.dumps(texts, ensure_ascii=False)
    escaped = jsonout.escape_layout(plain)
    assert json.loads(escaped) == texts
    assert not re.search("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", escaped)
    assert jsonout.escape_layout_bytes(plain.encode()) == escaped.encode()


def test_every_layout_control_and_none_of_its_neighbours_is_escaped_by_both() -> None:
    """fix31b (review of audit31): jsonout's byte search hard-coded the byte ranges of
    model.LAYOUT_CONTROLS (a second copy of the rule) and the set lacked the bidi marks
    U+200E, U+200F, U+061C: each character of the set is escaped by escape_layout and
    escape_layout_bytes (list --json), each neighbour outside it by neither; past U+FFFF
    as a surrogate pair, as JSON writes it (redteam35: tag characters)."""
    from memex.core import jsonout, model

    chars = set(jsonout._expand(model.LAYOUT_CONTROLS))
    assert {"\u200e", "\u200f", "\u061c", "\x7f", "\x85", "\u202e", "\u2069"} <= chars
    near = {chr(o) for c in chars for o in (ord(c) - 1, ord(c) + 1)} - chars
    for char in sorted(chars | near):
        text = f'"a{char}b"'
        escaped = f'"a{json.dumps(char)[1:-1]}b"' if char in chars else text
        assert jsonout.escape_layout(text) == escaped, hex(ord(char))
        assert jsonout.escape_layout_bytes(text.encode()) == escaped.encode(), hex(ord(char))


def test_the_listing_escape_follows_the_set() -> None:
    """The reviewer's: a character added to model.LAYOUT_CONTROLS is escaped by list
    --json's byte path too (jsonout made again from the set)."""
    import importlib

    from memex.core import jsonout, model

    old = model.LAYOUT_CONTROLS
    try:
        model.LAYOUT_CONTROLS = old + "\u200b"
        importlib.reload(jsonout)
        text = '"a\u200bb"'
        assert jsonout.escape_layout(text) == '"a\\u200bb"'
        assert jsonout.escape_layout_bytes(text.encode()) == b'"a\\u200bb"'
    finally:
        model.LAYOUT_CONTROLS = old
        importlib.reload(jsonout)


def _memories_made(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """The index rows made into Memories from now on (views.as_read, the one seam)."""
    from memex.index import views

    made: list[tuple[Any, ...]] = []
    real = views.as_read

    def counted(*stored: Any) -> Any:
        made.append(stored)
        return real(*stored)
    monkeypatch.setattr(views, "as_read", counted)
    return made


# A table's filters: CLI arguments, then load_view's scopes, include_all and as_of.
_TABLES: list[tuple[tuple[str, ...], list[str] | None, bool, str | None]] = [
    ((), None, False, None),
    (("--include", "all"), None, True, None),
    (("--scope", "project"), ["project"], False, None),
    (("--scope", "personal", "--include", "all"), ["personal"], True, None),
    (("--as-of", "2026-10-03T12:00:00Z"), None, False, "2026-10-03T12:00:00Z"),
]


@pytest.mark.parametrize("args,scopes,include_all,as_of", _TABLES)
def test_a_limited_table_makes_only_the_memories_it_shows(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...], scopes: list[str] | None, include_all: bool,
        as_of: str | None) -> None:
    """`list --limit N` (the table) reads N memories whole, whatever the store's size
    (three rows a page: the count goes past the first), and prints what the Memory
    path (load_view, then the newest N) prints, its count note included."""
    from memex.adapters.cli import _render
    from tests.helpers import invoke

    monkeypatch.setattr(reads, "PAGE", 3)
    _varied(repo, memex_home)
    ws = homes.workspace()
    expected = reads.load_view(ws, scopes, include_all, as_of).items
    assert len(expected) > 2
    made = _memories_made(monkeypatch)
    result = invoke("list", "--limit", "2", *args)
    assert result.exit_code == 0, result.stderr
    assert len(made) == 2
    assert result.stdout == _render.table(_render.memory_rows(expected[:2]),
                                          _render.LIST_HEADERS) + "\n"
    assert f"the newest 2 of {len(expected)} shown" in result.stderr


def test_an_empty_limited_table_says_why(repo: Path, memex_home: Path) -> None:
    """The empty listing's note tells a store with no memory from a filter that hid
    them, from counted rows (no memory made)."""
    from tests.helpers import invoke

    assert "no memories yet" in invoke("list", "--limit", "2").stderr
    _varied(repo, memex_home)
    result = invoke("list", "--limit", "2", "--scope", "org")
    assert result.stdout == "" and "no memories match (--include all" in result.stderr


@pytest.mark.parametrize("kwargs", [
    {"limit": 2}, {"limit": 3, "offset": 2}, {"limit": 2, "type": "knowledge"},
    {"limit": 5, "offset": 1, "scope": "project"}, {"limit": 4, "offset": 100},
])
def test_the_agents_list_makes_only_the_memories_it_shows(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch,
        kwargs: dict[str, Any]) -> None:
    """MCP memory_list (agent.list_memories) reads its page whole, counts the rest, and
    gives what the Memory path gives (load_view, the type filter, then the page)."""
    from memex.workflows import agent

    monkeypatch.setattr(reads, "PAGE", 3)
    _varied(repo, memex_home)
    ws = homes.workspace()
    scopes = agent.allowed_scopes(ws, kwargs.get("scope"))
    expected = [agent._brief(i) for i in reads.load_view(ws, scopes).items
                if "type" not in kwargs or i.memory.type == kwargs["type"]]
    offset = kwargs.get("offset", 0)
    made = _memories_made(monkeypatch)
    listed = agent.list_memories(ws, **kwargs)
    assert listed["memories"] == expected[offset:offset + kwargs["limit"]]
    assert listed["total"] == len(expected) > 3
    assert len(made) == len(listed["memories"])


@pytest.mark.parametrize("args,scopes,include_all,as_of", [*_TABLES, (
    ("--as-of", "2026-10-15T00:00:00Z", "--include", "all"), None, True,
    "2026-10-15T00:00:00Z")])
@pytest.mark.parametrize("columns", [None, 40, 72, 250])
def test_the_whole_table_makes_no_memory(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch,
        args: tuple[str, ...], scopes: list[str] | None, include_all: bool,
        as_of: str | None, columns: int | None) -> None:
    """`list` without --limit (the table) reads narrow index rows twice (the widths,
    then the lines: three a page, so both passes cross pages) and makes no Memory,
    whatever the store's size; it prints what the Memory path (load_view, every row
    measured at once) prints, cut to a terminal's width as that path cut it, and logs
    the same ids as listed."""
    from memex.adapters.cli import _render
    from memex.storage import usage
    from tests.helpers import invoke

    monkeypatch.setattr(reads, "PAGE", 3)
    _varied(repo, memex_home)
    ws = homes.workspace()
    expected = reads.load_view(ws, scopes, include_all, as_of).items
    assert len(expected) > 3
    monkeypatch.setattr(_render, "_terminal_columns", lambda: columns)
    usage.log_path(ws.home).unlink(missing_ok=True)
    made = _memories_made(monkeypatch)
    result = invoke("list", *args)
    assert result.exit_code == 0, result.stderr
    assert made == []
    assert result.stdout == _render.table(_render.memory_rows(expected),
                                          _render.LIST_HEADERS, columns) + "\n"
    logged = [json.loads(line) for line in
              usage.log_path(ws.home).read_text(encoding="utf-8").splitlines()]
    assert [(e["op"], e["ids"]) for e in logged] == [("list", [i.id for i in expected])]


def test_an_empty_whole_table_says_why(repo: Path, memex_home: Path) -> None:
    from tests.helpers import invoke

    assert "no memories yet" in invoke("list").stderr
    _varied(repo, memex_home)
    result = invoke("list", "--scope", "org")
    assert result.stdout == "" and "no memories match (--include all" in result.stderr


def _one_pass_table(rows: list[list[str]], headers: tuple[str, ...], columns: int | None
                    ) -> str:
    """_render.table as it was before the two-pass Table (every row held, each cut
    cell measured): the reference the streamed layout must equal."""
    from memex.adapters.cli._render import clip, width

    cells = [list(row) for row in rows]
    widths = [max([width(h) + 2] + [width(r[i]) for r in cells])
              for i, h in enumerate(headers)]
    if columns and cells:
        room = columns - sum(widths[:-1]) - 2 * (len(widths) - 1)
        if room < widths[-1]:
            room = max(room, width(headers[-1]) + 2, 10)
            for row in cells:
                row[-1] = clip(row[-1], room)
            widths[-1] = max([width(headers[-1]) + 2] + [width(r[-1]) for r in cells])

    def line(values: list[str]) -> str:
        return "  ".join(v + " " * (w - width(v)) for v, w in zip(values, widths,
                                                                   strict=True)).rstrip()

    return "\n".join([line(list(headers)), "  ".join("-" * w for w in widths),
                      *(line(row) for row in cells)])


_cell = st.text(alphabet=st.sampled_from("ab xyz-\u00e9\u0301\u96ea\u90e8\uff21\u2026"),
                max_size=40)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_cell, _cell), max_size=6),
       st.none() | st.integers(min_value=0, max_value=60))
def test_the_two_pass_table_lays_out_what_the_one_pass_table_did(
        rows: list[tuple[str, str]], columns: int | None) -> None:
    """The last column's width once cut is worked out from what `measure` kept (no
    cell held): with wide characters, combining marks and ASCII, every terminal
    width, the text is the one-pass layout's."""
    from memex.adapters.cli import _render

    cells = [list(row) for row in rows]
    assert _render.table(cells, ("ID", "TITLE"), columns) == _one_pass_table(
        cells, ("ID", "TITLE"), columns)


@pytest.mark.parametrize("text", ["", "one", "one\n", "a\nb", "x" * 70000 + "\n"])
def test_pieces_page_as_their_text_does(capsys: pytest.CaptureFixture[str],
                                        text: str) -> None:
    pieces = [text[i:i + 997] for i in range(0, len(text), 997)] + [""]
    _common.page(text)
    whole = capsys.readouterr().out
    _common.page_pieces(pieces)
    assert capsys.readouterr().out == whole == (text if text.endswith("\n") else text + "\n")


@pytest.mark.parametrize("pager,expected", [
    ("cat > paged.txt", None), ("head -c 10 > paged.txt", 10)])
def test_a_listing_streams_into_the_pager(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pager: str,
        expected: int | None) -> None:
    """On a terminal the pieces go to the pager's stdin as they come; a pager that
    quits early (the reader pressed q) ends the listing quietly."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_PAGER", pager)
    monkeypatch.setattr(_common, "stdout_is_tty", lambda: True)
    lines = [f"line {n} of a long listing\n" for n in range(20000)]
    _common.page_pieces(iter(lines))
    paged = (tmp_path / "paged.txt").read_text(encoding="utf-8")
    assert paged == ("".join(lines) if expected is None else "".join(lines)[:expected])


def test_the_whole_table_shows_a_title_sqlite_json_would_cut(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's json_extract ends a text at an escaped NUL ("nul\\u0000byte" gave
    "nul"): a title holding one is read from its doc, and the table shows what the
    Memory path shows (the NUL escaped)."""
    from memex.adapters.cli import _render
    from tests.helpers import invoke

    put(shared(repo), "project", "a body", title="nul\x00byte title")
    put(shared(repo), "project", "another body", title="\x00")
    put(shared(repo), "project", "plain body", title="plain")
    expected = reads.load_view(homes.workspace()).items
    made = _memories_made(monkeypatch)
    result = invoke("list")
    assert result.exit_code == 0, result.stderr
    assert made == [] and "nul\\x00byte title" in result.stdout
    assert result.stdout == _render.table(_render.memory_rows(expected),
                                          _render.LIST_HEADERS) + "\n"


def test_both_passes_of_the_whole_table_read_one_snapshot(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's two passes (widths, then lines) read one snapshot of the index: a
    memory another process writes and indexes between them, or while the second pass
    is read (the pager takes it a page at a time), is in neither, so the table printed
    is the one measured (review35A D2: its wider row broke the columns)."""
    from memex.adapters.cli import _render
    from tests.helpers import invoke, memfiles

    monkeypatch.setattr(reads, "PAGE", 2)  # both passes cross pages (the temp table)
    shared_dir = repo / ".memex"
    for n in range(5):
        memfiles.put(shared_dir, f"short {n}")
    build.open_index(homes.workspace())
    build.forget_connections()
    monkeypatch.setattr(_render, "_terminal_columns", lambda: None)
    before = invoke("list")
    assert before.exit_code == 0, before.stderr
    real = reads.Briefs.pages
    writes = []

    def pages(self: reads.Briefs, log: bool = False) -> Iterator[list[tuple[str, ...]]]:
        for n, page in enumerate(real(self, log)):
            if n == 1 or (n == 0 and not log):  # another process's captures, indexed
                writes.append(memfiles.put(shared_dir, f"a later memory {len(writes)}",
                                           review_state="approved"))
                build.open_index(homes.workspace())
            yield page

    monkeypatch.setattr(reads.Briefs, "pages", pages)
    during = invoke("list")
    assert during.exit_code == 0, during.stderr
    assert len(writes) == 3
    assert during.stdout == before.stdout
    monkeypatch.setattr(reads.Briefs, "pages", real)
    assert "[approved]" in invoke("list").stdout  # they were indexed, for the next list
