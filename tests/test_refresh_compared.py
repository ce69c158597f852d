"""A refresh compares only the paths whose stamp differs from the files table's (and
those gone): its plan equals the plan made from every file's state, as before."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from memex.index import build, plan
from memex.storage import homes, store
from tests.helpers import memfiles


def every_file_plan(index: build.Index, ws: homes.Workspace
                    ) -> tuple[plan.Plan, dict[str, plan.FileState], dict[str, str]]:
    """The decision as it was made before: every disk state against the whole table."""
    disk, kinds = build.states_of(build.disk_stamps(ws, {}))
    old, old_kinds = build.indexed_files(index.conn)
    hashed = dict(disk)
    for path in plan.needs_hash(old, disk):
        try:
            data = store.read_bytes(Path(path))
        except OSError:
            hashed.pop(path, None)
            continue
        hashed[path] = disk[path]._replace(hash=build.content_hash(data))
    made = plan.plan_changes(old, hashed)
    for src, dst in list(made.moved):
        if old_kinds.get(src) != kinds.get(dst):
            made.moved.remove((src, dst))
            made.deleted.append(src)
            made.new.append(dst)
    return made, hashed, kinds


def settle(*folders: Path) -> None:
    """Every memory file an hour old: none is racy (hashed again by every refresh)."""
    hour_ago = time.time() - 3600
    for folder in folders:
        for path in folder.glob("*.md"):
            os.utime(path, (hour_ago, hour_ago))


@pytest.mark.parametrize("chunk", [build._CHUNK, 2])  # rows looked up, or the table
def test_the_plan_of_the_compared_paths_is_the_plan_of_every_file(
        repo: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(build, "_CHUNK", chunk)
    shared, outbox = repo / ".memex", memfiles.outbox()
    ids = [memfiles.put(shared, f"shared memory {i} about deploys") for i in range(12)]
    drafts = [memfiles.put(outbox, f"draft {i} about pnpm") for i in range(4)]
    settle(shared, outbox)
    ws = homes.workspace()
    build.open_index(ws)  # indexed, settled
    edited, touched, deleted, renamed, crossed, copied = ids[:5] + [drafts[0]]
    (shared / f"{edited}.md").write_text(
        (shared / f"{edited}.md").read_text().replace("deploys", "rollbacks"))
    os.utime(shared / f"{touched}.md", (time.time() - 60, time.time() - 60))
    (shared / f"{deleted}.md").unlink()
    (shared / f"{renamed}.md").rename(shared / "renamed-by-hand.md")
    (shared / f"{crossed}.md").rename(outbox / f"{crossed}.md")  # a move between homes
    shutil.copy(outbox / f"{copied}.md", shared / f"{copied}.md")  # one id in two homes
    memfiles.put(shared, "a new memory about caches")
    index = build.open_index(ws, refresh=False)

    made, hashed, kinds, whole = build._decide(index, ws, False, {})
    expected, all_hashed, all_kinds = every_file_plan(index, ws)
    assert made == expected
    assert whole
    for path in made.to_read + made.touched + [dst for _, dst in made.moved]:
        assert hashed[path] == all_hashed[path] and kinds[path] == all_kinds[path]
    # a control: the change is seen, and only the changed paths were compared
    assert made.new and made.changed and made.deleted and made.moved and made.touched
    assert len(hashed) < len(all_hashed)
    # applied, the index holds the disk's files (the new ones recorded racy)
    build.open_index(ws)
    after = build.indexed_stamps(build.open_index(ws, refresh=False).conn)
    assert after.keys() == build.disk_stamps(ws, {}).keys()


def test_racy_files_are_compared_again(repo: Path) -> None:
    """A file recorded racy (size -1: written in the same instant as its read) differs
    from its stamp on every refresh until it is settled, and is hashed again."""
    shared = repo / ".memex"
    first = memfiles.put(shared, "written just now")
    ws = homes.workspace()
    build.open_index(ws)  # recorded racy: the file is younger than RACY_NS
    index = build.open_index(ws, refresh=False)
    assert index.conn.execute("SELECT size FROM files WHERE path LIKE ?",
                              (f"%{first}.md",)).fetchone() == (-1,)
    made, hashed, _kinds, _whole = build._decide(index, ws, False, {})
    assert made == every_file_plan(index, ws)[0]
    assert [Path(p).stem for p in hashed] == [first] and hashed[next(iter(hashed))].hash
