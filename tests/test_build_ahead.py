"""A full build's rows made partly by a forked helper (index.ahead) and the listed column
made from the parsed front matter (listing.stored's FRONT) must leave the index a
one-process build with the previous code leaves: every table, every FTS posting, byte
for byte, over a store of canonical and hand-written files (quoted strings, flow lists,
comments, another key order) and unreadable ones; and a helper that dies or fails
costs only time."""

from __future__ import annotations

import datetime
import os
import random
import signal
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import jsonout, model
from memex.core.ulid import new_ulid
from memex.index import ahead, bodies, build, listing
from memex.storage import homes, iostep
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


def _previous_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """memory_row as it was: the listed column from the doc's JSON decoded again."""
    stored = listing.stored
    monkeypatch.setattr(listing, "stored", lambda doc, body, front=None: stored(doc, body))


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
    with monkeypatch.context() as before:
        _previous_listed(before)
        build.refresh(ws, full=True)
        expected = _dump(ws)
    assert len(expected["memories"]) > 60 and expected["links"] and expected["guards"]
    assert any(row[-1] for row in expected["files"])  # quarantined files are in it
    build.refresh(ws, full=True)
    assert _dump(ws) == expected  # the listed column from the parsed front matter
    monkeypatch.setattr(ahead, "forks", lambda count: True)
    monkeypatch.setattr(ahead, "BLOCK", 7)  # many blocks each way
    build.refresh(ws, full=True)
    assert children  # the helper did its share
    assert _dump(ws) == expected


def test_the_listed_column_is_what_the_doc_gives(
        repo: Path, memex_home: Path) -> None:
    """Each row's listed column, made from the parsed front matter, is what the
    previous code made from the row's own doc."""
    ws = _store(repo, memex_home)
    build.refresh(ws, full=True)
    with build.open_index(ws, refresh=False) as index:
        rows = index.conn.execute("SELECT doc, zbody, listed FROM memories").fetchall()
    assert len(rows) > 60
    for doc, zbody, listed in rows:
        assert listed == listing.stored(doc, bodies.body_text(zbody))


_KEYS = st.one_of(st.text(max_size=8), st.sampled_from(["title", "tags", "id", "body"]),
                  st.integers(-3, 3), st.booleans())
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
              st.datetimes(min_value=datetime.datetime(2000, 1, 1)),
              st.dates(min_value=datetime.date(2000, 1, 1))),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(front=st.dictionaries(_KEYS, _VALUES, max_size=6),
       title=st.one_of(st.text(max_size=30), st.tuples(st.text(max_size=3)), st.integers()),
       body=st.text(max_size=300))
def test_the_column_from_the_mapping_is_the_column_from_its_json(
        front: dict[Any, Any], title: object, body: str) -> None:
    """Whatever the mapping holds, the listed column made from it is the one made from
    its JSON (build.memory_row's doc): used as it is only when decoding the JSON would
    give it back."""
    front = {"title": title, **front}
    try:
        doc = jsonout.compact(front)
    except (TypeError, ValueError):  # keys JSON cannot write: no such doc
        return
    assert listing.plain(doc, body, front) == listing.plain(doc, body)
    assert listing.stored(doc, body, front) == listing.stored(doc, body)


def _element_of_every_field(doc: str, body: str) -> bytes | None:
    """The listed column's text as plain wrote it before it wrote the missing fields'
    items once per set of keys: the element of every field, whole, then the summary."""
    data = listing.stored_fields(doc)
    if not data.keys().isdisjoint(listing.AFTER):
        return None
    summary = model.summarise(str(data["title"]), body)
    try:
        return (jsonout.element(data)[:-len("\n  }")] + "\x00" + jsonout.string(summary)
                ).encode("utf-8")
    except UnicodeEncodeError:
        return None


@settings(max_examples=300, deadline=None)
@given(front=st.dictionaries(_KEYS, _VALUES, max_size=6),
       title=st.one_of(st.none(), st.text(max_size=30), st.integers()),
       body=st.text(max_size=300))
def test_the_column_is_the_element_of_every_field(
        front: dict[Any, Any], title: object, body: str) -> None:
    if title is not None:
        front = {"title": title, **front}
    try:
        doc = jsonout.compact(front)
    except (TypeError, ValueError):  # keys JSON cannot write: no such doc
        return
    expected = _element_of_every_field(doc, body)
    assert listing.plain(doc, body) == expected
    assert listing.plain(doc, body, front) == expected


def test_the_column_of_each_row_is_the_element_of_every_field(
        repo: Path, memex_home: Path) -> None:
    ws = _store(repo, memex_home)
    build.refresh(ws, full=True)
    with build.open_index(ws, refresh=False) as index:
        rows = index.conn.execute("SELECT doc, zbody FROM memories").fetchall()
    assert len(rows) > 60
    for doc, zbody in rows:
        body = bodies.body_text(zbody)
        assert listing.plain(doc, body) == _element_of_every_field(doc, body)


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
    ws = _store(repo, memex_home)
    build.refresh(ws, full=True)
    expected = _dump(ws)
    build.forget_connections()  # no SQLite connection crosses the fork
    monkeypatch.setattr(ahead, "forks", lambda count: True)
    monkeypatch.setattr(ahead, "BLOCK", 3)
    monkeypatch.setattr(build, "_CHUNK", 5)
    helper = tmp_path / "helper-pid"
    fork = os.fork
    pid = fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit or a SIGKILL
        try:
            def recorded() -> int:
                child = fork()
                if child:
                    helper.write_text(str(child))
                return child

            os.fork = recorded
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
