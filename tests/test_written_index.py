"""A write indexes its own file from its own walk (build.note_written), and a refresh
whose walk has the digest the index records re-reads only the racy files it names:
the next command after a write finds nothing to do, and still sees every change
another program made (before, during or after the write) exactly as a full compare."""

from __future__ import annotations

import os
import time
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from memex.index import build, schema
from memex.search import engine as search
from memex.storage import homes, store
from memex.workflows import writes
from tests.helpers import git_proc, memfiles
from tests.helpers.spies import Call, record_calls

HOUR_AGO = time.time() - 3600


def settle(*folders: Path) -> None:
    """Every memory file an hour old: none is racy."""
    for folder in folders:
        for path in folder.glob("*.md"):
            os.utime(path, (HOUR_AGO, HOUR_AGO))


def matches_disk(ws: homes.Workspace) -> None:
    """The oracle: the files table holds every file on disk with its content's hash,
    and nothing else; the memories table one row per file."""
    disk = {path: build.content_hash(store.read_bytes(path)) for path in build.disk_stamps(ws)}
    conn = build.open_index(ws, refresh=False).conn
    assert dict(conn.execute("SELECT path, hash FROM files")) == disk
    assert {p for (p,) in conn.execute("SELECT path FROM memories")} == set(disk)


def found(ws: homes.Workspace, word: str) -> set[str]:
    return {h.id for h in search.search(ws, search.SearchRequest(word, limit=50)).hits}


@pytest.fixture
def stocked(repo: Path) -> dict[str, str]:
    shared, outbox = repo / ".memex", memfiles.outbox()
    ids = {f"shared{i}": memfiles.put(shared, f"shared memory {i} about bravo deploys")
           for i in range(6)}
    ids |= {f"draft{i}": memfiles.put(outbox, f"draft {i} about bravo caches") for i in range(3)}
    memfiles.commit_all(repo, "memories")
    settle(shared, outbox)
    build.open_index(homes.workspace())
    build.forget_connections()
    return ids


def no_table_read(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    return record_calls(monkeypatch, build, "indexed_stamps")


@pytest.mark.parametrize("write", ["capture", "update", "capture into the shared folder"])
def test_the_next_command_after_a_write_finds_nothing_to_do(
        repo: Path, stocked: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        write: str) -> None:
    ws = homes.workspace()
    reads = no_table_read(monkeypatch)
    if write == "update":
        result = writes.update(ws, stocked["shared2"], writes.UpdateRequest(
            body="shared memory 2 about zulu deploys"))
    else:
        scope = "personal" if write.endswith("folder") else "project"
        if scope == "personal":  # a folder of its own with files in it: listed again
            memfiles.put(ws.personal_dir, "a personal memory about bravo", scope="personal")
            settle(ws.personal_dir)
            build.open_index(ws)
            build.forget_connections()
        result = writes.capture(ws, writes.CaptureRequest(text="a new note on zulu",
                                                          scope=scope))
    conn = build.open_index(ws, refresh=False).conn
    made = build.generation(conn)
    record = build.walk_record(conn)
    assert record == (made, build.stamps_digest(build.disk_stamps(ws)), [str(result.path)])
    assert schema.meta(conn, "stamps") is None  # an earlier version's digest: dropped
    build.forget_connections()
    reads.clear()
    assert found(ws, "zulu") == {result.memory.id}  # a new process, as the next command
    assert reads == []
    assert build.generation(build.open_index(ws, refresh=False).conn) == made  # no write
    matches_disk(ws)


def test_writes_make_no_stamp_per_file(
        repo: Path, stocked: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture and an update, each in a new process, one after the other (each finds
    the racy file the one before recorded): their refreshes and their own file's
    indexing keep the walk lean (names and packed numbers: no stamp, path or dict entry
    per file, ~0.1-0.2 s of CPU at 100,000 memories), and the next command still finds
    nothing to do. On main the writer's walk was disk_stamps (a lean walk did not sweep
    temps) and note_written made every stamp and hashed them again."""
    ws = homes.workspace()
    with monkeypatch.context() as patch:
        for name in ("disk_stamps", "_walk_folder", "stamps_digest"):
            patch.setattr(build, name, lambda *a, _n=name, **k: pytest.fail(f"{_n} called"))
        patch.setattr(build._LeanWalk, "stamps",
                      lambda self: pytest.fail("every stamp made"))
        first = writes.capture(ws, writes.CaptureRequest(text="a new note on zulu"))
        build.forget_connections()
        second = writes.capture(ws, writes.CaptureRequest(text="another note on yankee"))
        build.forget_connections()
        updated = writes.update(ws, stocked["shared2"], writes.UpdateRequest(
            body="shared memory 2 about xray deploys"))
        build.forget_connections()
    assert found(ws, "zulu") == {first.memory.id}
    assert found(ws, "yankee") == {second.memory.id}
    assert found(ws, "xray") == {updated.memory.id}
    conn = build.open_index(ws, refresh=False).conn
    record = build.walk_record(conn)
    assert record is not None
    assert record[:2] == (build.generation(conn), build.stamps_digest(build.disk_stamps(ws)))
    # the written files still within the racy window, and no other
    assert str(updated.path) in record[2]
    assert set(record[2]) <= {str(first.path), str(second.path), str(updated.path)}
    matches_disk(ws)


def _edit_same_size(path: Path, old: str, new: str) -> None:
    assert len(old) == len(new)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(old, new), encoding="utf-8")


# What another program does while the write runs: after the write's own walk, before
# its file is indexed (the window note_written trusts the walk for).
MEANWHILE: dict[str, Callable[[Path, dict[str, str]], object]] = {
    "edit in place, same size": lambda repo, ids: _edit_same_size(
        repo / ".memex" / f"{ids['shared1']}.md", "bravo", "oscar"),
    "edit in the write's folder": lambda repo, ids: _edit_same_size(
        memfiles.outbox() / f"{ids['draft1']}.md", "bravo", "oscar"),
    "file added by hand": lambda repo, ids: memfiles.put(
        repo / ".memex", "a hand-written memory about oscar"),
    "file added in the write's folder": lambda repo, ids: memfiles.put(
        memfiles.outbox(), "a hand-written draft about oscar"),
    "file deleted by hand": lambda repo, ids: (
        repo / ".memex" / f"{ids['shared3']}.md").unlink(),
    "file deleted in the write's folder": lambda repo, ids: (
        memfiles.outbox() / f"{ids['draft2']}.md").unlink(),
    "a rebase's checkout": lambda repo, ids: _checkout_same_size(repo, ids["shared4"]),
    "another process refreshed": lambda repo, ids: _other_refresh(repo, ids),
}


def _checkout_same_size(repo: Path, mid: str) -> None:
    """What a rebase does to a tracked memory: git writes another version of it (here
    of the same size) into the working tree."""
    path = repo / ".memex" / f"{mid}.md"
    original = path.read_bytes()
    _edit_same_size(path, "bravo", "oscar")
    memfiles.commit_all(repo, "edited")
    path.write_bytes(original)
    memfiles.commit_all(repo, "back")
    git_proc("checkout", "-q", "HEAD~1", "--", f".memex/{mid}.md", cwd=repo)


def _other_refresh(repo: Path, ids: dict[str, str]) -> None:
    """Another process edits a file and refreshes the index (its own connection)."""
    _edit_same_size(repo / ".memex" / f"{ids['shared5']}.md", "bravo", "oscar")
    kept = build._OPEN.copy()
    build._OPEN.clear()
    try:
        build.refresh(homes.workspace())
        build.forget(homes.workspace())
    finally:
        build._OPEN.update(kept)


@pytest.mark.parametrize("meanwhile", list(MEANWHILE))
@pytest.mark.parametrize("write", ["capture", "update"])
def test_a_change_made_while_a_write_runs_is_seen_by_the_next_command(
        repo: Path, stocked: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        meanwhile: str, write: str) -> None:
    ws = homes.workspace()
    real_save = store.save

    def save(loaded: store.Loaded) -> None:
        MEANWHILE[meanwhile](repo, stocked)
        real_save(loaded)

    monkeypatch.setattr(store, "save", save)
    if write == "update":
        writes.update(ws, stocked["shared0"], writes.UpdateRequest(
            body="shared memory 0 about zulu deploys"))
    else:
        writes.capture(ws, writes.CaptureRequest(text="a new note on zulu"))
    monkeypatch.setattr(store, "save", real_save)
    build.forget_connections()
    hits = found(ws, "oscar")  # the next command
    matches_disk(ws)
    if "deleted" not in meanwhile:
        assert hits
    assert found(ws, "zulu")


@pytest.mark.parametrize("how", ["refresh", "capture"])
def test_a_racy_file_changed_in_the_same_instant_is_read_again(
        repo: Path, stocked: dict[str, str], how: str) -> None:
    """A file written within the racy window is named in the walk record: a change of
    the same size and the same mtime (the same clock tick) is still seen."""
    ws = homes.workspace()
    if how == "capture":
        path = writes.capture(ws, writes.CaptureRequest(text="a new note on zulu")).path
    else:
        path = memfiles.outbox() / f"{memfiles.put(memfiles.outbox(), 'a new note on zulu')}.md"
        build.open_index(ws)
    conn = build.open_index(ws, refresh=False).conn
    assert build.walk_record(conn)[2] == [str(path)]  # type: ignore[index]
    stamp = path.stat()
    _edit_same_size(path, "zulu", "yank")
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # the walk's stamp again
    build.forget_connections()
    assert found(ws, "yank") and not found(ws, "zulu")
    matches_disk(ws)


def test_temps_are_looked_for_where_writes_put_them(repo: Path) -> None:
    """A write lists a memory folder for a killed writer's temp files only where temps
    go: not a repo's folder whose temps go to <git dir>/memex-tmp."""
    ws = homes.workspace()
    shared = repo / ".memex"
    shared.mkdir(exist_ok=True)
    assert store.temps_may_be_in(shared)  # memex-tmp not made yet: it may be there
    writes.capture(ws, writes.CaptureRequest(text="shared note", scope="project"))
    store.temp_dir(shared)  # what a write into the repo's folder does
    assert (repo / ".git" / store.TEMP_DIR).is_dir()
    assert not store.temps_may_be_in(shared)
    assert store.temps_may_be_in(memfiles.outbox())  # outside git: in the folder
    stale = memfiles.outbox() / f".x.md.4194305.abcd{store.TEMP_SUFFIX}"
    stale.write_text("left by a killed writer")
    writes.capture(ws, writes.CaptureRequest(text="another note"))
    assert not stale.exists()


def test_a_repos_memory_folder_is_listed_for_temps_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The repo's memory folder, when no write ever put a temp file in memex-tmp (its
    files came from git or an import), is listed by the first write's settle, not by
    every write (at 100,000 files ~0.15 s a write); a killed writer's temp left there
    later is still removed (by the writer's walk, the test below)."""
    ws = homes.workspace()
    shared = repo / ".memex"
    shared.mkdir(exist_ok=True)
    stale = shared / f".x.md.4194305.abcd{store.TEMP_SUFFIX}"
    stale.write_text("left by a killed writer")
    cleaned = record_calls(monkeypatch, store, "clean_stale_temps")
    writes.capture(ws, writes.CaptureRequest(text="a first draft"))
    assert not stale.exists()
    writes.capture(ws, writes.CaptureRequest(text="a second draft"))
    writes.update(ws, writes.capture(ws, writes.CaptureRequest(text="a third")).memory.id,
                  writes.UpdateRequest(add_tags=["x"]))
    listed = [call.args[0] for call in cleaned]
    assert listed.count(shared) == 1, listed
    assert not store.temps_may_be_in(shared)


def test_a_killed_writers_temp_in_a_memory_folder_is_still_removed(repo: Path) -> None:
    """A temp file a killed writer left in the repo's memory folder (written there
    before memex-tmp existed, or on another device then) is removed by the next write's
    walk, although the lock's settle no longer lists that folder (review of stop 24:
    it stayed for good)."""
    ws = homes.workspace()
    shared = repo / ".memex"
    shared.mkdir(exist_ok=True)
    writes.capture(ws, writes.CaptureRequest(text="shared note", scope="project"))
    store.temp_dir(shared)
    assert not store.temps_may_be_in(shared)
    stale = shared / f".x.md.4194305.abcd{store.TEMP_SUFFIX}"
    stale.write_text("left by a killed writer")
    live = shared / f".y.md.{os.getpid()}.abcd{store.TEMP_SUFFIX}"
    live.write_text("a live writer's")
    found(ws, "note")  # a read removes nothing: it holds no write lock
    assert stale.exists()
    writes.capture(ws, writes.CaptureRequest(text="another shared note", scope="project"))
    assert not stale.exists()
    assert live.exists()


@pytest.mark.parametrize("change", ["new in the outbox", "new in the personal folder",
                                    "new in the shared folder", "rewritten in place",
                                    "deleted", "two folders at once",
                                    "two in one folder, one deleted"])
@pytest.mark.parametrize("lean", [False, True], ids=["stamps", "lean"])
def test_a_walk_made_again_is_the_walk_of_the_disk(
        repo: Path, stocked: dict[str, str], change: str, lean: bool) -> None:
    """note_written's walk (the last one, the written paths stated again, a folder
    listed again for a new name) has the stamps, order and layout a new walk has; the
    lean walk's too (_rewalk_lean: no stamp per file), and its digest the new walk's."""
    ws = homes.workspace()
    memfiles.put(ws.personal_dir, "a personal memory about bravo", scope="personal")
    layout: list[tuple[str, str, int]] = []
    walk = build.Walk(build.disk_stamps(ws, {}, layout), layout, "g")
    lean_walk = build._lean_walk(ws)
    assert lean_walk is not None
    # digested first, as a refresh's walk is: the states after each folder's names are
    # kept, and those from the first folder changed on must be hashed again
    assert lean_walk.digest() == build.stamps_digest(build.disk_stamps(ws))
    shared, outbox = repo / ".memex", memfiles.outbox()
    paths: list[Path] = []
    new_in = {"new in the outbox": outbox, "new in the personal folder": ws.personal_dir,
              "new in the shared folder": shared, "two folders at once": outbox}
    if change in new_in:
        folder = new_in[change]
        scope = "personal" if folder == ws.personal_dir else "project"
        paths.append(folder / f"{memfiles.put(folder, 'a new one', scope=scope)}.md")
    if change in ("rewritten in place", "two folders at once"):
        path = shared / f"{stocked['shared1']}.md"
        _edit_same_size(path, "bravo", "oscar")
        paths.append(path)
    if change in ("deleted", "two in one folder, one deleted"):
        path = outbox / f"{stocked['draft1']}.md"
        path.unlink()
        paths.append(path)
    if change == "two in one folder, one deleted":
        path = outbox / f"{stocked['draft2']}.md"
        _edit_same_size(path, "bravo", "oscar")
        paths.append(path)
    layout_now: list[tuple[str, str, int]] = []
    now = build.disk_stamps(ws, {}, layout_now)
    if lean:
        again_lean = build._rewalk_lean(ws, lean_walk, [str(p) for p in paths])
        assert again_lean is not None
        assert list(again_lean[0].stamps().items()) == list(now.items())
        assert again_lean[0].layout() == layout_now
        assert again_lean[0].digest() == build.stamps_digest(now)
        assert {str(p) for p in paths} <= again_lean[1]
        return
    given = build._rewalk(ws, walk, [str(p) for p in paths])
    assert given is not None
    again, suspects = given
    assert list(again.stamps.items()) == list(now.items())
    assert again.layout == layout_now
    assert {str(p) for p in paths} <= suspects


def test_where_a_listing_gives_no_inode_the_walk_and_a_writes_stat_agree(
        repo: Path, stocked: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """On Windows a listing's DirEntry.stat() has st_ino 0 while os.lstat (note_written's
    _rewalk) has the real inode: the inode is then left out of every stamp (0), so a
    write's walk is the next walk and the written file is not read again for it.
    Simulated: the listing's inodes made 0 and build._LISTING_INODES False."""
    real = build._memory_entries

    def windows(*args, **kwargs):  # type: ignore[no-untyped-def]
        for name, st in real(*args, **kwargs):
            if st is not build._UNSTATED:
                st = types.SimpleNamespace(st_size=st.st_size, st_mtime_ns=st.st_mtime_ns,
                                           st_ctime_ns=st.st_ctime_ns, st_ino=0,
                                           st_mode=st.st_mode)
            yield name, st

    monkeypatch.setattr(build, "_memory_entries", windows)
    monkeypatch.setattr(build, "_LISTING_INODES", False, raising=False)
    ws = homes.workspace()
    layout: list[tuple[str, str, int]] = []
    walk = build.Walk(build.disk_stamps(ws, {}, layout), layout, "g")
    path = repo / ".memex" / f"{stocked['shared1']}.md"
    _edit_same_size(path, "bravo", "oscar")
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    given = build._rewalk(ws, walk, [str(path)])
    assert given is not None
    now = build.disk_stamps(ws)
    assert given[0].stamps == now
    lean = build._lean_walk(ws)
    assert lean is not None and lean.stamps() == now
