"""The index stores each memory's text once (a contentless FTS table beside the
memories rows), removes a changed memory's words exactly, and tells an unchanged tree
from the files table's stamps alone."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from memex.index import bodies, build, schema
from memex.search import engine as search
from memex.storage import homes
from tests.helpers import memfiles
from tests.helpers.spies import record_calls

OLD_WORDS = ["zebraold", "oldtag", "oldalias", "oldtitle", "旧词"]


def terms(ws: homes.Workspace) -> set[str]:
    with build.open_index(ws, refresh=False) as index:
        return {t for (t,) in index.conn.execute("SELECT term FROM fts_terms")}


def test_a_changed_or_deleted_memory_leaves_none_of_its_words(repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    changed = memfiles.put(folder, "zebraold grazes 旧词 here", title="Oldtitle first",
                           tags=["oldtag"], aliases=["oldalias"])
    deleted = memfiles.put(folder, "zebraold also lives here", title="Oldtitle too",
                           tags=["oldtag"])
    build.refresh(ws)
    held = terms(ws)
    assert {"zebraold", "oldtag", "oldalia", "oldtitl", "旧词"} <= held  # porter stems
    memfiles.put(folder, "quaggas graze 新词 now", id=changed, title="Newtitle",
                 tags=["newtag"], aliases=["newalias"], updated_at="2026-12-02T06:00:00Z")
    (folder / f"{deleted}.md").unlink()
    report = build.refresh(ws)
    assert (report.changed, report.deleted) == (1, 1)
    held = terms(ws)
    assert not {"zebraold", "oldtag", "oldalia", "oldtitl", "旧词"} & held, held
    assert {"quagga", "newtag", "newtitl", "新词"} <= held
    with build.open_index(ws, refresh=False) as index:
        index.conn.execute("INSERT INTO fts (fts) VALUES ('integrity-check')")
        size = index.conn.execute("SELECT count(*) FROM fts_docsize").fetchone()[0]
    assert size == 1


def test_the_text_is_stored_once(repo: Path) -> None:
    ws = homes.workspace()
    memfiles.put(repo / ".memex", "a body stored in the memories table only")
    build.refresh(ws)
    with build.open_index(ws, refresh=False) as index:
        tables = {name for (name,) in index.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "fts_content" not in tables
        body = index.conn.execute("SELECT zbody FROM memories").fetchone()[0]
    assert bodies.body_text(body) == "a body stored in the memories table only"


def test_a_long_body_is_stored_compressed_and_read_back_whole(repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    long_body = " ".join(f"wombat{i} 依赖管理 café" for i in range(200))
    mid = memfiles.put(folder, long_body, tags=["marsupial"])
    short = memfiles.put(folder, "a short body stays text")
    build.refresh(ws)
    with build.open_index(ws, refresh=False) as index:
        stored = dict(index.conn.execute("SELECT id, zbody FROM memories"))
    assert isinstance(stored[mid], bytes) and len(stored[mid]) < len(long_body) / 2
    assert stored[short] == "a short body stays text"
    assert bodies.body_text(stored[mid]) == long_body
    assert [h.memory.body for h in search.search(ws, search.SearchRequest("wombat7")).hits] \
        == [long_body]
    # a change removes the compressed body's words exactly (the delete re-reads it)
    memfiles.put(folder, "kangaroo only now", id=mid, updated_at="2026-12-02T06:00:00Z")
    build.refresh(ws)
    held = terms(ws)
    assert "wombat7" not in held and "kangaroo" in held
    with build.open_index(ws, refresh=False) as index:
        index.conn.execute("INSERT INTO fts (fts) VALUES ('integrity-check')")


def test_an_index_made_with_another_text_rule_is_rebuilt(repo: Path) -> None:
    ws = homes.workspace()
    mid = memfiles.put(repo / ".memex", "kiwi fruit")
    build.refresh(ws)
    conn = sqlite3.connect(build.db_path(ws))
    conn.execute("UPDATE meta SET value = 'another rule' WHERE key = 'text_rule'")
    conn.commit()
    conn.close()
    build.forget_connections()
    report = build.refresh(ws)
    assert report.rebuilt and report.new == 1
    with build.open_index(ws, refresh=False) as index:
        assert schema.text_rule(index.conn) == build.text_rule()
        found = index.conn.execute("SELECT m.id FROM fts JOIN memories m ON m.rowid = "
                                   "fts.rowid WHERE fts MATCH 'kiwi'").fetchall()
    assert found == [(mid,)]


def test_an_unchanged_tree_is_told_from_the_stamps(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    first = memfiles.put(folder, "alpha one")
    second = memfiles.put(folder, "alpha two")
    old = time.time_ns() - 3600 * 10**9  # outside the racy-clean window
    for mid in (first, second):
        os.utime(folder / f"{mid}.md", ns=(old, old))
    build.refresh(ws)
    path = folder / f"{first}.md"
    path.write_text(path.read_text().replace("alpha one", "alpha uno"))
    # the same size, an older mtime than the index's record: changed all the same
    os.utime(path, ns=(old, old - 10**9))
    build.forget_connections()
    assert build.refresh(ws).changed == 1
    build.forget_connections()

    def no_decision(*args: object, **kwargs: object) -> object:
        raise AssertionError("an unchanged tree was looked at file by file")

    monkeypatch.setattr(build, "_decide", no_decision)
    assert build.refresh(ws).new == 0  # cold: the stamps are read from the files table
    assert build.refresh(ws).new == 0  # warm: the process's copy


def test_an_unchanged_tree_is_told_from_the_digest_of_its_walk(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files table is not read while the walk's digest is the one the index keeps;
    a file written within the racy-clean window is named in the record (hashed again by
    every refresh, nothing written while it stays racy), and a record missing is noted
    by the next refresh that finds the table unchanged."""
    ws = homes.workspace()
    folder = repo / ".memex"
    first = memfiles.put(folder, "alpha one")
    old = time.time_ns() - 3600 * 10**9
    os.utime(folder / f"{first}.md", ns=(old, old))
    fresh = memfiles.put(folder, "alpha two, just written")  # racy: recorded with size -1
    build.refresh(ws)
    reads = record_calls(monkeypatch, build, "indexed_stamps")
    with build.open_index(ws, refresh=False) as index:
        made = build.generation(index.conn)
        assert build.walk_record(index.conn) == (
            made, build.stamps_digest(build.disk_stamps(ws)), [str(folder / f"{fresh}.md")])
    build.forget_connections()
    hashed = record_calls(monkeypatch, build, "content_hash")
    assert build.refresh(ws).touched == 0  # hashed again, still racy: nothing written
    assert len(hashed) == 1 and reads == []
    with build.open_index(ws, refresh=False) as index:
        assert build.generation(index.conn) == made
    os.utime(folder / f"{fresh}.md", ns=(old, old))
    assert build.refresh(ws).touched == 1  # hashed again: same bytes; now settled
    assert len(reads) == 1  # its stamp differs from the record's walk: the table compared
    with build.open_index(ws, refresh=False) as index:
        record = build.walk_record(index.conn)
        assert record == (build.generation(index.conn),
                          build.stamps_digest(build.disk_stamps(ws)), [])
        index.conn.execute("DELETE FROM meta WHERE key = 'walk'")
    build.forget_connections()
    assert build.refresh(ws).new == 0  # the table compared, and the digest noted
    assert len(reads) == 2
    for _ in range(2):
        build.forget_connections()
        assert build.refresh(ws).new == 0
    assert len(reads) == 2
    path = folder / f"{first}.md"
    path.write_text(path.read_text().replace("alpha one", "alpha uno"))
    os.utime(path, ns=(old, old - 10**9))  # same size, older mtime
    assert build.refresh(ws).changed == 1
    hits = search.search(ws, search.SearchRequest("uno")).hits
    assert [h.id for h in hits] == [first]


def test_the_file_gives_back_what_a_rebuild_frees(repo: Path) -> None:
    ws = homes.workspace()
    path = build.db_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path)  # an index of an older version: no auto-vacuum
    old.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    old.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    old.execute("CREATE TABLE filler (x BLOB)")
    old.executemany("INSERT INTO filler VALUES (zeroblob(20000))", [()] * 50)
    old.commit()
    old.close()
    for i in range(250):
        memfiles.put(repo / ".memex", f"memory number {i} about kiwi {'fruit ' * (i % 40)}")
    report = build.refresh(ws, full=True)
    assert report.rebuilt and report.new == 250
    build.refresh(ws, full=True)
    with build.open_index(ws, refresh=False) as index:
        conn = index.conn
        assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
        assert conn.execute("PRAGMA page_size").fetchone()[0] == build.PAGE_SIZE
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    assert free <= build.FREE_SHARE * pages, (free, pages)


def test_an_old_index_another_process_holds_is_rebuilt_on_its_pages(repo: Path) -> None:
    """The page size changes only outside WAL mode: with the old file open elsewhere
    it is rebuilt on its old pages, and reads and writes go on."""
    ws = homes.workspace()
    path = build.db_path(ws)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA page_size = 4096")
    old.execute("PRAGMA journal_mode = WAL")
    old.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    old.execute("INSERT INTO meta VALUES ('schema_version', '4')")
    try:
        old.execute("SELECT * FROM meta").fetchall()
        mid = memfiles.put(repo / ".memex", "kiwi fruit on old pages")
        assert build.refresh(ws).rebuilt
        hits = search.search(ws, search.SearchRequest("kiwi")).hits
        assert [h.id for h in hits] == [mid]
        with build.open_index(ws, refresh=False) as index:
            assert index.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        old.close()


def test_a_full_rebuild_gives_back_every_free_page(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "FREE_SHARE", 0.0)
    ws = homes.workspace()
    ids = [memfiles.put(repo / ".memex", f"memory {i} about kiwi {'fruit salad ' * 200}")
           for i in range(60)]
    build.refresh(ws)
    for mid in ids[5:]:
        (repo / ".memex" / f"{mid}.md").unlink()
    build.refresh(ws, full=True)  # the rows of 55 memories emptied: their pages free
    with build.open_index(ws, refresh=False) as index:
        assert index.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0


def test_search_looks_past_best_matches_the_filters_drop(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The candidates come from the best-ranked matches first; when the filters drop
    too many of those, every match is looked at (nothing eligible is lost)."""
    for name, value in (("NARROW_MIN", 4), ("NARROW_FACTOR", 1), ("MIN_CANDIDATES", 1),
                        ("FETCH_MARGIN", 0), ("COVERAGE_DEPTH", 1)):
        monkeypatch.setattr(search, name, value)  # 2 rows wanted, the 4 best looked at
    folder = repo / ".memex"
    for i in range(30):
        memfiles.put(folder, f"kiwi kiwi kiwi {i}", status="archived",
                     retired_at="2026-12-01T06:00:00Z")
    wanted = {memfiles.put(folder, f"Fruit {i}\nkiwi once among many other words here "
                                   + "apple banana cherry date elderberry fig grape " * 9)
              for i in range(2)}
    result = search.search(homes.workspace(), search.SearchRequest(query="kiwi", limit=2))
    assert {h.id for h in result.hits} == wanted


def test_the_irregular_forms_are_stemmed_once_per_index(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stemming the irregular-forms table is kept in the index's meta: a new process
    (an empty process cache) reads it instead of stemming the table again, and still
    finds "taught" for "teaches"; a table kept under another signature is made again."""
    ws = homes.workspace()
    mid = memfiles.put(repo / ".memex", "she taught the interns to rebase")
    monkeypatch.setattr(search, "_BY_STEM", {})
    assert [h.id for h in search.search(ws, search.SearchRequest("teaches")).hits] == [mid]
    asked = record_calls(monkeypatch, search, "stems")
    monkeypatch.setattr(search, "_BY_STEM", {})
    assert [h.id for h in search.search(ws, search.SearchRequest("teaches")).hits] == [mid]
    assert max(len(call.args[1]) for call in asked) < 10, asked  # the query's words only
    with build.open_index(ws, refresh=False) as index:
        index.conn.execute("UPDATE meta SET value = json_set(value, '$.sign', 'other') "
                           "WHERE key = 'irregular_stems'")
    monkeypatch.setattr(search, "_BY_STEM", {})
    asked.clear()
    assert [h.id for h in search.search(ws, search.SearchRequest("teaches")).hits] == [mid]
    assert max(len(call.args[1]) for call in asked) > 100  # the table stemmed again
