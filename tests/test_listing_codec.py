"""The listed column (index.listing) is deflated by bodies.deflater: ISA-L's level 1
where it imports (a full build spent ~30 us a row in zlib's level 9), else zlib's as
before. Either way a listing reads the same element bytes, and the rest of the index is
unchanged."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.index import bodies, build, listing
from memex.storage import homes
from tests.test_build_ahead import _dump, _store

isal_zlib = pytest.importorskip("isal.isal_zlib")


def _inflate(data: bytes) -> bytes:
    return zlib.decompressobj(zdict=listing.DICTIONARY).decompress(data)


def _zlib_best(text: bytes) -> bytes:
    """The column as listing wrote it before bodies.deflater (and without ISA-L)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 12, 4, zdict=listing.DICTIONARY)
    return deflate.compress(text) + deflate.flush()


def _elements(ws: homes.Workspace) -> list[bytes | None]:
    conn = sqlite3.connect(str(build.db_path(ws)))
    try:
        return [listing.element(row) for row in conn.execute(
            f"SELECT {listing.COLUMNS} FROM memories ORDER BY rowid")]
    finally:
        conn.close()


def test_a_build_deflates_the_listed_column_with_isal(repo: Path, memex_home: Path) -> None:
    ws = _store(repo, memex_home)
    build.refresh(ws, full=True)
    conn = sqlite3.connect(str(build.db_path(ws)))
    try:
        rows = conn.execute("SELECT doc, zbody, listed FROM memories "
                            "WHERE listed IS NOT NULL").fetchall()
    finally:
        conn.close()
    assert len(rows) > 60
    for doc, zbody, listed in rows:
        text = listing.plain(doc, bodies.body_text(zbody))
        assert text is not None and _inflate(listed) == text
        deflate = isal_zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS, 8,
                                        zdict=listing.DICTIONARY)
        assert listed == deflate.compress(text) + deflate.flush()


def test_listings_and_every_other_row_are_what_zlib_gave(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build with zlib's column (the code before, and a machine without ISA-L) and one
    with ISA-L's: every listed element the same bytes, every table and posting the
    same but the listed column's deflated bytes."""
    ws = _store(repo, memex_home)
    with monkeypatch.context() as before:
        before.setattr(listing, "_DEFLATE", _zlib_best)
        build.refresh(ws, full=True)
        old, old_elements = _dump(ws), _elements(ws)
    build.refresh(ws, full=True)
    new, new_elements = _dump(ws), _elements(ws)
    assert new_elements == old_elements and any(old_elements)
    conn = sqlite3.connect(str(build.db_path(ws)))
    try:  # the listed column's place in _dump's rows (after the rowid)
        listed = 1 + [c[1] for c in conn.execute("PRAGMA table_info(memories)")].index(
            "listed")
    finally:
        conn.close()

    def without_listed(rows: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
        return [row[:listed] + row[listed + 1:] for row in rows]

    assert without_listed(new.pop("memories")) == without_listed(old.pop("memories"))
    assert new == old


def test_without_isal_the_column_is_zlibs_best(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bodies, "_ZLIB", zlib)
    deflate = bodies.deflater(listing.DICTIONARY)
    text = listing.plain('{"title": "t", "id": "x"}', "a body")
    assert text is not None
    assert deflate(text) == _zlib_best(text)
    assert deflate(text) == _zlib_best(text)  # the compressor is copied, not used up


@settings(max_examples=200, deadline=None)
@given(text=st.binary(max_size=6000) | st.text(max_size=3000).map(str.encode))
def test_either_codec_inflates_to_the_text(text: bytes) -> None:
    fast = bodies.deflater(listing.DICTIONARY)
    assert _inflate(fast(text)) == text
    assert _inflate(_zlib_best(text)) == text
