"""A file's stamp (what a refresh compares before it reads anything) is its size, mtime,
ctime and inode, as git's index keeps them: a memory file rewritten with the same size
and its old mtime put back (`cp -p`, `rsync -a`, `tar x`, a write then `os.utime`) is
read again, since no program can set a file's ctime, and a file put in its place is
another inode."""

from __future__ import annotations

import os
import subprocess
import tarfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memex.index import build, plan
from memex.search import engine as search
from memex.storage import homes, store
from tests.helpers import memfiles

HOUR_AGO_NS = (time.time_ns() // 10**9 - 3600) * 10**9  # whole seconds: a tar keeps them


def found(ws: homes.Workspace, word: str) -> set[str]:
    return {h.id for h in search.search(ws, search.SearchRequest(word, limit=50)).hits}


def _in_place_then_utime(path: Path, text: str, scratch: Path) -> None:
    old = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))


def _cp_p(path: Path, text: str, scratch: Path) -> None:
    """`cp -p` over the file: written in place (the same inode), times copied."""
    source = scratch / path.name
    source.write_text(text, encoding="utf-8")
    old = path.stat()
    os.utime(source, ns=(old.st_atime_ns, old.st_mtime_ns))
    subprocess.run(["cp", "-p", str(source), str(path)], check=True)


def _rsync_a(path: Path, text: str, scratch: Path) -> None:
    """What `rsync -a` does: a temp file beside it, its times set, renamed over it."""
    old = path.stat()
    temp = path.with_name(f".{path.name}.XXXXXX")
    temp.write_text(text, encoding="utf-8")
    os.utime(temp, ns=(old.st_atime_ns, old.st_mtime_ns))
    os.replace(temp, path)


def _tar_x(path: Path, text: str, scratch: Path) -> None:
    """`tar x` of an archive made from a copy with the same times."""
    source = scratch / path.name
    source.write_text(text, encoding="utf-8")
    old = path.stat()
    os.utime(source, ns=(old.st_atime_ns, old.st_mtime_ns))
    archive = scratch / "memories.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(source, arcname=path.name)
    subprocess.run(["tar", "xf", str(archive), "-C", str(path.parent)], check=True)


REWRITES: dict[str, Callable[[Path, str, Path], None]] = {
    "write, utime": _in_place_then_utime, "cp -p": _cp_p, "rsync -a": _rsync_a,
    "tar x": _tar_x}


@pytest.mark.parametrize("kept", [False, True], ids=["next process", "same process"])
@pytest.mark.parametrize("how", list(REWRITES))
def test_a_file_rewritten_with_its_size_and_mtime_kept_is_read_again(
        repo: Path, tmp_path: Path, how: str, kept: bool) -> None:
    folder = repo / ".memex"
    mid = memfiles.put(folder, "Deploys go through the alpha cluster")
    other = memfiles.put(folder, "Rollbacks go through the alpha cluster too")
    for name in (mid, other):  # settled: recorded with its stamp, not as racy
        os.utime(folder / f"{name}.md", ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    ws = homes.workspace()
    assert found(ws, "alpha") == {mid, other}
    with build.open_index(ws, refresh=False) as index:
        assert build.walk_record(index.conn)[2] == []  # type: ignore[index]
    if not kept:
        build.forget_connections()
    path = folder / f"{mid}.md"
    before = path.stat()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    REWRITES[how](path, path.read_text(encoding="utf-8").replace("alpha", "gamma"), scratch)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert found(ws, "gamma") == {mid}
    assert found(ws, "alpha") == {other}
    build.forget_connections()
    assert found(ws, "gamma") == {mid}  # and what was recorded holds in the next process


def test_a_stamp_is_the_size_mtime_ctime_and_inode_the_stat_gives(repo: Path) -> None:
    folder = repo / ".memex"
    mid = memfiles.put(folder, "a stamped memory")
    path = str(folder / f"{mid}.md")
    st = os.stat(path)
    ws = homes.workspace()
    assert build.disk_stamps(ws) == {
        path: ("repo", st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)}
    build.refresh(ws)
    states, _ = build.indexed_files(build.open_index(ws, refresh=False).conn)
    state = states[path]
    assert (state.mtime_ns, state.ctime_ns, state.ino) == (
        st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def test_a_ctime_or_inode_alone_makes_a_stat_differ() -> None:
    """A stat that differs in ctime or inode only is read again (hashed): the same bytes
    are only `touched` (the row's stamp updated), other bytes are changed."""
    old = plan.FileState(10, 5, 7, 100, "aaa")
    assert plan.same_stat(old, plan.FileState(10, 5, 7, 100))
    for new in (plan.FileState(10, 5, 8, 100), plan.FileState(10, 5, 7, 101)):
        assert not plan.same_stat(old, new)
        assert plan.needs_hash({"p": old}, {"p": new}) == ["p"]
        assert plan.plan_changes({"p": old}, {"p": new._replace(hash="aaa")}).touched == ["p"]
        assert plan.plan_changes({"p": old}, {"p": new._replace(hash="bbb")}).changed == ["p"]


def _stats_with(monkeypatch: pytest.MonkeyPatch, field: str, plus: int) -> None:
    """The walk's stats with FIELD raised by PLUS (what some file systems give): those
    of a listing's entries, and those the lean walk makes of a listed name in its
    folder's descriptor (build._stat_names)."""
    real, real_stat = build._memory_entries, os.stat

    def raised_stat(st: os.stat_result) -> Any:
        numbers = {f: getattr(st, f) for f in
                   ("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino", "st_mode")}
        numbers[field] += plus
        return types.SimpleNamespace(**numbers)

    def raised(*args, **kwargs):  # type: ignore[no-untyped-def]
        for name, st in real(*args, **kwargs):
            yield name, (st if st is build._UNSTATED else raised_stat(st))

    def stat(path: Any, *, dir_fd: int | None = None, follow_symlinks: bool = True) -> Any:
        st = real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        listed = dir_fd is not None and not follow_symlinks and store.is_memory_name(path)
        return raised_stat(st) if listed else st

    monkeypatch.setattr(build, "_memory_entries", raised)
    monkeypatch.setattr(os, "stat", stat)


@pytest.mark.parametrize("field", ["st_ino", "st_mtime_ns", "st_size"])
def test_a_stat_number_past_2_63_is_stamped_indexed_and_found_unchanged(
        repo: Path, monkeypatch: pytest.MonkeyPatch, field: str) -> None:
    """An inode at or past 2**63 (some network and FUSE file systems), a time past the
    year 2262: the files table's INTEGER holds 8 signed bytes. The refresh failed with
    OverflowError (and so did every read after it); now the number is stamped as
    build.stat_numbers makes it, in the walks, the digest and the table alike."""
    folder = repo / ".memex"
    mid = memfiles.put(folder, "Deploys go through the alpha cluster")
    os.utime(folder / f"{mid}.md", ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    _stats_with(monkeypatch, field, 2 ** 63)
    ws = homes.workspace()
    assert found(ws, "alpha") == {mid}
    stamps = build.disk_stamps(ws)
    lean = build._lean_walk(ws)
    assert lean is not None
    assert lean.stamps() == stamps
    assert lean.digest() == build.stamps_digest(stamps)
    with build.open_index(ws, refresh=False) as index:
        assert build.indexed_stamps(index.conn) == stamps  # the same after the table
    build.forget_connections()
    report = build.refresh(ws)
    assert (report.new, report.changed, report.touched, report.memories) == (0, 0, 0, 1)
    assert found(ws, "alpha") == {mid}
