"""The number of memories rows the index keeps in meta ('memories': the count reads and
capture's near-duplicate check use) is kept as rows come and go, not counted on every
write (build.derive); it must equal the rows through capture, update, delete, a hand
edit and a refresh, a full rebuild, a duplicate id and a write cut short."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.core.ulid import new_ulid
from memex.index import build, views
from memex.storage import homes
from memex.workflows import writes


def _counts(ws: homes.Workspace) -> tuple[int, int]:
    views.opened(ws)  # refresh
    with build.open_index(ws, refresh=False) as index:
        kept = build.memory_count(index.conn)
        rows = index.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    return kept, rows


def _capture(ws: homes.Workspace, text: str, **fields: object) -> str:
    return writes.capture(ws, writes.CaptureRequest(text=text, **fields)).memory.id


def test_the_kept_count_follows_every_change(repo: Path, memex_home: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ws = homes.workspace()
    counted: list[str] = []
    first = _capture(ws, "the first fact about the deploy", tags=["ops"])
    assert _counts(ws) == (1, 1)
    second = _capture(ws, "the second fact about the cache", tags=["ops"])
    _capture(ws, "a personal fact", scope="personal")
    assert _counts(ws) == (3, 3)
    writes.update(ws, first, writes.UpdateRequest(body="the first fact, edited"))
    assert _counts(ws) == (3, 3)
    writes.delete(ws, second)
    assert _counts(ws) == (2, 2)
    # by hand: a new file, one edited, a copy of one under another home (the same id
    # twice: both rows count), one removed
    loaded = [x for x in views.snapshot(ws).items if x.memory.id == first][0]
    text = loaded.path.read_text(encoding="utf-8")
    loaded.path.write_text(text.replace("edited", "edited by hand"), encoding="utf-8")
    (homes.workspace().personal_dir / f"{first}.md").write_text(text, encoding="utf-8")
    other = loaded.memory.copy(id=new_ulid(), body="written by hand")
    (loaded.path.parent / f"{other.id}.md").write_text(frontmatter.emit(other),
                                                       encoding="utf-8")
    kept, rows = _counts(ws)
    assert kept == rows >= 3
    (loaded.path.parent / f"{other.id}.md").unlink()
    assert _counts(ws) == (rows - 1, rows - 1)
    # a full rebuild counts them again (its clear drops the kept count)
    build.refresh(ws, full=True)
    assert _counts(ws) == (rows - 1, rows - 1)

    # a write counts no rows (the count is kept); a rebuild does
    monkeypatch.setattr(build, "_connect", _traced(build._connect, counted))
    _capture(ws, "a fourth fact, counted without a count")
    assert counted == []
    build.refresh(ws, full=True)
    assert counted
    monkeypatch.undo()
    assert _counts(ws) == (rows, rows)


def _traced(connect, counted: list[str]):  # type: ignore[no-untyped-def]
    def traced(target: str) -> sqlite3.Connection:
        conn = connect(target)
        conn.set_trace_callback(
            lambda sql: counted.append(sql) if "count(*) FROM memories" in sql else None)
        return conn
    build.forget_connections()
    return traced


def test_a_write_cut_short_keeps_the_count_right(repo: Path, memex_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ws = homes.workspace()
    for i in range(3):
        _capture(ws, f"fact number {i} about the build")
    assert _counts(ws) == (3, 3)
    folder = [x for x in views.snapshot(ws).items][0].path.parent
    victim = sorted(folder.glob("*.md"))[0]
    victim.unlink()  # its row goes, and a new file comes, in the refresh cut short
    _capture_by_hand = views.snapshot(ws).items[0].memory.copy(
        id=new_ulid(), body="a file the cut refresh read")
    (folder / f"{_capture_by_hand.id}.md").write_text(frontmatter.emit(_capture_by_hand),
                                                      encoding="utf-8")
    real = build.derive

    def cut(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)  # type: ignore[arg-type]
        raise sqlite3.OperationalError("disk I/O error")  # after the count moved

    monkeypatch.setattr(build, "derive", cut)
    with pytest.raises(sqlite3.OperationalError):
        build.refresh(ws)
    monkeypatch.undo()
    assert _counts(ws) == (3, 3)
