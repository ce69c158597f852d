"""The index: a cache of every visible home, refreshed cheaply, rebuilt when broken."""

from __future__ import annotations

import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from memex.index import build
from memex.search import engine as search
from memex.storage import homes
from tests.helpers import invoke, invoke_json, memfiles


def ids(query: str, *args: str) -> list[str]:
    return [h["id"] for h in invoke_json("search", query, *args)]


def test_index_holds_every_visible_home_and_no_other_project(repo: Path) -> None:
    drafted = memfiles.put(memfiles.outbox(), "kiwi in the outbox")
    shared = memfiles.put(repo / ".memex", "kiwi in the repo", review_state="proposed")
    mine = memfiles.put(memfiles.personal(), "kiwi of mine", scope="personal")
    ws = homes.workspace()
    other = ws.home / "outbox" / "git-origin-sha256-someoneelse"
    foreign = memfiles.put(other, "kiwi of another project")
    found = ids("kiwi")
    assert set(found) == {drafted, shared, mine}
    assert foreign not in found
    # positive control: the file is really there, readable, in this memex home
    assert "kiwi of another project" in (other / f"{foreign}.md").read_text()
    assert (build.db_path(ws)).is_file()
    assert build.db_path(ws).parent == ws.repo.git_dir / "memex"  # type: ignore[union-attr]


def test_refresh_is_incremental(repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    first = memfiles.put(folder, "alpha one", review_state="proposed")
    memfiles.put(folder, "alpha two", review_state="proposed")
    report = build.refresh(ws)
    assert (report.new, report.changed, report.deleted) == (2, 0, 0)
    assert build.refresh(ws).new == 0  # nothing changed: nothing read
    path = folder / f"{first}.md"
    path.write_text(path.read_text().replace("alpha one", "alpha uno changed"))
    report = build.refresh(ws)
    assert (report.new, report.changed, report.deleted) == (0, 1, 0)
    assert ids("uno") == [first]
    path.unlink()
    report = build.refresh(ws)
    assert report.deleted == 1
    assert ids("uno") == []


def test_move_between_homes_is_reindexed_at_its_new_path(repo: Path) -> None:
    source = memfiles.outbox()
    mid = memfiles.put(source, "mango moves", review_state="proposed")
    assert invoke_json("search", "mango")[0]["path"].startswith(str(source))
    (repo / ".memex").mkdir()
    (source / f"{mid}.md").rename(repo / ".memex" / f"{mid}.md")
    hits = invoke_json("search", "mango")
    assert [h["id"] for h in hits] == [mid]
    assert hits[0]["path"] == str(repo / ".memex" / f"{mid}.md")


def test_unreadable_files_are_reported_not_indexed(repo: Path) -> None:
    folder = repo / ".memex"
    good = memfiles.put(folder, "papaya is fine", review_state="proposed")
    bad = folder / "01JD8X3K5N6P7Q8R9S0T1V2W3X.md"
    bad.write_text("---\nid: [unclosed\n---\npapaya broken\n")
    result = invoke("search", "papaya", "--json")
    assert result.exit_code == 0
    assert "unreadable" in result.stderr and bad.name in result.stderr
    assert [h["id"] for h in __import__("json").loads(result.stdout)] == [good]
    assert bad.read_text() == "---\nid: [unclosed\n---\npapaya broken\n"  # untouched


def test_hand_edited_file_is_indexed_through_the_full_parser(repo: Path) -> None:
    mid = memfiles.put(repo / ".memex", "quince rule", review_state="proposed")
    path = repo / ".memex" / f"{mid}.md"
    text = path.read_text().replace("title:", "# a hand-written comment\ntitle:")
    path.write_text(text)
    assert ids("quince") == [mid]


def test_corrupt_index_is_rebuilt(repo: Path) -> None:
    mid = memfiles.put(repo / ".memex", "lychee", review_state="proposed")
    assert ids("lychee") == [mid]
    build.forget_connections()
    db = build.db_path(homes.workspace())
    db.write_bytes(b"this is not a database" * 100)
    result = invoke("search", "lychee", "--json")
    assert result.exit_code == 0
    assert "rebuilt" in result.stderr
    assert ids("lychee") == [mid]


def test_older_schema_index_is_rebuilt(repo: Path) -> None:
    mid = memfiles.put(repo / ".memex", "durian", review_state="proposed")
    assert ids("durian") == [mid]
    build.forget_connections()
    db = build.db_path(homes.workspace())
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    result = invoke("search", "durian", "--json")
    assert "another version" in result.stderr
    assert ids("durian") == [mid]


def test_locked_index_is_read_stale_with_a_warning(repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "LOCK_WAIT_SECONDS", 0.05)
    old = memfiles.put(repo / ".memex", "guava old", review_state="proposed")
    assert ids("guava") == [old]
    build.forget_connections()
    writer = sqlite3.connect(build.db_path(homes.workspace()), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        new = memfiles.put(repo / ".memex", "guava new", review_state="proposed")
        result = invoke("search", "guava", "--json")
        assert result.exit_code == 0
        assert "another git-memex process" in result.stderr
        assert [h["id"] for h in __import__("json").loads(result.stdout)] == [old]
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    # positive control: once the lock is gone the new memory is indexed
    assert set(ids("guava")) == {old, new}


def test_a_process_that_searched_waits_for_another_writer_as_a_new_one_does(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search counts its hits (record_access) without waiting for the write lock; it
    left its kept connection waiting for nothing after, so the next refresh in the
    same process (an MCP server's next search) gave up at once whenever another process
    was writing the index: results without the new memory and a warning (capture31
    saw 12 of 40 with a writer every 2 ms)."""
    monkeypatch.setattr(build, "LOCK_WAIT_SECONDS", 5.0)  # the writer below takes ~0.05 s
    ws = homes.workspace()
    old = memfiles.put(repo / ".memex", "guava old", review_state="proposed")
    assert [h.id for h in search.search(ws, search.SearchRequest("guava")).hits] == [old]
    kept = build.open_index(ws, refresh=False).conn
    assert kept.execute("PRAGMA busy_timeout").fetchone() == (5000,)
    writer = sqlite3.connect(build.db_path(ws), isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")
    done = threading.Timer(0.05, writer.execute, ("ROLLBACK",))
    try:
        new = memfiles.put(repo / ".memex", "guava new", review_state="proposed")
        done.start()
        result = search.search(ws, search.SearchRequest("guava"))
    finally:
        done.join()
        writer.close()
    assert not result.stale and result.warnings == []
    assert {h.id for h in result.hits} == {old, new}


def test_reads_never_touch_files_or_git_status(repo: Path) -> None:
    mid = memfiles.put(repo / ".memex", "fig tree", review_state="proposed")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "memories"], cwd=repo, check=True)
    path = repo / ".memex" / f"{mid}.md"
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    for _ in range(3):
        assert ids("fig") == [mid]
    invoke_json("list")
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=repo,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""
    # positive control: the reads were counted, in the index only
    with build.open_index(homes.workspace()) as index:
        count = index.conn.execute("SELECT count FROM access WHERE id = ?", (mid,)).fetchone()
    assert count == (3,)


def test_index_outside_git_lives_in_the_memex_home(nogit_dir: Path, memex_home: Path) -> None:
    mid = memfiles.put(memfiles.personal(), "olive", scope="personal")
    assert ids("olive") == [mid]
    assert build.db_path(homes.workspace()).is_relative_to(memex_home / "index")


def test_reindex_step(repo: Path) -> None:
    memfiles.put(repo / ".memex", "plum", review_state="proposed")
    report = invoke_json("reindex")
    assert report["new"] == 1 and report["memories"] == 1
    again = invoke("reindex")
    assert again.exit_code == 0 and "1 memories (0 new" in again.stderr
    full = invoke_json("reindex", "--full")
    assert full["new"] == 1
    quiet = invoke("reindex", "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == ""


def test_index_folder_unusable_falls_back_to_a_temporary_index(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mid = memfiles.put(repo / ".memex", "cherry", review_state="proposed")
    blocker = repo / "blocker"
    blocker.write_text("a file where a folder should be")
    monkeypatch.setattr(homes.Workspace, "index_dir", property(lambda self: blocker / "x"))
    result = search.search(homes.workspace(), search.SearchRequest("cherry"))
    assert [h.id for h in result.hits] == [mid]
    assert any("temporary index" in w for w in result.warnings)


def fts_segments(ws: homes.Workspace) -> int:
    with build.open_index(ws) as index:
        return int(index.conn.execute(
            "SELECT count(DISTINCT segid) FROM fts_idx").fetchone()[0])


def test_full_rebuild_leaves_one_fts_segment_and_no_dead_postings(repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    first = [memfiles.put(folder, f"quince number {i}", review_state="proposed")
             for i in range(5)]
    build.refresh(ws)  # wrote every memory: merged too
    assert fts_segments(ws) == 1
    for _ in range(2):
        build.refresh(ws, full=True)
        # DELETE FROM fts alone would leave the old postings and their delete markers
        assert fts_segments(ws) == 1
    assert set(ids("quince")) == set(first)
    # positive control: a small edit adds a segment (left to FTS5's automerge)
    memfiles.put(folder, "quince number 5", review_state="proposed")
    build.refresh(ws)
    assert fts_segments(ws) == 2


def test_a_full_rebuild_leaves_no_large_wal(repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    for i in range(300):
        memfiles.put(folder, f"plum number {i} " + "filler words " * 40,
                     review_state="proposed")
    build.refresh(ws, full=True)
    wal = ws.index_dir / "index.sqlite-wal"
    wal_size = wal.stat().st_size if wal.exists() else 0
    written = (ws.index_dir / "index.sqlite").stat().st_size + wal_size
    assert written > 200_000
    assert wal_size < written / 10  # folded into the file and cut back, not kept


def test_the_wal_truncate_neither_waits_for_nor_breaks_a_reader(repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    mids = [memfiles.put(folder, f"pear number {i}", review_state="proposed")
            for i in range(3)]
    build.refresh(ws)
    reader = sqlite3.connect(str(ws.index_dir / "index.sqlite"))
    reader.execute("BEGIN")
    assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] == 3
    build.refresh(ws, full=True)  # its checkpoint finds the reader's snapshot busy
    with build.open_index(ws) as index:
        wait = index.conn.execute("PRAGMA busy_timeout").fetchone()[0]
    assert wait == int(build.LOCK_WAIT_SECONDS * 1000)  # restored after the truncate
    assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] == 3
    reader.rollback()
    reader.close()
    assert set(ids("pear")) == set(mids)


def test_a_ctrl_c_in_a_write_if_free_puts_the_wait_back(tmp_path: Path) -> None:
    """_unless_busy sets the connection's busy_timeout to 0 for its block: a
    KeyboardInterrupt in the block (here from the rows' iterator) left a kept
    connection never waiting for another writer again; now the wait is put back, and
    no transaction is left open."""
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE t (v)")
    conn.execute(f"PRAGMA busy_timeout = {int(build.LOCK_WAIT_SECONDS * 1000)}")

    def rows():  # type: ignore[no-untyped-def]
        yield (1,)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build.write_many_if_free(conn, "INSERT INTO t (v) VALUES (?)", rows())  # type: ignore[arg-type]
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == int(
        build.LOCK_WAIT_SECONDS * 1000)
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    conn.close()
