"""build.derive reads the few rows its partial indexes hold (schema 7), not every row of
memories: its results must equal the whole-table statements it replaces (copied below
as they were), on a store with chains, duplicate ids across homes, retirements and the
outbox, with stale derived values on rows outside any chain."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.index import build, views
from memex.storage import homes
from tests.test_context import personal, put, shared
from tests.test_index_lookups import _varied


def _old_derive(conn: sqlite3.Connection, touched_ids: set[str]) -> None:
    """derive as it was before schema 7: its whole-table statements, copied."""
    for mid in sorted(touched_ids):
        conn.execute(
            "UPDATE memories SET shadowed = EXISTS (SELECT 1 FROM memories o "
            "WHERE o.id = memories.id AND (o.home_order < memories.home_order OR "
            "(o.home_order = memories.home_order AND o.path < memories.path))) "
            "WHERE id = ?", (mid,))
    conn.execute("UPDATE memories NOT INDEXED SET eff_status = NULL, eff_retired_at = NULL, "
                 "eff_superseded_by = NULL WHERE eff_status IS NOT NULL "
                 "OR eff_retired_at IS NOT NULL OR eff_superseded_by IS NOT NULL")
    rows = conn.execute(
        f"SELECT {build._CHAIN_COLUMNS} FROM memories NOT INDEXED WHERE shadowed = 0 AND ("
        "supersedes IS NOT NULL OR superseded_by IS NOT NULL "
        "OR id IN (SELECT supersedes FROM memories NOT INDEXED WHERE supersedes IS NOT NULL) "
        "OR id IN (SELECT superseded_by FROM memories NOT INDEXED "
        "WHERE superseded_by IS NOT NULL))").fetchall()
    build.write_completed_chains(conn, rows)  # unchanged by schema 7: shared
    conn.execute(
        "INSERT INTO chain_warnings (id, message) SELECT s.id, s.id || ' exists in more "
        "than one place; showing ' || (SELECT w.path FROM memories w NOT INDEXED "
        "WHERE w.id = s.id AND w.shadowed = 0) FROM memories s NOT INDEXED "
        "WHERE s.shadowed = 1")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) "
                 "SELECT 'memories', count(*) FROM memories NOT INDEXED")


def _contents(conn: sqlite3.Connection) -> list[object]:
    return [conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall(),
            conn.execute("SELECT rowid, * FROM chain_warnings ORDER BY rowid").fetchall(),
            conn.execute("SELECT * FROM meta ORDER BY key").fetchall()]


def _copy(conn: sqlite3.Connection) -> sqlite3.Connection:
    other = sqlite3.connect(":memory:", isolation_level=None)
    image = bytearray(conn.serialize())
    image[18:20] = b"\x01\x01"  # a rollback journal: a copy in memory has no WAL
    other.deserialize(bytes(image))
    return other


def _stale(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Derived values a refresh must clear or put right: eff_* on rows outside any chain
    (the last rows of the table, so a statement cut short misses them) and a wrong
    shadowed mark on a duplicate id."""
    conn.execute("UPDATE memories SET eff_status = 'archived' WHERE rowid = "
                 "(SELECT max(rowid) FROM memories WHERE supersedes IS NULL "
                 "AND superseded_by IS NULL)")
    conn.execute("UPDATE memories SET eff_retired_at = '2026-01-01T00:00:00Z', "
                 "eff_superseded_by = ? WHERE rowid = (SELECT min(rowid) FROM memories "
                 "WHERE supersedes IS NULL AND superseded_by IS NULL)", (ids[0],))
    conn.execute("UPDATE memories SET shadowed = 1 - shadowed WHERE id = ?", (ids[1],))


def _derive_both(conn: sqlite3.Connection, touched: set[str]) -> None:
    old, new = _copy(conn), _copy(conn)
    _old_derive(old, touched)
    build.derive(new, touched)
    assert _contents(new) == _contents(old)


def _store(repo: Path, memex_home: Path) -> list[str]:
    """_varied's store (chains, a duplicate id in the outbox, an archived memory) plus
    a memory naming its successor only by superseded_by, and an id in two homes."""
    ids = [m.id for m in _varied(repo, memex_home)]
    newer = put(shared(repo), "project", "the cache is redis 7", "2026-10-20T00:00:00Z")
    older = put(shared(repo), "project", "the cache is redis 6", "2026-10-19T00:00:00Z",
                superseded_by=newer.id, status="superseded",
                retired_at="2026-10-20T00:00:00Z")
    twin = put(shared(repo), "project", "a fact in two homes", "2026-10-21T00:00:00Z")
    (personal(memex_home) / f"{twin.id}.md").write_text(frontmatter.emit(
        twin.copy(scope="personal", repo_id=None, review_state=None)), encoding="utf-8")
    for i in range(30):  # rows after the chains, so the table is not all chains
        put(shared(repo), "project", f"filler fact {i}", f"2026-10-22T00:{i:02d}:00Z")
    return [*ids, newer.id, older.id, twin.id]


def test_derive_equals_the_whole_table_statements(repo: Path, memex_home: Path) -> None:
    _derive_equals_the_whole_table_statements(repo, memex_home)


def test_derive_of_many_ids_equals_the_whole_table_statements(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More than _CHUNK touched ids (a full build's) are first narrowed to those held
    twice or marked shadowed (build._shadow_candidates): the same results."""
    monkeypatch.setattr(build, "_CHUNK", 2)
    _derive_equals_the_whole_table_statements(repo, memex_home)


def _derive_equals_the_whole_table_statements(repo: Path, memex_home: Path) -> None:
    ids = _store(repo, memex_home)
    ws = homes.workspace()
    views.opened(ws)  # refresh: derive ran on every id
    with build.open_index(ws, refresh=False) as index:
        conn = index.conn
        # the store holds what the comparison needs
        assert conn.execute("SELECT count(*) FROM memories WHERE shadowed = 1"
                            ).fetchone()[0] == 2
        assert conn.execute("SELECT count(*) FROM memories WHERE eff_status IS NOT NULL"
                            ).fetchone()[0] >= 2
        assert conn.execute("SELECT count(*) FROM chain_warnings").fetchone()[0] >= 2
        # what the refresh left equals the old statements run again on it
        old = _copy(conn)
        _old_derive(old, set(ids))
        assert _contents(conn) == _contents(old)
        for touched in (set(ids), {ids[2]}, {ids[-1]}, set()):
            _derive_both(conn, touched)
            broken = _copy(conn)
            _stale(broken, ids)
            _derive_both(broken, touched | {ids[1]})


def test_derive_reads_no_whole_table(repo: Path, memex_home: Path) -> None:
    """No statement derive runs scans the memories table (a row holds its body):
    each is a search of an index, or the count's scan of the smallest index."""
    ids = _store(repo, memex_home)
    ws = homes.workspace()
    views.opened(ws)
    with build.open_index(ws, refresh=False) as index:
        conn = _copy(index.conn)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    build.derive(conn, set(ids))
    conn.set_trace_callback(None)
    plans = [row[3] for sql in statements if not sql.startswith(("BEGIN", "COMMIT"))
             for row in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    scans = sorted(p for p in plans if p.startswith("SCAN"))
    assert scans == ["SCAN memories USING COVERING INDEX memories_id",  # count(*)
                     "SCAN memories USING INDEX memories_derived"], scans
