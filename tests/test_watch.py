"""Kernel change notices (storage.watch) and the index refresh that trusts them: a
long-lived process skips its stat walk while nothing changed, and sees every change."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from memex.storage import store, watch

needs_inotify = pytest.mark.skipif(
    not sys.platform.startswith("linux") or watch.start([]) is None,
    reason="inotify (Linux, inotify_simple) is not available")


@needs_inotify
def test_a_watch_reports_each_change_once(tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    w = watch.start([folder], store.is_memory_name)
    assert w is not None
    try:
        assert w.quiet()
        note = folder / "01JAAAAAAAAAAAAAAAAAAAAAAA.md"
        note.write_text("one", encoding="utf-8")
        assert not w.quiet()
        assert w.quiet()  # drained
        note.write_text("two", encoding="utf-8")
        assert not w.quiet()
        (folder / ".note.memex-tmp").write_text("x", encoding="utf-8")
        (folder / "README.md").write_text("x", encoding="utf-8")
        assert w.quiet()  # names that are no memory file do not count
        note.rename(folder / "01JBBBBBBBBBBBBBBBBBBBBBBB.md")
        assert not w.quiet()
        (folder / "01JBBBBBBBBBBBBBBBBBBBBBBB.md").unlink()
        assert not w.quiet()
        assert w.quiet()
    finally:
        w.close()


@needs_inotify
def test_a_folder_removed_or_made_later_is_a_change(tmp_path: Path) -> None:
    folder = tmp_path / "later"
    w = watch.start([folder], store.is_memory_name)
    assert w is not None
    try:
        assert w.quiet()  # missing: nothing in it
        folder.mkdir()
        (folder / "01JAAAAAAAAAAAAAAAAAAAAAAA.md").write_text("x", encoding="utf-8")
        assert not w.quiet()  # appeared: walk once, it is watched from now on
        assert w.quiet()
        (folder / "01JAAAAAAAAAAAAAAAAAAAAAAA.md").write_text("y", encoding="utf-8")
        assert not w.quiet()
        (folder / "01JAAAAAAAAAAAAAAAAAAAAAAA.md").unlink()
        folder.rmdir()
        assert not w.quiet()
        assert w.quiet()
        folder.mkdir()
        assert not w.quiet()
    finally:
        w.close()


def test_without_inotify_simple_there_is_no_watch(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # import fails
    assert watch.start([tmp_path]) is None


def count_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per stat walk of every memory file a refresh makes: disk_stamps, or the
    lean walk (build._lean_walk) a refresh takes in its place where it can."""
    from memex.index import build

    walks: list[int] = []
    stamps, lean = build.disk_stamps, build._lean_walk
    monkeypatch.setattr(build, "disk_stamps", lambda *a: walks.append(1) or stamps(*a))

    def counted(ws: object) -> object:
        made = lean(ws)  # type: ignore[arg-type]
        if made is not None:
            walks.append(1)
        return made

    monkeypatch.setattr(build, "_lean_walk", counted)
    return walks


@needs_inotify
def test_a_watched_index_walks_only_after_a_change(repo: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from memex.index import build
    from memex.storage import homes, journal
    from memex.workflows import reads
    from tests.helpers.memfiles import memory, write

    write(repo, memory(body="first note"))
    ws = homes.workspace()
    walks = count_walks(monkeypatch)  # the stat walk of every memory file
    assert reads.watch_changes(ws)
    assert build.refresh(ws).new == 1 and len(walks) == 1  # the first refresh walks
    assert build.refresh(ws).new == 0 and len(walks) == 1  # nothing changed: no walk
    second = write(repo, memory(body="second note"))
    assert build.refresh(ws).new == 1 and len(walks) == 2
    second.write_text(second.read_text().replace("second note", "changed note"))
    assert build.refresh(ws).changed == 1
    second.unlink()
    assert build.refresh(ws).deleted == 1
    assert build.refresh(ws).new == 0 and len(walks) == 4
    # another process's write to the index (a reindex, say) is a reason to walk
    with sqlite3.connect(build.db_path(ws)) as other:
        other.execute("UPDATE meta SET value = 'elsewhere' WHERE key = 'generation'")
    build.refresh(ws)
    assert len(walks) == 5
    # while a submit journal is pending, and once after, every refresh walks
    assert ws.repo is not None
    journal.journal_path(ws.repo).write_text("{}", encoding="utf-8")
    build.refresh(ws)
    build.refresh(ws)
    journal.journal_path(ws.repo).unlink()
    build.refresh(ws)
    assert len(walks) == 8
    build.refresh(ws)
    assert len(walks) == 8
    build.watch_with(ws, None)  # no watch: every refresh walks again
    build.refresh(ws)
    assert len(walks) == 9


def test_without_notices_reads_walk(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memex.index import build
    from memex.storage import homes
    from memex.workflows import reads

    monkeypatch.setitem(sys.modules, "inotify_simple", None)
    ws = homes.workspace()
    assert not reads.watch_changes(ws)
    walks = count_walks(monkeypatch)  # the stat walk of every memory file
    build.refresh(ws)
    build.refresh(ws)
    assert len(walks) == 2


def test_a_watch_started_on_a_fresh_index_walks_once(repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP server's case: the index is up to date when the watch starts, so the
    first walk finds every stamp unchanged; the calls after it must not walk again."""
    from memex.index import build
    from memex.storage import homes
    from memex.workflows import reads
    from tests.helpers.memfiles import memory, write

    path = write(repo, memory(body="first note"))
    old = time.time() - 100  # not racily new: its stamp is trusted as is
    os.utime(path, (old, old))
    os.utime(path.parent, (old, old))
    ws = homes.workspace()
    build.refresh(ws)  # another command indexed it before the server started
    build.forget_connections()  # ...in another process
    walks = count_walks(monkeypatch)  # the stat walk of every memory file
    assert reads.watch_changes(ws)
    for _ in range(3):
        assert build.refresh(ws).new == 0
    # the first walk finds the disk as indexed (by the walk's digest or the files
    # table) and marks the index clean: no call after it walks
    assert len(walks) == 1
