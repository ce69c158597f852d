"""A large refresh (a full build) runs with a larger SQLite page cache and gives it back
after; a small one keeps the connection's own. A build lets go of each file's bytes
once its rows are made. The index is the same either way (tests/test_build_ahead.py
compares every table and posting of a build)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memex.index import build
from memex.storage import homes
from tests.helpers import memfiles


def _cache_sizes_seen(ws: homes.Workspace, full: bool) -> list[int]:
    """PRAGMA cache_size of the index's connection at each progress report."""
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        with build.open_index(ws, refresh=False) as index:
            seen.append(index.conn.execute("PRAGMA cache_size").fetchone()[0])

    build.refresh(ws, full=full, progress=progress)
    return seen


def _cache_size(ws: homes.Workspace) -> int:
    with build.open_index(ws, refresh=False) as index:
        return int(index.conn.execute("PRAGMA cache_size").fetchone()[0])


def test_a_large_refresh_has_the_larger_page_cache_and_gives_it_back(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "BUILD_CACHE_MIN_FILES", 5)
    folder = repo / ".memex"
    for i in range(6):
        memfiles.put(folder, f"note {i} about the cache")
    ws = homes.workspace()
    build.refresh(ws)
    own = _cache_size(ws)
    assert own != -build.BUILD_CACHE_KIB
    assert set(_cache_sizes_seen(ws, full=True)) == {-build.BUILD_CACHE_KIB}
    assert _cache_size(ws) == own
    # a refresh of one new file keeps the connection's own size throughout
    memfiles.put(folder, "one more note")
    assert set(_cache_sizes_seen(ws, full=False)) == {own}
    assert _cache_size(ws) == own


def test_the_cache_size_is_given_back_when_the_build_fails(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "BUILD_CACHE_MIN_FILES", 1)
    memfiles.put(repo / ".memex", "a note")
    ws = homes.workspace()
    build.refresh(ws)
    own = _cache_size(ws)

    def fails(*args: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(build, "derive", fails)
    with build.open_index(ws, refresh=False) as index, \
            pytest.raises(sqlite3.OperationalError):
        build._refresh(index, ws, True, None)
    assert _cache_size(ws) == own


def test_a_build_lets_go_of_each_files_bytes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo / ".memex"
    for i in range(4):
        memfiles.put(folder, f"note {i}")
    ws = homes.workspace()
    left: list[dict[str, bytes]] = []
    apply = build._apply

    def watched(conn: sqlite3.Connection, ws: homes.Workspace, plan: object,
                disk: object, kinds: object, contents: dict[str, bytes],
                *rest: object) -> object:
        assert len(contents) == 4  # read for their hashes
        out = apply(conn, ws, plan, disk, kinds, contents, *rest)  # type: ignore[arg-type]
        left.append(dict(contents))
        return out

    monkeypatch.setattr(build, "_apply", watched)
    build.refresh(ws, full=True)
    assert left == [{}]
