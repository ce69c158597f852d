"""The stat walk behind every refresh (build.disk_stamps): the same stamps, in the
same order, whichever way a folder is listed (by its open descriptor or by name)."""

from __future__ import annotations

import contextlib
import dis
import gc
import os
import struct
import sys
import time
import tracemalloc
import types
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from memex.core.digest import blake2b
from memex.index import ahead, build
from memex.storage import homes, store
from tests.helpers import memfiles


def by_name(ws: homes.Workspace) -> list[tuple[str, build.Stamp]]:
    """The stamps as a plain walk finds them: each home listed by name, in its listing
    order, a stat of each regular memory file by its whole path."""
    out: dict[str, build.Stamp] = {}
    for home in store.homes(ws):
        if not home.path.is_dir():
            continue
        for name in os.listdir(home.path):
            path = os.path.join(home.path, name)
            if not store.is_memory_name(name) or path in out or os.path.islink(path) \
                    or not os.path.isfile(path):
                continue
            st = os.stat(path)
            out[path] = (home.kind, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    return list(out.items())


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not build._LIST_BY_FD or not os.path.isdir("/proc/self/fd"),
                    reason="folders listed by descriptor (POSIX, /proc)")
def test_the_walk_by_descriptor_finds_what_a_walk_by_name_does(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo / ".memex"
    ids = [memfiles.put(folder, f"walked memory {i}") for i in range(5)]
    (folder / "README.md").write_text("not a memory\n")
    (folder / "notes.txt").write_text("not a memory\n")
    (folder / "sub.md").mkdir()  # a folder with a memory's name
    os.symlink(folder / f"{ids[0]}.md", folder / "01LINKLINKLINKLINKLINKLINK.md")
    personal = memfiles.put(homes.workspace().personal_dir, "a personal one",
                            scope="personal")
    ws = homes.workspace()
    before = open_fds()
    walked = list(build.disk_stamps(ws).items())
    assert open_fds() == before  # the folders' descriptors are closed
    assert walked == by_name(ws)
    assert {Path(path).stem for path, _ in walked} == {*ids, personal}
    monkeypatch.setattr(build, "_LIST_BY_FD", False)
    assert list(build.disk_stamps(ws).items()) == walked
    # A home that is missing or not a folder is skipped, its descriptor not kept.
    monkeypatch.setattr(build, "_LIST_BY_FD", True)
    ws.personal_dir.rename(ws.personal_dir.with_name("moved"))
    ws.personal_dir.write_text("a file where the folder was\n")
    assert [p for p, _ in build.disk_stamps(ws).items()] == [p for p, _ in walked[:-1]]
    assert open_fds() == before


_FORMATTING = {"FORMAT_VALUE", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE",
               "BUILD_STRING"}


def test_the_walk_builds_no_string_per_file(repo: Path) -> None:
    """A file's stamp is its (home kind, size, mtime, ctime, inode) as the stat gives
    them: the walk's
    loop formats no string per file (an f-string per file was ~0.6 us of the ~3 us a
    file the walk added to a bare stat at 10,000 files)."""
    folder = repo / ".memex"
    for i in range(20):
        memfiles.put(folder, f"walked memory {i}")
    ws = homes.workspace()
    code = build._walk_folder.__code__
    ops: dict[str, int] = {}

    def tracer(frame: Any, event: str, arg: object) -> Any:
        if frame.f_code is not code:
            return None
        frame.f_trace_opcodes = True
        if event == "opcode":
            op = dis.opname[frame.f_code.co_code[frame.f_lasti]]
            ops[op] = ops.get(op, 0) + 1
        return tracer

    sys.settrace(tracer)
    try:
        stamps = build.disk_stamps(ws)
    finally:
        sys.settrace(None)
    assert len(stamps) == 20
    assert ops  # the trace saw the walk's loop
    per_file = {op: n for op, n in ops.items() if op in _FORMATTING and n >= 20}
    assert per_file == {}
    kind, *numbers = next(iter(stamps.values()))
    assert (kind, *map(type, numbers)) == ("repo", int, int, int, int)


def test_the_digest_takes_a_time_past_what_eight_bytes_hold() -> None:
    """An mtime past 2262 does not fit an 8-byte integer: its stamp holds it as
    stat_numbers wraps it (as an inode past 2**63), and the digest still tells it."""
    far = build.stat_numbers(cast(os.stat_result, types.SimpleNamespace(
        st_size=0, st_mtime_ns=2 ** 64 + 5, st_ctime_ns=0, st_ino=0)))[1]
    near: dict[str, build.Stamp] = {"/m/a.md": ("repo", 10, 1, 1, 7),
                                    "/m/b.md": ("repo", 12, 2, 2, 8)}
    digests = {build.stamps_digest(near),
               build.stamps_digest({**near, "/m/b.md": ("repo", 12, far, 2, 8)}),
               build.stamps_digest({**near, "/m/b.md": ("repo", 12, far + 1, 2, 8)}),
               build.stamps_digest({**near, "/m/b.md": ("repo", 12, 2, 2, far)}),
               build.stamps_digest({**near, "/m/b.md": ("repo", 12, 2, 3, 8)}),
               build.stamps_digest({**near, "/m/b.md": ("repo", 12, 2, 2, 9)}),
               build.stamps_digest({**near, "/m/b.md": ("org", 12, 2, 2, 8)})}
    assert len(digests) == 7
    assert build.stamps_digest(dict(near)) == build.stamps_digest(near)


def test_the_digest_tells_which_folder_and_home_each_file_is_in() -> None:
    """A folder's path is hashed once for its run of files: a file in another folder,
    files split otherwise between two folders, or another home's kind for the same
    folder each give another digest."""
    a: build.Stamp = ("repo", 10, 1, 1, 7)
    b: build.Stamp = ("repo", 12, 2, 2, 8)
    walks = [{"/m/a.md": a, "/m/b.md": b},
             {"/m/a.md": a, "/n/b.md": b},
             {"/n/a.md": a, "/n/b.md": b},
             {"/m/a.md": a, "/m/b.md": ("outbox", *b[1:])},
             {"/m/a.md": a, "/m/x/b.md": b},
             {"/m/a.md": a, "/m/b.md": b, "/n/c.md": b},
             {"/m/a.md": a, "/m/b.md": b, "/m/c.md": b}]
    assert len({build.stamps_digest(w) for w in walks}) == len(walks)


def test_a_walk_record_of_the_string_digest_is_compared_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index whose walk record an older version wrote (the digest of one string per
    file): the first refresh compares the files table, reads no file, writes nothing
    but the new record; the next one takes the record."""
    folder = repo / ".memex"
    hour_ago = time.time_ns() - 3600 * 10**9
    for i in range(3):
        written = memfiles.put(folder, f"walked memory {i}")
        os.utime(folder / f"{written}.md", ns=(hour_ago, hour_ago))  # not racy
    ws = homes.workspace()
    build.refresh(ws)
    stamps = build.disk_stamps(ws)
    old = blake2b(digest_size=16)
    old.update("\0".join(stamps).encode())
    old.update(b"\1")
    old.update("\0".join(f"{k} {s} {m}" for k, s, m, *_ in stamps.values()).encode())
    with build.open_index(ws, refresh=False) as index:
        made = build.generation(index.conn)
        index.conn.execute("UPDATE meta SET value = ? WHERE key = 'walk'",
                           (build.walk_value(made, old.hexdigest(), ()),))
    build.forget_connections()
    compared: list[int] = []
    real = build.indexed_stamps
    monkeypatch.setattr(build, "indexed_stamps", lambda conn: compared.append(1) or real(conn))
    monkeypatch.setattr(store, "read_bytes", lambda path: pytest.fail(f"read {path}"))
    assert build.refresh(ws).touched == 0
    assert compared == [1]
    build.forget_connections()
    build.refresh(ws)
    assert compared == [1]
    with build.open_index(ws, refresh=False) as index:
        assert build.generation(index.conn) == made
        assert build.walk_record(index.conn) == (made, build.stamps_digest(stamps), [])


def test_the_walk_sets_off_no_collection(repo: Path) -> None:
    """A stamp per file is a tuple the cyclic collector tracks: the walk holds the
    collector off while it goes through a folder (a walk of 100,000 files set off ~140
    collections, each over every tracked object of the process), and leaves it on as
    it was."""
    folder = repo / ".memex"
    for i in range(40):
        memfiles.put(folder, f"walked memory {i}")
    home = store.homes(homes.workspace())[0]
    stamps: dict[str, build.Stamp] = {}
    started: list[int] = []

    def noted(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(len(stamps))  # how far the walk was

    threshold = gc.get_threshold()
    was_enabled = gc.isenabled()
    gc.enable()
    gc.set_threshold(5)  # a collection every few tracked objects made
    gc.callbacks.append(noted)
    try:
        gc.collect()  # none due when the walk starts
        started.clear()
        build._walk_folder(home, stamps)
        assert gc.isenabled()
    finally:
        gc.callbacks.remove(noted)
        gc.set_threshold(*threshold)
        if not was_enabled:
            gc.disable()
    assert len(stamps) == 40
    assert [walked for walked in started if 0 < walked < 40] == []


def _digest_as_documented(stamps: dict[str, build.Stamp]) -> str:
    """stamps_digest's bytes, each part made whole: each run of paths in one folder
    with one kind as its count, kind and folder (with its "/"), then its names, each
    followed by a NUL; then b"\2" and the numbers."""
    runs: list[tuple[str, str, list[str]]] = []
    for path, (kind, *_) in stamps.items():
        folder, sep, name = path.rpartition("/")
        if not runs or runs[-1][:2] != (folder + sep, kind):
            runs.append((folder + sep, kind, []))
        runs[-1][2].append(name)
    digest = blake2b(digest_size=16)
    digest.update(b"".join(f"{len(names)}\0{kind}\0{prefix}\0{''.join(n + chr(0) for n in names)}"
                           .encode("utf-8", "surrogateescape") for prefix, kind, names in runs))
    numbers = [stamp[1:] for stamp in stamps.values()]
    digest.update(b"\2" + b"".join(struct.pack("<4q", *n) for n in numbers))
    return digest.hexdigest()


_NAMES = st.text(st.characters(blacklist_categories=("Cs",)) | st.sampled_from(
    ["\udc80", "\udcff", "\0"]), min_size=1, max_size=8)
_STAT_NUMBER = st.integers(-(2 ** 64), 2 ** 65)
# A stamp's numbers are made by build.stat_numbers (signed 8-byte integers).
_STAMP_NUMBER = st.integers(-(2 ** 63), 2 ** 63 - 1)
_STAMPS = st.dictionaries(_NAMES, st.tuples(
    st.sampled_from(["repo", "org", "personal"]), _STAMP_NUMBER, _STAMP_NUMBER,
    _STAMP_NUMBER, _STAMP_NUMBER), max_size=12)


@given(st.tuples(_STAT_NUMBER, _STAT_NUMBER, _STAT_NUMBER, _STAT_NUMBER))
@example((2 ** 63, 0, 0, 2 ** 64 - 1))
@example((1, 2 ** 63 - 1, -(2 ** 63), 2 ** 63 - 1))
def test_a_stats_numbers_become_signed_8_byte_integers(
        numbers: tuple[int, int, int, int]) -> None:
    """stat_numbers: the numbers as they are where they fit a signed 8-byte integer
    (the files table's INTEGER, the digest's packing), else the same modulo 2**64."""
    size, mtime, ctime, ino = numbers
    made = build.stat_numbers(cast(os.stat_result, types.SimpleNamespace(
        st_size=size, st_mtime_ns=mtime, st_ctime_ns=ctime, st_ino=ino)))
    for n, kept in zip(numbers, made, strict=True):
        assert -(2 ** 63) <= kept < 2 ** 63
        assert (kept - n) % 2 ** 64 == 0
        if -(2 ** 63) <= n < 2 ** 63:
            assert kept == n


@given(_STAMPS, st.integers(1, 5))
def test_the_digest_in_parts_is_the_digest_of_the_whole(
        stamps: dict[str, build.Stamp], chunk: int) -> None:
    """Made a few stamps at a time, the digest is that of the parts made whole, as
    stamps_digest documents them (each folder's path hashed once, not with each name)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build, "_DIGEST_CHUNK", chunk)
        assert build.stamps_digest(stamps) == _digest_as_documented(stamps)
    assert build.stamps_digest(stamps) == _digest_as_documented(stamps)


def test_the_digest_makes_no_buffer_of_every_path() -> None:
    """100,000 paths joined whole were two 6 MB buffers (their page faults a fifth of
    the digest's time): the digest's memory stays well under the paths' size."""
    folder = "/a/home/folder/that/is/long/enough/" + "x" * 40 + "/"
    stamps: dict[str, build.Stamp] = {
        f"{folder}{i:026d}.md": ("repo", 3000 + i, 1_700_000_000_000_000_000 + i,
                                 1_700_000_000_000_000_000 + i, 100 + i)
        for i in range(10_000)}
    whole = sum(map(len, stamps))
    tracemalloc.start()
    try:
        build.stamps_digest(stamps)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < whole / 3


def _settled_tree(repo: Path) -> homes.Workspace:
    """Memory files in the repo's folder, the outbox and the personal home, an hour
    old (none racy), beside what a walk passes over: other files, a folder and a link
    with a memory's name, names in other scripts."""
    hour_ago = time.time_ns() - 3600 * 10**9
    ws = homes.workspace()
    folders = [repo / ".memex", memfiles.outbox(repo), ws.personal_dir]
    for at, folder in enumerate(folders):
        for i in range(4):
            memfiles.put(folder, f"walked memory {at} {i}", scope="personal" if at == 2 else None)
        (folder / "README.md").write_text("not a memory\n")
        (folder / "notes.txt").write_text("not a memory\n")
    (folders[0] / "sub.md").mkdir()
    (folders[0] / "déjà-vu 記憶.md").write_text((folders[0] / "README.md").read_text())
    first = next(folders[0].glob("0*.md"))
    os.symlink(first, folders[0] / "01LINKLINKLINKLINKLINKLINK.md")
    for folder in folders:
        for path in folder.iterdir():
            os.utime(path, ns=(hour_ago, hour_ago), follow_symlinks=False)
    return homes.workspace()


@pytest.mark.parametrize("by_fd", [True, False])
def test_the_lean_walk_is_the_walk(repo: Path, monkeypatch: pytest.MonkeyPatch,
                                   by_fd: bool) -> None:
    """A walk kept as names and arrays (build._LeanWalk) gives disk_stamps' stamps in
    their order, its layout, and its digest."""
    ws = _settled_tree(repo)
    monkeypatch.setattr(build, "_LIST_BY_FD", by_fd and build._LIST_BY_FD)
    layout: list[tuple[str, str, int]] = []
    stamps = build.disk_stamps(ws, {}, layout)
    lean = build._lean_walk(ws)
    assert lean is not None
    assert list(lean.stamps().items()) == list(stamps.items())
    assert lean.layout() == layout
    assert lean.digest() == build.stamps_digest(stamps)
    assert len(stamps) == 12 + 1  # the other script's name is a memory file's
    # an empty or missing home adds nothing, as in disk_stamps
    for path in ws.personal_dir.iterdir():
        path.unlink()
    ws.personal_dir.rmdir()
    layout = []
    stamps = build.disk_stamps(ws, {}, layout)
    lean = build._lean_walk(ws)
    assert lean is not None
    assert (list(lean.stamps().items()), lean.layout(), lean.digest()) == (
        list(stamps.items()), layout, build.stamps_digest(stamps))


@pytest.mark.parametrize("gate_open", [False, True])
def test_a_writers_lean_walk_sweeps_stale_temps_as_the_walk_does(
        repo: Path, monkeypatch: pytest.MonkeyPatch, gate_open: bool) -> None:
    """A writer's walk (it holds the write lock) also removes the temp files a killed
    writer left in a memory folder: the lean walk does it too (a capture's refresh is
    then lean), and gives the walk's stamps; a live writer's temp is left. Also where
    the stats may be shared with a helper (the listing-first path does not sweep: a
    writer's walk does not take it)."""
    if gate_open:
        monkeypatch.setattr(build, "_may_share_stats", lambda: True)
    ws = _settled_tree(repo)
    shared = repo / ".memex"
    stale = shared / f".x.md.4194305.abcd{store.TEMP_SUFFIX}"
    live = shared / f".y.md.{os.getpid()}.abcd{store.TEMP_SUFFIX}"
    for temp in (stale, live):
        temp.write_text("a temp file")
    lean = build._lean_walk(ws)  # no lock held: nothing removed
    assert lean is not None and stale.exists()
    with monkeypatch.context() as patch:
        patch.setattr(build.locks, "held_count", lambda home, *a: 1)
        lean = build._lean_walk(ws)
        assert lean is not None
        assert not stale.exists() and live.exists()
        stale.write_text("a temp file")
        assert list(lean.stamps().items()) == list(build.disk_stamps(ws).items())
        assert not stale.exists() and live.exists()


def test_the_lean_walk_is_not_taken_where_the_walk_does_more(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed submit's files answer from their bytes before it: disk_stamps then, as
    before."""
    ws = _settled_tree(repo)
    assert build._lean_walk(ws) is not None
    real = store.homes
    with monkeypatch.context() as patch:
        patch.setattr(store, "homes", lambda w: [
            store.Home(h.kind, h.path, {str(h.path / "x.md"): None}) if i == 0 else h
            for i, h in enumerate(real(w))])
        assert build._lean_walk(ws) is None


def test_a_time_past_2262_takes_the_walk_of_stamps(repo: Path) -> None:
    """An mtime in nanoseconds past what 8 bytes hold: stamped as stat_numbers wraps it,
    by the lean walk as by the walk of stamps, and refreshed without an error."""
    ws = _settled_tree(repo)
    build.refresh(ws)
    far = 2 ** 63 + 10**9
    path = next((repo / ".memex").glob("0*.md"))
    try:
        os.utime(path, ns=(far, far))
    except (OSError, OverflowError):
        pytest.skip("this file system keeps no such time")
    if os.stat(path).st_mtime_ns < 2 ** 63:
        pytest.skip("this file system keeps no such time")
    lean = build._lean_walk(ws)
    assert lean is not None
    stamps = build.disk_stamps(ws)
    assert lean.digest() == build.stamps_digest(stamps)
    walked = len(stamps)
    for _ in range(2):  # the same bytes, a time still to come: nothing to write
        report = build.refresh(ws)
        assert (report.new, report.changed, report.deleted) == (0, 0, 0)
    assert walked == 13


def test_a_refresh_that_finds_nothing_changed_makes_no_stamp_per_file(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the digest the index records for its walk, a refresh needs nothing but the
    walk's digest: no stamp, path or dict entry is made per file (~80 ms of CPU at
    100,000 memories, and as much to free them), unless something changed."""
    ws = _settled_tree(repo)
    build.refresh(ws)
    build.forget_connections()
    with monkeypatch.context() as patch:
        for name in ("disk_stamps", "_walk_folder", "stamps_digest"):
            patch.setattr(build, name, lambda *a, _n=name, **k: pytest.fail(f"{_n} called"))
        patch.setattr(store, "read_bytes", lambda path: pytest.fail(f"read {path}"))
        report = build.refresh(ws)
    assert (report.new, report.changed, report.touched, report.deleted) == (0, 0, 0, 0)
    # control: a changed file is seen, and indexed
    path = next((repo / ".memex").glob("0*.md"))
    path.write_text(path.read_text().replace("walked memory", "changed memory"))
    assert build.refresh(ws).changed == 1
    with build.open_index(ws, refresh=False) as index:
        made = build.generation(index.conn)
        assert build.walk_record(index.conn) == (
            made, build.stamps_digest(build.disk_stamps(ws)), [str(path)])


def test_a_write_after_a_lean_refresh_takes_its_walk(repo: Path) -> None:
    """A process whose last refresh kept the lean walk (an MCP server that searched)
    and then writes: note_written makes the stamps from it and records the walk."""
    ws = _settled_tree(repo)
    build.refresh(ws)
    build.forget_connections()
    with build.open_index(ws):
        pass
    kept = build._OPEN[str(build.db_path(ws))]
    assert isinstance(kept.walk, build._LeanWalk)
    written = memfiles.put(repo / ".memex", "a note written after the search")
    path = repo / ".memex" / f"{written}.md"
    build.note_written(ws, [path])
    with build.open_index(ws, refresh=False) as index:
        made = build.generation(index.conn)
        assert build.walk_record(index.conn) == (
            made, build.stamps_digest(build.disk_stamps(ws)), [str(path)])
        assert index.conn.execute("SELECT count(*) FROM files WHERE path = ?",
                                  (str(path),)).fetchone()[0] == 1


class _Unstatable:
    """A directory entry as scandir gives it on a file system with no d_type (NFS,
    some FUSE mounts, XFS without ftype): is_file stats, and that stat fails."""

    def __init__(self, real: os.DirEntry[str]) -> None:
        self.name, self.path = real.name, real.path

    def is_file(self, follow_symlinks: bool = True) -> bool:
        raise PermissionError(13, "Permission denied", self.name)

    def stat(self, follow_symlinks: bool = True) -> os.stat_result:
        raise PermissionError(13, "Permission denied", self.name)


class _Listing:
    def __init__(self, entries: list[Any]) -> None:
        self.entries = entries

    def __enter__(self) -> _Listing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def __iter__(self) -> Any:
        return iter(self.entries)

    def close(self) -> None:
        return None


def test_a_file_whose_is_file_fails_is_passed_over_by_every_walk(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean walk called entry.is_file outside its try: where is_file has to stat
    and cannot (EACCES, ESTALE, EIO), every search failed, while disk_stamps passed the
    file over (seen failing: the search raised PermissionError). One rule now
    (build._memory_files): the file is left out of both walks and the search answers."""
    from memex.search import engine

    folder = memfiles.personal()
    good = memfiles.put(folder, "Deploys go through staging", scope="personal")
    ws = homes.workspace(repo)
    build.refresh(ws)
    bad = memfiles.put(folder, "A staging note whose stat fails", scope="personal")
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> _Listing:
        with real_scandir(path) as entries:
            return _Listing([_Unstatable(e) if e.name == f"{bad}.md" else e
                             for e in entries])

    monkeypatch.setattr(os, "scandir", scandir)
    assert not any(bad in path for path in build.disk_stamps(ws))
    lean = build._lean_walk(ws)
    assert lean is not None and not any(bad in path for path in lean.stamps())
    hits = engine.search(ws, engine.SearchRequest(query="staging", limit=5)).hits
    assert [h.id for h in hits] == [good]


@pytest.mark.skipif(not (build._LIST_BY_FD and build._LSTAT_IN_FOLDER)
                    or not hasattr(os, "fork"),
                    reason="a folder listed first, then stated by name (POSIX)")
@pytest.mark.parametrize("forked", [True, False])
def test_a_walk_listed_first_and_stated_in_pieces_is_the_walk(
        repo: Path, monkeypatch: pytest.MonkeyPatch, forked: bool) -> None:
    """The lean walk lists a folder, then states its names in pieces, every other piece
    in a forked helper where that pays (build._listed_then_stated): the same stamps in
    the same order as the walk that states each entry as it is listed (disk_stamps),
    over three homes with links, a folder, other names, an unreadable file, a file whose
    stat is refused, and two files that vanish between the listing and their stat (one
    in a piece of each process)."""
    ws = _settled_tree(repo)
    folder = repo / ".memex"
    for i in range(9):
        memfiles.put(folder, f"one more memory {i}")
    locked = next(folder.glob("0*.md"))
    locked.chmod(0)
    monkeypatch.setattr(build, "_STAT_PIECE", 3)
    # the gate open (a CPU idle); the helper only for a folder of 7 files or more
    monkeypatch.setattr(build, "WALK_FORK_MIN", 7 if forked else 10**6)
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(ahead, "forks", lambda count: True)
    listed = [name for name in os.listdir(folder) if store.is_memory_name(name)
              and not os.path.islink(folder / name) and os.path.isfile(folder / name)]
    refused, vanish = listed[2], {listed[4], listed[7]}  # pieces 0 (parent), 1 and 2
    real_stat = os.stat
    stating = repo.parent / "stating-pids"  # each process that stated a memory file

    def stat(path: Any, *, dir_fd: int | None = None,
             follow_symlinks: bool = True) -> os.stat_result:
        if dir_fd is not None:
            with open(stating, "a", encoding="ascii") as pids:
                pids.write(f"{os.getpid()}\n")
        if path == refused:
            raise PermissionError(13, "refused", path)
        if path in vanish and dir_fd is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path, dir_fd=dir_fd)
        return real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(os, "stat", stat)
    lean = build._lean_walk(ws)
    monkeypatch.setattr(os, "stat", real_stat)
    assert lean is not None
    assert (len(set(stating.read_text().split())) > 1) == forked  # a helper per folder
    assert not any((folder / name).exists() for name in vanish)
    layout: list[tuple[str, str, int]] = []
    stamps = build.disk_stamps(ws, {}, layout)
    del stamps[str(folder / refused)]  # its stat was refused to the lean walk only
    layout[0] = (layout[0][0], layout[0][1], layout[0][2] - 1)
    assert list(lean.stamps().items()) == list(stamps.items())
    assert lean.layout() == layout
    assert lean.digest() == build.stamps_digest(stamps)
    assert str(locked) in stamps and len(stamps) == 12 + 1 + 9 - 2 - 1


def test_a_lean_walks_stamps_of_are_the_walks(repo: Path, monkeypatch: pytest.MonkeyPatch
                                              ) -> None:
    """_LeanWalk.stamps_of (a racy record's paths, a write's) gives disk_stamps' stamp
    of each path it holds, none of the others, also where a folder is named by two homes
    (the second lists nothing: its path is the first one's, seen failing before: none
    found)."""
    ws = _settled_tree(repo)
    real = store.homes
    monkeypatch.setattr(store, "homes", lambda w: [*real(w), store.Home("org", real(w)[0].path)])
    stamps = build.disk_stamps(ws)
    lean = build._lean_walk(ws)
    assert lean is not None
    asked = [*list(stamps)[::3], str(repo / ".memex" / "01NOTAMEMORYNOTAMEMORY0000.md")]
    for how_many in (1, len(asked)):  # a scan of the names, a dict of them
        got = lean.stamps_of(asked[:how_many])
        assert got == {p: stamps[p] for p in asked[:how_many] if p in stamps}
    assert len(lean.stamps_of(asked)) == len(asked) - 1
