"""The index's lookups for `show` (who links here), `context` (the instructions) and a
write's chain repair (who supersedes this id) are indexed (schema 6: the links table,
memories.role, memories_supersedes): they must find what the scans they replace found
(copied below as they were), on a varied store and after edits and deletes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from memex.core import frontmatter, model
from memex.index import build, views
from memex.storage import homes
from memex.workflows import relations
from tests.test_context import approved_instruction, personal, put, shared

_ROW = views._ROW


def _old_linking(conn: sqlite3.Connection, memory_id: str) -> list[Any]:
    return conn.execute(
        f"SELECT {_ROW} FROM memories NOT INDEXED WHERE instr(doc, ?) > 0 AND shadowed = 0 "
        "ORDER BY rowid", (memory_id,)).fetchall()


def _old_mentioning(conn: sqlite3.Connection, scopes: list[str]) -> list[Any]:
    return conn.execute(
        f"SELECT {_ROW} FROM memories NOT INDEXED WHERE doc LIKE ? AND {views._in(scopes)} "
        f"AND shadowed = 0 AND {views._LIVE} ORDER BY updated_at DESC, id DESC",
        ("%instruction%", *scopes)).fetchall()


def _old_successors(conn: sqlite3.Connection, memory_id: str) -> list[str]:
    return [i for (i,) in conn.execute(
        "SELECT id FROM memories NOT INDEXED WHERE supersedes = ? AND shadowed = 0 "
        "AND id != ?", (memory_id, memory_id))]


def _linked_in(rows: list[Any], memory_id: str) -> list[tuple[str, str]]:
    """What relations.links keeps of linking's rows: (other id, relation) pairs."""
    out = []
    for row in rows:
        other = views._loaded(row)
        if other.id == memory_id:
            continue
        out += [(other.id, r) for r in model.RELATIONS if memory_id in getattr(other.memory, r)]
    return out


def _varied(repo: Path, memex_home: Path) -> list[model.Memory]:
    a = put(shared(repo), "project", "the deploy runs from main", "2026-10-01T00:00:00Z")
    b = put(shared(repo), "project", "deploys need a green build", "2026-10-02T00:00:00Z",
            related=[a.id], extends=[a.id])
    c = put(shared(repo), "project", "deploys run from release", "2026-10-03T00:00:00Z",
            supersedes=a.id, contradicts=[a.id, b.id])
    d = put(shared(repo), "project", "an instruction: always run the tests",
            "2026-10-04T00:00:00Z", **approved_instruction())
    e = put(shared(repo), "project", "a draft instruction", "2026-10-05T00:00:00Z",
            role="instruction", instruction_state="draft")
    f = put(shared(repo), "project", "the word instruction in a knowledge memory",
            "2026-10-06T00:00:00Z", related=[d.id], tags=["instruction"])
    g = put(shared(repo), "project", "an archived instruction", "2026-10-07T00:00:00Z",
            status="archived", retired_at="2026-10-08T00:00:00Z", **approved_instruction())
    h = put(personal(memex_home), "personal", "my instruction", "2026-10-09T00:00:00Z",
            **approved_instruction(), related=[a.id])
    i = put(personal(memex_home), "personal", "my note naming " + a.id,
            "2026-10-10T00:00:00Z", supersedes=h.id)
    # a second copy of c's id in the outbox: the index keeps both rows, reads the first
    copy = c.copy(related=[d.id], updated_at="2026-10-11T00:00:00Z")
    outbox = homes.workspace().outbox_dir
    outbox.mkdir(parents=True, exist_ok=True)
    (outbox / f"{c.id}.md").write_text(frontmatter.emit(copy), encoding="utf-8")
    return [a, b, c, d, e, f, g, h, i]


def _compare(memories: list[model.Memory]) -> None:
    ws = homes.workspace()
    scope_sets = (["project", "org"], ["personal"], ["project", "org", "personal"], ["org"])
    for scopes in scope_sets:
        new, _ = views.instructions(ws, scopes)
        with build.open_index(ws, refresh=False) as index:
            old = [views._loaded(r) for r in _old_mentioning(index.conn, scopes)]
        assert [x.id for x in new] == [x.id for x in old if x.memory.role == "instruction"]
    for memory in memories:
        with build.open_index(ws, refresh=False) as index:
            old_rows = _old_linking(index.conn, memory.id)
            old_successors = _old_successors(index.conn, memory.id)
        rows = [(0, str(x.path), x.home.kind, json.dumps(x.memory.front_matter()),
                 x.memory.body, None, None, None) for x in views.linking(ws, memory.id)]
        assert _linked_in(rows, memory.id) == _linked_in(old_rows, memory.id)
        assert views.successor_ids(ws, memory.id) == old_successors
        found = relations.links(ws, memory)
        assert [(x.other, x.relation) for x in found if x.direction == "in"] == \
            _linked_in(old_rows, memory.id)


def test_indexed_lookups_find_what_the_scans_found(repo: Path, memex_home: Path) -> None:
    memories = _varied(repo, memex_home)
    a, b, c, d, e, f, g, h, i = memories
    ws = homes.workspace()
    views.opened(ws)  # refresh
    _compare(memories)
    # the store says what the comparison needs: links in, instructions, a successor
    assert {x.other for x in relations.links(ws, a) if x.direction == "in"} == {b.id, c.id, h.id}
    assert [x.id for x in views.instructions(ws, ["project", "org"])[0]] == [e.id, d.id]
    assert views.successor_ids(ws, a.id) == [c.id]
    # an edit drops a link and adds one; a delete removes a file's links
    put(shared(repo), "project", "deploys need a green build", "2026-10-12T00:00:00Z",
        id=b.id, related=[d.id])
    (shared(repo) / f"{f.id}.md").unlink()
    (personal(memex_home) / f"{h.id}.md").write_text(frontmatter.emit(
        h.copy(role="knowledge", instruction_state=None, related=[])), encoding="utf-8")
    views.opened(ws)
    _compare(memories)
    assert {x.other for x in relations.links(ws, a) if x.direction == "in"} == {c.id}
    assert {x.other for x in relations.links(ws, d) if x.direction == "in"} == {b.id}
    with build.open_index(ws, refresh=False) as index:
        assert index.conn.execute("SELECT count(*) FROM links WHERE src NOT IN "
                                  "(SELECT rowid FROM memories)").fetchone() == (0,)


def test_newest_rows_by_pages_are_the_rows_of_one_query(repo: Path, memex_home: Path) -> None:
    """newest_rows sorts the first page's keys alone, then the rest's: the same rows
    in the same order as one page holding them all."""
    _varied(repo, memex_home)
    ws = homes.workspace()
    views.opened(ws)
    for scopes in (None, ["project", "org"], ["personal"]):
        for live_only in (True, False):
            for tiered in (True, False):
                whole = list(views.newest_rows(ws, scopes, live_only, tiered, page=1000))
                assert whole
                for page in (1, 2, 3):
                    assert list(views.newest_rows(ws, scopes, live_only, tiered, page)) == whole


def test_a_refresh_between_pages_loses_no_live_row(repo: Path, memex_home: Path) -> None:
    """newest_rows reads the rest after the first page in a second query: a memory a
    refresh moves to the top meanwhile (edited) is still listed, once."""
    made = [put(shared(repo), "project", f"note {n}", f"2026-10-{10 + n:02d}T00:00:00Z")
            for n in range(6)]
    ws = homes.workspace()
    views.opened(ws)
    rows = views.newest_rows(ws, None, page=2)
    seen = [next(rows)[0], next(rows)[0]]  # the first page: notes 5 and 4
    oldest = made[0]
    put(shared(repo), "project", "note 0, edited", "2026-11-30T00:00:00Z", id=oldest.id)
    views.opened(ws)  # another process's refresh between the pages
    seen += [row[0] for row in rows]
    with build.open_index(ws, refresh=False) as index:
        ids = [index.conn.execute("SELECT id FROM memories WHERE rowid = ?", (rowid,)
                                  ).fetchone()[0] for rowid in seen]
    assert sorted(ids) == sorted(m.id for m in made)
