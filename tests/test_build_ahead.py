"""A full build's rows made partly by a forked helper (index.ahead) must leave the index a
one-process build leaves: every table, every FTS posting, byte for byte, over a store of
canonical and hand-written files (quoted strings, flow lists, comments, another key
order) and unreadable ones; and a helper that dies or fails costs only time. Each row's
listing columns (index.listing) give the element of every field its doc holds."""

from __future__ import annotations

import datetime
import json
import os
import random
import signal
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import frontmatter, jsonout, model
from memex.core.ulid import new_ulid
from memex.index import ahead, bodies, build, listing
from memex.storage import homes, iostep, store
from tests.helpers import memfiles
from tests.test_context import put, shared
from tests.test_list_rows import _varied


def _store(repo: Path, memex_home: Path) -> homes.Workspace:
    _varied(repo, memex_home)
    rng = random.Random(11)
    folder = shared(repo)
    for path in sorted(folder.glob("*.md")):
        try:
            text = memfiles.hand_written(path.read_text(encoding="utf-8"), rng, new_ulid())
        except Exception:  # noqa: BLE001 - a file the hand writer cannot copy
            continue
        new_id = next(line.split(":", 1)[1].strip().strip("'\"")
                      for line in text.splitlines() if line.startswith("id:"))
        (folder / f"{new_id}.md").write_text(text, encoding="utf-8")
    for i in range(40):
        put(folder, "project", f"note {i} on the build {'word ' * rng.randint(1, 300)}",
            f"2026-09-{i % 28 + 1:02d}T00:00:00Z", tags=[f"t{i % 5}", "build"],
            related=[new_ulid()] if i % 7 == 0 else [])
    (folder / f"{new_ulid()}.md").write_text("---\nid: [unclosed\n---\nbody\n", encoding="utf-8")
    (folder / f"{new_ulid()}.md").write_text("no front matter at all\n", encoding="utf-8")
    hour_ago = time.time() - 3600  # no file racy (recorded size -1) in one build only
    for path in [*folder.glob("*.md"), *memex_home.rglob("*.md")]:
        os.utime(path, (hour_ago, hour_ago))
    return homes.workspace()


def _dump(ws: homes.Workspace) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table (meta but its per-build values), and every posting of
    the FTS index (term, rowid, column, offset)."""
    conn = sqlite3.connect(str(build.db_path(ws)))
    try:
        out = {}
        for table in ("files", "memories", "links", "guards", "chain_warnings", "pair_cache"):
            out[table] = conn.execute(f"SELECT rowid, * FROM {table} ORDER BY rowid").fetchall()
        out["meta"] = conn.execute("SELECT * FROM meta WHERE key NOT IN ('generation', "
                                   "'walk') ORDER BY key").fetchall()
        conn.execute("CREATE VIRTUAL TABLE temp.postings USING fts5vocab(main, fts, instance)")
        out["fts"] = conn.execute("SELECT * FROM postings ORDER BY 1, 2, 3, 4").fetchall()
        return out
    finally:
        conn.close()


def _built_to_share_in_chunks(repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch
                              ) -> tuple[homes.Workspace, dict[str, list[tuple[object, ...]]]]:
    """A store indexed in full and its dump, set for the next full build to fork its
    helper and write in small chunks (blocks of 3 files, inserts every 5), with no SQLite
    connection left to cross the fork."""
    ws = _store(repo, memex_home)
    build.refresh(ws, full=True)
    expected = _dump(ws)
    build.forget_connections()
    monkeypatch.setattr(ahead, "forks", lambda count: True)
    monkeypatch.setattr(ahead, "BLOCK", 3)
    monkeypatch.setattr(build, "_CHUNK", 5)
    return ws, expected


def _recording_forks(fork: Callable[[], int], into: Path) -> Callable[[], int]:
    """FORK, writing each child's pid INTO (where a test finds the build's helper)."""
    def recorded() -> int:
        child = fork()
        if child:
            into.write_text(str(child))
        return child
    return recorded


@pytest.fixture
def children(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of the helpers os.fork starts from here on."""
    started: list[int] = []
    fork = os.fork

    def counted() -> int:
        pid = fork()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return started


def test_a_build_shared_with_a_helper_writes_what_one_process_wrote(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch,
        children: list[int]) -> None:
    ws = _store(repo, memex_home)
    monkeypatch.setattr(ahead, "forks", lambda count: False)
    build.refresh(ws, full=True)
    expected = _dump(ws)
    assert len(expected["memories"]) > 60 and expected["links"] and expected["guards"]
    assert any(row[-1] for row in expected["files"])  # quarantined files are in it
    monkeypatch.setattr(ahead, "forks", lambda count: True)
    monkeypatch.setattr(ahead, "BLOCK", 7)  # many blocks each way
    build.refresh(ws, full=True)
    assert children  # the helper did its share
    assert _dump(ws) == expected


_KEYS = st.one_of(st.text(max_size=8), st.sampled_from(["title", "tags", "id", "body"]),
                  st.integers(-3, 3), st.booleans())
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
              st.datetimes(min_value=datetime.datetime(2000, 1, 1)),
              st.dates(min_value=datetime.date(2000, 1, 1))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)


def _element_of_every_field(front: dict[Any, Any], body: str, path: str, home: str) -> str:
    """The element `list --json` writes for a memory whose front matter is FRONT, as
    json.dumps writes it: every field of the front matter's JSON (decoded), the others
    at their defaults in model.FIELD_ORDER, then body, path, home and summary."""
    data = json.loads(jsonout.compact(front))
    data.update((n, model.DEFAULTS[n]) for n in model.FIELD_ORDER if n not in data)
    summary = model.summarise(str(data["title"]), body)
    data.update(body=body, path=path, home=home, summary=summary)
    return json.dumps([data], ensure_ascii=False, indent=2, default=str)[len("[\n  "):-2]


@settings(max_examples=300, deadline=None)
@given(front=st.dictionaries(_KEYS, _VALUES, max_size=6),
       title=st.one_of(st.none(), st.text(max_size=30), st.integers()),
       body=st.text(max_size=600), path=st.text(max_size=12),
       home=st.sampled_from(["repo", "personal", "outbox", "é\"x"]))
def test_the_listing_columns_give_the_element_of_every_field(
        front: dict[Any, Any], title: object, body: str, path: str, home: str) -> None:
    """Whatever the front matter holds, the doc, listed and summary columns made of it
    give the element of every field, and the doc holds the mapping its JSON held before
    (what a read and the FTS delete of the row decode)."""
    if title is not None:
        front = {"title": title, **front}
    try:
        expected = _element_of_every_field(front, body, path, home).encode("utf-8")
    except (TypeError, ValueError):  # keys JSON cannot write, a lone surrogate: no such row
        return
    doc, listed, summary = listing.stored(front, body)
    assert jsonout.compact(json.loads(doc)) == jsonout.compact(
        json.loads(jsonout.compact(front)))
    data = json.loads(doc)  # built whole: no field, or one written after the front matter's
    assert (listed is None) == (not data or not data.keys().isdisjoint(listing.AFTER))
    row = (path, home, listed, bodies.pack_body(body), None, None, None, doc.encode("utf-8"),
           summary)  # the doc as listing.COLUMNS reads it
    assert listing.element(row) == expected


def test_each_rows_listing_is_the_element_of_every_field(
        repo: Path, memex_home: Path) -> None:
    """Over canonical, hand-written and varied files: each row's doc is its front matter
    as the listing writes it (no second copy of it is kept), and its element is the
    element of every field."""
    ws = _store(repo, memex_home)
    build.refresh(ws, full=True)
    with build.open_index(ws, refresh=False) as index:
        rows = index.conn.execute(f"SELECT {listing.COLUMNS} FROM memories").fetchall()
    assert len(rows) > 60
    listed = 0
    for row in rows:
        path, home, columns, zbody, eff_status, eff_retired, eff_by, raw = row[:8]
        doc = raw.decode("utf-8")  # listing.COLUMNS reads the doc as its UTF-8 bytes
        assert doc == jsonout.element(json.loads(doc))
        if eff_status is None and eff_retired is None and eff_by is None:
            listed += columns is not None
            assert listing.element(row) == _element_of_every_field(
                json.loads(doc), bodies.body_text(zbody), path, home).encode("utf-8")
    assert listed > 60


def test_a_memory_front_matter_is_used_as_it_is() -> None:
    memory = model.Memory(id="m", scope="project", title="T", body="b", tags=["x", "y"],
                          revision=3, pinned=True, extra={"x-n": None})
    assert listing._round_trips(memory.front_matter())
    assert not listing._round_trips({"a": 1.5})
    assert not listing._round_trips({"a": ("x",)})
    assert not listing._round_trips({"a": [1]})
    assert not listing._round_trips({1: "x"})


# ------------------------------------------------------------- the helper process


def _square(n: int) -> int:
    return n * n


def test_in_order_gives_every_result_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "BLOCK", 5)
    items = list(range(203))
    assert list(ahead.in_order(items, _square, fork=True)) == [n * n for n in items]
    assert list(ahead.in_order(items, _square, fork=False)) == [n * n for n in items]
    assert list(ahead.in_order([], _square, fork=True)) == []
    assert list(ahead.in_order([3], _square, fork=True)) == [9]  # no block for a child


def _dies_in_child(parent: int, at: int) -> Any:
    def work(n: int) -> int:
        if os.getpid() != parent and n == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return n * n
    return work


def _fails_in_child(parent: int, at: int) -> Any:
    def work(n: int) -> int:
        if os.getpid() != parent and n == at:
            raise RuntimeError("the helper's own failure")
        return n * n
    return work


def _unpicklable_in_child(parent: int) -> Any:
    def work(n: int) -> object:
        return (lambda: n) if os.getpid() != parent else n * n
    return work


@pytest.mark.parametrize("make", [
    lambda parent: _dies_in_child(parent, 57),
    lambda parent: _fails_in_child(parent, 57),
    lambda parent: _dies_in_child(parent, 6),
    _unpicklable_in_child,
])
def test_a_helper_that_fails_costs_only_time(monkeypatch: pytest.MonkeyPatch,
                                             make: Any) -> None:
    monkeypatch.setattr(ahead, "BLOCK", 5)
    items = list(range(100))
    assert list(ahead.in_order(items, make(os.getpid()), fork=True)) == [n * n for n in items]


def test_an_exception_of_work_is_raised_as_one_process_raises_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "BLOCK", 5)

    def work(n: int) -> int:
        if n == 77:
            raise ValueError("item 77")
        return n

    got: list[int] = []
    with pytest.raises(ValueError, match="item 77"):
        for result in ahead.in_order(list(range(100)), work, fork=True):
            got.append(result)
    assert got == list(range(77))


def test_a_consumer_that_stops_leaves_no_helper(monkeypatch: pytest.MonkeyPatch,
                                                children: list[int]) -> None:
    monkeypatch.setattr(ahead, "BLOCK", 5)
    results: Iterator[int] = ahead.in_order(list(range(1000)), _square, fork=True)
    assert next(results) == 0
    results.close()  # type: ignore[attr-defined]
    assert children
    with pytest.raises(ChildProcessError):
        os.waitpid(children[0], os.WNOHANG)  # reaped


def test_the_choice_by_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "cpus", lambda: 2)
    monkeypatch.setattr(ahead.threading, "active_count", lambda: 1)
    monkeypatch.setattr(ahead, "_load", lambda: 1.2)
    assert not ahead.forks(ahead.FORK_MIN - 1)
    assert ahead.forks(ahead.FORK_MIN) == (os.name == "posix" and
                                           os.uname().sysname == "Linux")
    assert ahead.forks(10 * ahead.FORK_MIN) == ahead.forks(ahead.FORK_MIN)
    monkeypatch.setattr(ahead, "cpus", lambda: 1)
    assert not ahead.forks(10 * ahead.FORK_MIN)
    monkeypatch.setattr(ahead, "cpus", lambda: 2)
    monkeypatch.setattr(ahead.threading, "active_count", lambda: 2)  # a watch thread
    assert not ahead.forks(10 * ahead.FORK_MIN)
    monkeypatch.setattr(ahead.threading, "active_count", lambda: 1)
    monkeypatch.setattr(ahead, "_load", lambda: 1.6)  # the other CPU is busy
    assert not ahead.forks(10 * ahead.FORK_MIN)


def test_a_build_killed_with_its_helper_running_leaves_the_index_and_no_helper(
        repo: Path, memex_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL of the building process between two chunks of inserts, its helper
    running: the next refresh finds the index as it was (every file in it, the same
    rows), and the helper has ended (at its next write to the pipe)."""
    ws, expected = _built_to_share_in_chunks(repo, memex_home, monkeypatch)
    helper = tmp_path / "helper-pid"
    fork = os.fork
    pid = fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit or a SIGKILL
        try:
            os.fork = _recording_forks(fork, helper)
            os.environ["GIT_MEMEX_FAULT"] = "kill@3"  # the second chunk's "index write"
            iostep.reset()
            build.refresh(ws, full=True)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    helper_pid = int(helper.read_text())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{helper_pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break  # gone
        if state == "Z":
            break  # ended, waiting for init to reap it
        time.sleep(0.05)
    else:
        pytest.fail("the helper outlived its parent")
    monkeypatch.setattr(ahead, "forks", lambda count: False)
    build.refresh(ws)
    assert _dump(ws) == expected


@pytest.mark.parametrize(("cpu_max", "granted"), [
    ("max 100000\n", None), ("100000 100000\n", 1), ("150000 100000\n", 1),
    ("200000 100000\n", 2), ("50000 100000\n", 0)])
def test_a_containers_cpu_quota_is_read(cpu_max: str, granted: int | None) -> None:
    assert ahead.quota_cpus(cpu_max) == granted


def test_a_container_limited_to_one_cpu_does_not_fork(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    limit = tmp_path / "cpu.max"
    limit.write_text("100000 100000\n")
    monkeypatch.setattr(ahead, "CPU_MAX", str(limit))
    monkeypatch.setattr(ahead.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3},
                        raising=False)
    assert ahead.cpus() == 1
    limit.write_text("max 100000\n")
    assert ahead.cpus() == 4
    limit.write_text("garbage")
    assert ahead.cpus() == 4


def test_a_full_build_reads_each_file_with_its_rows(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not every file up front (at 100,000 memories ~3 s in the building process alone,
    and ~260 MB of bytes held): when the first rows are written, most files are unread."""
    ws = _store(repo, memex_home)
    build.refresh(ws)
    expected = _dump(ws)
    monkeypatch.setattr(ahead, "forks", lambda count: False)
    monkeypatch.setattr(build, "_CHUNK", 5)
    reads: list[str] = []
    read_bytes = build.store.read_bytes

    def counted(path: str | Path) -> bytes:
        reads.append(str(path))
        return read_bytes(path)

    at_first_write: list[int] = []
    flush = build._flush

    def noted(*args: Any, **kwargs: Any) -> None:
        at_first_write.append(len(reads))
        flush(*args, **kwargs)

    monkeypatch.setattr(build.store, "read_bytes", counted)
    monkeypatch.setattr(build, "_flush", noted)
    build.refresh(ws, full=True)
    files = len(expected["files"])
    assert len(reads) == files  # each file read once
    assert at_first_write[0] <= 5 < files
    assert _dump(ws) == expected


@pytest.mark.parametrize("fork", [False, True])
def test_a_file_gone_before_its_read_is_left_out_not_quarantined(
        repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch, fork: bool) -> None:
    """A file deleted between the walk and its read (by the helper too) is not indexed
    and not reported: the build goes on, and the next refresh finds nothing to do."""
    ws = _store(repo, memex_home)
    build.refresh(ws)
    build.forget_connections()  # no SQLite connection crosses the fork
    folder = shared(repo)
    names = sorted(p.name for p in folder.glob("*.md"))
    first, gone = folder / names[0], folder / names[-1]
    gone_id = gone.name[:-3]
    monkeypatch.setattr(ahead, "forks", lambda count: fork)
    monkeypatch.setattr(ahead, "BLOCK", 7)
    read_bytes = build.store.read_bytes

    def deleting(path: str | Path) -> bytes:
        if str(path) == str(first) and gone.exists():
            gone.unlink()
        return read_bytes(path)

    monkeypatch.setattr(build.store, "read_bytes", deleting)
    report = build.refresh(ws, full=True)
    assert not gone.exists()
    assert report.quarantined  # the store's unreadable files, as ever
    assert all(q.path.name != gone.name for q in report.quarantined)
    got = _dump(ws)
    assert not any(row[1] == str(gone) for row in got["files"])
    assert not any(row[2] == gone_id for row in got["memories"])
    assert not any(row[-1] for row in got["files"] if row[1] == str(first))
    monkeypatch.setattr(build.store, "read_bytes", read_bytes)
    build.forget_connections()
    again = build.refresh(ws)
    assert (again.new, again.changed, again.deleted, again.moved) == (0, 0, 0, 0)
    build.forget_connections()
    build.refresh(ws, full=True)
    assert _dump(ws) == got


def test_ctrl_c_during_a_build_with_its_helper_stops_both_and_leaves_the_index(
        repo: Path, memex_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal's Ctrl-C (SIGINT to the building process and its helper, one process
    group) in the middle of a shared full build: both end, nothing is committed (the
    next refresh finds the index as it was), and no helper is left running."""
    ws, expected = _built_to_share_in_chunks(repo, memex_home, monkeypatch)
    file_rows = build.file_rows

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.02)
        return file_rows(*args, **kwargs)

    monkeypatch.setattr(build, "file_rows", slow)
    helper, started = tmp_path / "helper-pid", tmp_path / "written"
    flush = build._flush

    def noted(*args: Any, **kwargs: Any) -> None:
        flush(*args, **kwargs)
        started.touch()  # some rows are in the (uncommitted) index

    monkeypatch.setattr(build, "_flush", noted)
    fork = os.fork
    pid = fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit
        code = 1
        try:
            os.setpgrp()  # its own group, as a terminal's foreground job
            signal.signal(signal.SIGINT, signal.default_int_handler)

            os.fork = _recording_forks(fork, helper)
            build.refresh(ws, full=True)
            code = 3  # not interrupted
        except KeyboardInterrupt:
            code = 130
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while not (started.exists() and helper.exists()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert helper.exists(), "the build did not start its helper"
    helper_pid = int(helper.read_text())
    os.killpg(pid, signal.SIGINT)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 130
    assert not Path(f"/proc/{helper_pid}").exists() or \
        Path(f"/proc/{helper_pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    monkeypatch.setattr(ahead, "forks", lambda count: False)
    monkeypatch.setattr(build, "file_rows", file_rows)
    monkeypatch.setattr(build, "_flush", flush)
    report = build.refresh(ws)
    assert (report.new, report.changed, report.deleted) == (0, 0, 0)
    assert _dump(ws) == expected


@pytest.mark.parametrize("what", ["link", "fifo"])
@pytest.mark.parametrize("full", [True, False], ids=["full", "incremental"])
def test_a_file_swapped_for_a_link_or_fifo_before_its_read_is_left_out(
        repo: Path, monkeypatch: pytest.MonkeyPatch, full: bool, what: str) -> None:
    """A memory file replaced by a symbolic link or a FIFO between the walk and its
    read (store.read_bytes: InvalidMemory) is left out by a full build (file_rows) and
    by an incremental refresh (_decide's read to hash) alike: one rule. The
    incremental refresh let InvalidMemory out, and the reading command failed."""
    folder = shared(repo)
    keep = memfiles.put(folder, "kept memory about alpha")
    swapped = memfiles.put(folder, "swapped memory about beta")
    ws = homes.workspace()
    build.refresh(ws)
    path = folder / f"{swapped}.md"
    path.write_text(path.read_text() + "\nmore\n")  # changed: the refresh reads it
    read_bytes = store.read_bytes

    def swapping(p: str | Path) -> bytes:
        if str(p) == str(path) and path.is_file() and not path.is_symlink():
            path.unlink()
            if what == "link":
                os.symlink(folder / f"{keep}.md", path)
            else:
                os.mkfifo(path)
        return read_bytes(p)

    monkeypatch.setattr(store, "read_bytes", swapping)
    report = build.refresh(ws, full=full)  # must not raise
    assert report.memories == 1
    with build.open_index(ws, refresh=False) as index:
        paths = {p for (p,) in index.conn.execute("SELECT path FROM files")}
    assert paths == {str(folder / f"{keep}.md")}


def test_a_build_whose_last_file_vanished_ends_its_progress_and_counts_it_not(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last file of a full build gone before its read (file_rows: None): the
    progress still reaches its end (done == total) and the report counts only the
    files indexed. (An incremental refresh reads new files in _decide, to hash them.)"""
    folder = shared(repo)
    memfiles.put(folder, "first memory about alpha")
    ws = homes.workspace()
    build.refresh(ws)
    later = [memfiles.put(folder, f"later memory {i} about beta") for i in range(3)]
    build.forget_connections()
    monkeypatch.setattr(ahead, "forks", lambda count: False)
    real = build.file_rows
    seen: list[str] = []

    def last_gone(path: str, *args: Any) -> build.FileRows | None:
        seen.append(path)
        if len(seen) == 4:  # the build's last file
            os.unlink(path)
        return real(path, *args)

    monkeypatch.setattr(build, "file_rows", last_gone)
    calls: list[tuple[int, int]] = []
    report = build.refresh(ws, full=True, progress=lambda done, total: calls.append(
        (done, total)))
    assert calls and calls[-1][0] == calls[-1][1] == len(seen)
    assert report.memories == 3
    assert report.new == 3  # counted 4 before
    assert len(later) == 3


class _Text(str):
    """A text of a str subclass (what a YAML library may hand back)."""


def test_a_parsed_front_matter_stands_for_front_matter_only_when_it_is_that_mapping(
        repo: Path, memex_home: Path) -> None:
    """listing.front gives the parsed front matter itself only when the memory made of
    it gives back the same mapping (keys, order, values and their types), so the doc,
    listed and summary columns are those of front_matter(); canonical files take it,
    every other shape or value is made again."""
    ws = _store(repo, memex_home)
    cases: list[tuple[dict[str, Any], str]] = []
    for home in store.homes(ws):
        for path in sorted(home.path.glob("*.md")):
            try:
                parsed = frontmatter.parse(path.read_text(encoding="utf-8"))
            except Exception:  # noqa: BLE001 - the unreadable files of the store
                continue
            cases.append((parsed.data, parsed.body))
    canonical = frontmatter.parse(frontmatter.emit(model.Memory(
        id=new_ulid(), scope="project", title="Ship it", body="the body",
        tags=["ci", "deploy"], created_at="2026-10-01T00:00:00Z",
        updated_at="2026-10-01T00:00:00Z")))
    base = canonical.data
    keys = list(base)

    def changed(**values: Any) -> dict[str, Any]:
        return {**base, **values}

    cases += [(base, "the body"), (changed(title=""), "b"), (changed(revision=0), "b"),
              (changed(tags=[1, "a"]), "b"), (changed(tags=[_Text("a")]), "b"),
              (changed(title=_Text("Ship it")), "b"), (changed(tags=[]), "b"),
              (changed(created_at="2026-10-01 00:00:00"), "b"),
              (changed(created_at=datetime.datetime(2026, 10, 1, tzinfo=datetime.UTC)), "b"),
              (changed(revision="2"), "b"), (changed(revision=True), "b"),
              (changed(pinned=True), "b"), (changed(**{"x-owner": "me"}), "b"),
              ({k: base[k] for k in keys if k != "via"}, "b"),
              ({k: base[k] for k in reversed(keys)}, "b"),
              (changed(status_history=[{"at": "2026-10-03T00:00:00Z", "to": "active"}]), "b"),
              ({**{k: base[k] for k in keys[:keys.index("source")]},  # in its place
                "status_history": [{"at": "2026-10-03T00:00:00Z", "to": "active"}],
                **{k: base[k] for k in keys[keys.index("source"):]}}, "b"),
              (changed(repo_id=None), "b"), (changed(language="en", pinned=False), "b")]
    taken = made = 0
    for data, body in cases:
        try:
            memory = model.from_front_matter(dict(data), body)
        except model.InvalidMemory:
            continue
        given = dict(data)
        front, plain = listing.front(given, memory)
        expected = memory.front_matter()
        assert list(front) == list(expected)
        assert [(v, type(v), [type(i) for i in v] if type(v) is list else None)
                for v in front.values()] == [
            (v, type(v), [type(i) for i in v] if type(v) is list else None)
            for v in expected.values()]
        assert listing.stored(front, body, None, plain) == listing.stored(expected, body)
        if plain:
            assert front is given  # the parse itself, not a copy
            taken += 1
        else:
            made += 1
    assert taken > 40 and made > 15
    # a memory given with the parse (a caller's Known) that holds more than the parse
    other = model.from_front_matter(dict(base), "b")
    other.extra = {"x-owner": "me"}
    assert listing.front(dict(base), other) == (other.front_matter(), False)
