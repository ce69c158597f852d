"""A full build's cheaper steps make the same index: the FTS table's hash size (one
segment instead of many, the same rows and scores), the Memory assembled without its
dataclass __init__, and the build's checks on a file's name held as text."""

from __future__ import annotations

import dataclasses
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memex.core import model
from memex.core.errors import InvalidMemory
from memex.index import bodies, build, schema
from memex.search import engine as search
from memex.storage import homes
from tests.helpers import memfiles


def _hash_size(ws: homes.Workspace) -> int | None:
    with build.open_index(ws, refresh=False) as index:
        row = index.conn.execute("SELECT v FROM fts_config WHERE k = 'hashsize'").fetchone()
    return None if row is None else int(row[0])


def _index(ws: homes.Workspace) -> tuple[list[tuple[object, ...]], dict[str, list[str]]]:
    """Every term by document and column, and the ids each query finds, in order."""
    with build.open_index(ws, refresh=False) as index:
        terms = index.conn.execute("SELECT * FROM fts_terms ORDER BY term").fetchall()
    found = {query: [hit.memory.id for hit in search.search(
        ws, search.SearchRequest(query, record_access=False)).hits]
        for query in ("wombat", "burrow grass", "night", "依赖")}
    return terms, found


def test_the_fts_hash_size_is_set_on_new_and_rebuilt_indexes(repo: Path) -> None:
    ws = homes.workspace()
    memfiles.put(repo / ".memex", "a wombat digs")
    build.refresh(ws)
    assert _hash_size(ws) == schema.FTS_HASH_BYTES
    # an index made before the setting (FTS5's default) gets it from a full rebuild
    with build.open_index(ws, refresh=False) as index:
        index.conn.execute("DELETE FROM fts_config WHERE k = 'hashsize'")
    build.forget_connections()
    assert _hash_size(ws) is None
    build.refresh(ws, full=True)
    assert _hash_size(ws) == schema.FTS_HASH_BYTES


def _segments(ws: homes.Workspace) -> int:
    with build.open_index(ws, refresh=False) as index:
        return int(index.conn.execute("SELECT count(*) FROM fts_data").fetchone()[0])


def test_an_index_built_in_one_segment_equals_one_built_in_many(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    for i in range(60):
        memfiles.put(folder, f"wombat {i} digs a burrow at night in grass {i * 7}"
                     + (" 依赖管理" if i % 5 == 0 else "") + " and more" * (i % 9),
                     title=f"Burrow {i}", tags=[f"t{i % 4}"], aliases=[f"night {i}"])
    # A first build of 60 files (too few for the 'optimize' pass): the segments stay
    # as the inserts left them.
    build.refresh(ws)
    one = _segments(ws), _index(ws)
    build.forget_connections()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{build.db_path(ws)}{suffix}").unlink(missing_ok=True)
    # a 1 KB hash, no merges: a segment every few memories, as a 1 MB hash gives at scale
    monkeypatch.setattr(schema, "FTS_SETTINGS",
                        "INSERT INTO fts (fts, rank) VALUES ('hashsize', 1024);\n"
                        "INSERT INTO fts (fts, rank) VALUES ('automerge', 0);\n")
    build.refresh(ws)
    many = _segments(ws), _index(ws)
    assert many[0] > 2 * one[0]
    assert many[1] == one[1]
    assert one[1][1]["wombat"] and one[1][1]["依赖"]


def test_a_full_build_writes_its_postings_once_and_keeps_the_hash_size(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full build holds its postings in memory (schema.FTS_BUILD_HASH_BYTES) where the
    kept hash size would write segments as it goes, for the 'optimize' to merge again;
    the index keeps its own setting, and its rows are those of a build that wrote many."""
    ws = homes.workspace()
    folder = repo / ".memex"
    for i in range(60):
        memfiles.put(folder, f"wombat {i} digs a burrow at night in grass {i * 7}",
                     title=f"Burrow {i}", tags=[f"t{i % 4}"])
    # a 1 KB kept hash: a segment every few memories
    monkeypatch.setattr(schema, "FTS_SETTINGS",
                        "INSERT INTO fts (fts, rank) VALUES ('hashsize', 1024);\n")
    build.refresh(ws)
    many = _index(ws)
    made: list[sqlite3.Connection] = []
    connect = build._connect
    monkeypatch.setattr(build, "_connect", lambda target: made.append(connect(target))
                        or made[-1])
    written: list[int] = []

    def probe(done: int, total: int) -> None:  # the build's own connection, mid-build
        written.append(made[-1].execute("SELECT count(*) FROM fts_data").fetchone()[0])

    build.forget_connections()
    build.refresh(ws, full=True, progress=probe)
    assert written and written[-1] <= 2  # the structure and averages records only
    assert _hash_size(ws) == 1024
    assert _index(ws) == many
    # the kept setting writes segments again: a refresh of many files after it
    _dawn(folder)
    build.forget_connections()
    before = _segments(ws)
    build.forget_connections()
    written.clear()
    build.refresh(ws, progress=probe)
    assert written[-1] > before


def _dawn(folder: Path) -> None:
    for i in range(30):
        memfiles.put(folder, f"another wombat {i} at dawn with more words {i * 3} {i * 7} "
                     f"{i * 11}", title=f"Dawn {i}")


def test_a_full_build_that_fails_leaves_the_kept_hash_size_in_force(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full build stopped midway rolls back its larger hash size with the rest, also
    the one FTS5 holds in the connection's memory (which a rollback alone leaves in
    force until the table's structure is next read): the same connection's next refresh
    writes segments at the kept size again."""
    ws = homes.workspace()
    folder = repo / ".memex"
    for i in range(40):
        memfiles.put(folder, f"wombat {i} digs a burrow at night", title=f"Burrow {i}")
    monkeypatch.setattr(schema, "FTS_SETTINGS",
                        "INSERT INTO fts (fts, rank) VALUES ('hashsize', 1024);\n")
    build.refresh(ws)
    made: list[sqlite3.Connection] = []
    connect = build._connect
    monkeypatch.setattr(build, "_connect", lambda target: made.append(connect(target))
                        or made[-1])
    build.forget_connections()
    rows = build.file_rows
    calls: list[str] = []

    def failing(path: str, *args: object) -> object:
        calls.append(path)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return rows(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "file_rows", failing)
    with pytest.raises(KeyboardInterrupt):
        build.refresh(ws, full=True)
    monkeypatch.setattr(build, "file_rows", rows)
    assert len(made) == 1 and _hash_size(ws) == 1024
    _dawn(folder)
    count = "SELECT count(*) FROM fts_data"
    before = made[0].execute(count).fetchone()[0]
    written: list[int] = []
    build.refresh(ws, progress=lambda done, total: written.append(
        made[0].execute(count).fetchone()[0]))
    assert len(made) == 1 and written[-1] > before


def _varied() -> list[dict[str, object]]:
    return [
        {"id": "01J0000000000000000000000A", "scope": "project"},
        {"id": "01J0000000000000000000000B", "scope": "org", "tags": ["a", "b"],
         "aliases": ["other words"], "related": ["01J0000000000000000000000A"],
         "status_history": [{"at": "2026-01-01T00:00:00Z", "to": "active"}],
         "revision": 3, "pinned": True, "title": "T", "created_at": "2026-01-01T00:00:00Z"},
    ]


@pytest.mark.parametrize("values", _varied())
def test_assemble_makes_what_the_dataclass_makes(values: dict[str, object]) -> None:
    extra = {"x-custom": "kept"}
    made = model.Memory(body="b", extra=dict(extra), **values)  # type: ignore[arg-type]
    fast = model.assemble("b", dict(extra), dict(values))
    assert fast == made
    assert list(vars(fast)) == list(vars(made))  # the same attribute order
    # each memory has its own lists: filling one leaves the next one's empty
    other = model.assemble("c", {}, {"id": "01J0000000000000000000000C", "scope": "project"})
    for f in dataclasses.fields(model.Memory):
        value = getattr(other, f.name)
        if isinstance(value, (list, dict)):
            value.append("x") if isinstance(value, list) else value.update(x=1)
    again = model.assemble("d", {}, {"id": "01J0000000000000000000000D", "scope": "project"})
    assert again == model.Memory(id="01J0000000000000000000000D", scope="project", body="d")


def test_validate_names_the_field_of_a_value_not_allowed() -> None:
    memory = model.Memory(id="01J0000000000000000000000A", scope="project")
    memory.type = "banana"  # type: ignore[assignment]
    with pytest.raises(InvalidMemory, match="unknown type 'banana'"):
        model.validate(memory)
    memory.type = ["knowledge"]  # type: ignore[assignment]
    with pytest.raises(InvalidMemory, match="unknown type"):
        model.validate(memory)
    assert model.check_enum("scope", "org") == "org"
    with pytest.raises(InvalidMemory, match="reserved"):
        model.check_enum("scope", "team")


def test_a_misnamed_or_misplaced_file_is_quarantined_with_the_same_reason(
        repo: Path) -> None:
    ws = homes.workspace()
    folder = repo / ".memex"
    mid = memfiles.put(folder, "named wrong")
    (folder / f"{mid}.md").rename(folder / "01J0000000000000000000000Z.md")
    org = memfiles.put(folder, "an org memory in the repo folder", scope="org")
    report = build.refresh(ws, full=True)
    reasons = {q.path.name: q.reason for q in report.quarantined}
    assert reasons["01J0000000000000000000000Z.md"] == (
        f"file name 01J0000000000000000000000Z.md does not match its id {mid}")
    assert reasons[f"{org}.md"].startswith("scope 'org' does not belong in the repo folder")


def test_bodies_packed_by_either_zlib_codec_read_back_by_the_other(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored bodies are the zlib format whichever codec wrote them (ISA-L's where
    the `isal` package imports, else the standard library's): an index made with one is
    read by the other, a body unchanged, and both make the same search results."""
    import zlib

    from isal import isal_zlib

    ws = homes.workspace()
    folder = repo / ".memex"
    body = "wombat burrow grass night 依赖 " + " ".join(f"w{i}" for i in range(200))
    memfiles.put(folder, body)
    memfiles.put(folder, "a short wombat note")  # under PACK_MIN: stored as text
    assert bodies._ZLIB is isal_zlib
    for writer, reader in ((isal_zlib, zlib), (zlib, isal_zlib)):
        monkeypatch.setattr(bodies, "_ZLIB", writer)
        build.refresh(ws, full=True)
        before = _index(ws)
        monkeypatch.setattr(bodies, "_ZLIB", reader)
        with build.open_index(ws, refresh=False) as index:
            stored = [bodies.body_text(z) for (z,) in index.conn.execute(
                "SELECT zbody FROM memories ORDER BY length(zbody) DESC")]
        assert stored[0] == body and stored[1] == "a short wombat note"
        assert _index(ws) == before


def test_without_isal_the_standard_librarys_zlib_packs_the_bodies() -> None:
    """Where the `isal` package does not import (no wheel for the platform), the index
    falls back to the standard library's zlib and packs the same format."""
    script = ("import sys, zlib; sys.modules['isal'] = None\n"
              "from memex.index import bodies, build\n"
              "assert bodies._ZLIB is zlib\n"
              "packed = bodies.pack_body('wombat ' * 100)\n"
              "assert isinstance(packed, bytes) and zlib.decompress(packed) == b'wombat ' * 100\n"
              "print('ok')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.stdout.strip() == "ok", done.stderr
