"""Memories as reads see them, straight from the refreshed index (no file parsing).

`list`, `context`, capture's duplicate check and the like need every eligible
memory; parsing 10,000 files per command would cost seconds, the index already
holds each memory's front matter and body as they were when last indexed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import os
import sqlite3
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from memex.core import model
from memex.index import bodies, build, tokens
from memex.storage import store
from memex.storage.homes import Workspace


def as_read(doc: str, zbody: str | bytes, eff_status: str | None, eff_retired: str | None,
            eff_by: str | None) -> model.Memory:
    """An index row's memory (its doc and stored body, bodies.pack_body) with what chain
    completion changed applied (eff_*)."""
    memory = build.stored_memory(json.loads(doc), bodies.body_text(zbody))
    if eff_status is not None:
        memory.status = cast(model.Status, eff_status)  # one of the row's own statuses
    if eff_retired is not None:
        memory.retired_at = eff_retired
    if eff_by is not None:
        memory.superseded_by = eff_by
    return memory


@dataclasses.dataclass
class Snapshot:
    """Every indexed memory as reads see it, with what was skipped or warned."""

    items: list[store.Loaded]
    quarantined: list[store.Quarantined]
    warnings: list[str]


def snapshot(ws: Workspace) -> Snapshot:
    """Every indexed memory (first copy of a duplicated id), chains completed."""
    with build.open_index(ws) as index:
        rows = index.conn.execute(
            "SELECT path, home, doc, zbody, eff_status, eff_retired_at, eff_superseded_by "
            "FROM memories WHERE shadowed = 0").fetchall()
        warnings = list(index.report.warnings) + build.read_warnings(index.conn)
        quarantined = list(index.report.quarantined)
    items: list[store.Loaded] = []
    for path, kind, *stored in rows:
        memory = as_read(*stored)
        file_path = Path(path)
        items.append(store.Loaded(memory, file_path, store.Home(kind, file_path.parent)))
    return Snapshot(items, quarantined, warnings)


def completed(ws: Workspace, memory_id: str) -> tuple[model.Memory | None, list[str]]:
    """The indexed memory `memory_id` as reads see it (chain completed), and the chain
    warnings about it; (None, []) when the index does not hold it."""
    with build.open_index(ws) as index:
        row = index.conn.execute(
            "SELECT doc, zbody, eff_status, eff_retired_at, eff_superseded_by FROM memories "
            "WHERE id = ? AND shadowed = 0", (memory_id,)).fetchone()
        warnings = [m for (m,) in index.conn.execute(
            "SELECT message FROM chain_warnings WHERE id = ? ORDER BY rowid", (memory_id,))]
    return (None, []) if row is None else (as_read(*row), warnings)


def successor_ids(ws: Workspace, memory_id: str) -> list[str]:
    """Ids of the indexed memories whose `supersedes` names `memory_id`."""
    with build.open_index(ws) as index:
        return [i for (i,) in index.conn.execute(
            "SELECT id FROM memories INDEXED BY memories_supersedes "
            "WHERE supersedes = ? AND shadowed = 0 AND id != ?",
            (memory_id, memory_id))]


_LIVE = "coalesce(eff_status, status) IN ('active', 'deprecated')"
_ROW = "rowid, path, home, doc, zbody, eff_status, eff_retired_at, eff_superseded_by"


# Words of a capture's text its exact-text lookup asks the FTS index for (all of
# them: any memory with the same text holds every one). With 4, a 3 KB text of the
# bench's vocabulary matched ~2,000 of 100,000 memories, each unpacked and compared
# (~40 ms); with 8 it matches the copies alone, and the FTS query costs the same.
SAME_TEXT_TERMS = 8


@dataclasses.dataclass
class Neighbours:
    """What a capture compares a new memory with, found through the index's own FTS
    lookups rather than by materialising every memory."""

    same: store.Loaded | None  # a live memory of the scope with this text (whitespace aside)
    same_title: list[str]  # live memories of the scope whose title is this one, case aside
    gated: list[Gated]  # live memories sharing a tag or with paths (conflict gate)
    indexed: set[str]  # the indexed paths in the target home's folder


def _terms(text: str, most: int) -> list[str] | None:
    """Up to MOST of the longest distinct words of TEXT as the index tokenised them (CJK
    runs as bigrams), each an FTS5 string; None when it has no word to look up."""
    segmented = tokens.segment(text)
    words = tokens._WORD.findall(segmented)
    if any(unicodedata.category(c) in _GLUE for c in segmented):
        words = _whole_words(segmented)
    found = dict.fromkeys(w.lower() for w in words)
    if not found:
        return None
    return [f'"{w}"' for w in sorted(found, key=len, reverse=True)[:most]]


# Characters the index's tokenizer (unicode61) keeps inside a token while Python's
# word pattern splits at them: a combining mark ("na\u0308ive" is one token, "naive",
# to the index, and two words, "na" and "ive", to Python) and a private-use character.
_GLUE = frozenset({"Mn", "Co"})


def _whole_words(segmented: str) -> list[str]:
    """The words of SEGMENTED that the index holds as tokens of their own: not those
    next to a character of _GLUE (the index has them only inside a longer token)."""
    out = []
    for match in tokens._WORD.finditer(segmented):
        start, end = match.span()
        if (start == 0 or unicodedata.category(segmented[start - 1]) not in _GLUE) and (
                end == len(segmented) or unicodedata.category(segmented[end]) not in _GLUE):
            out.append(match.group())
    return out


def _loaded(row: tuple[Any, ...]) -> store.Loaded:
    _, path, kind, *stored = row
    file_path = Path(path)
    return store.Loaded(as_read(*stored), file_path, store.Home(kind, file_path.parent))


def _matching(conn: sqlite3.Connection, column: str, terms: list[str] | None,
              where: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """Rows passing WHERE whose FTS COLUMN holds every one of TERMS (a superset of the
    rows a caller's exact test accepts); every row passing WHERE when TERMS is None."""
    if terms is None:
        return conn.execute(f"SELECT {_ROW} FROM memories WHERE {where} ORDER BY rowid",
                            args).fetchall()
    match = f"{column} : ({' AND '.join(terms)})"
    # NOT INDEXED: the FTS hits are looked up by rowid. With an index on WHERE's columns
    # (scope) SQLite scanned every row of the scope and probed the hits (at 100,000
    # memories ~45 ms a lookup instead of ~0.3).
    return conn.execute(
        f"SELECT {_ROW} FROM memories NOT INDEXED WHERE {where} AND rowid IN "
        "(SELECT rowid FROM fts WHERE fts MATCH ?) ORDER BY rowid", (*args, match)).fetchall()


def neighbours(ws: Workspace, scope: str, body: str, title: str, tags: list[str],
               paths: list[str], folder: Path, me: str = "", version: str = ""
               ) -> Neighbours:
    """Capture's candidates in one open of the index. `same` and `same_title` are
    exact (the FTS lookup only narrows); `gated` holds every live memory that may pass
    conflicts.may_meet with TAGS and PATHS (the check itself is the caller's), with
    what pair_cache keeps of them at VERSION; ME: the new memory's id."""
    content = model.normalised_text(body)
    live_in_scope = f"shadowed = 0 AND scope = ? AND {_LIVE}"
    with build.open_index(ws) as index:
        conn = index.conn
        same = None
        for row in _matching(conn, "body", _terms(body, SAME_TEXT_TERMS), live_in_scope,
                             (scope,)):
            if model.normalised_text(bodies.body_text(row[4])) == content:
                same = _loaded(row)
                break
        same_title = []
        if title:
            folded = title.casefold()
            for row in _matching(conn, "title", _terms(title, 4), live_in_scope, (scope,)):
                memory = as_read(*row[3:])
                if memory.title.casefold() == folded:
                    same_title.append(memory.id)
        gated = _gated_rows(conn, _gated(conn, tags, paths), me, version)
        prefix = str(folder) + os.sep
        indexed = {p for (p,) in conn.execute(
            "SELECT path FROM memories WHERE shadowed = 0 AND path >= ? AND path < ?",
            (prefix, prefix[:-1] + chr(ord(os.sep) + 1)))}
    return Neighbours(same, same_title, gated, indexed)


def holding(conn: sqlite3.Connection, scope: str, words: Sequence[str], at_least: int
            ) -> Iterator[str]:
    """The bodies of the memories of SCOPE whose FTS body column holds at least AT_LEAST
    of WORDS (each one index token), any status: each word's matches read once (no
    ranking), counted per memory."""
    if not words:
        return
    each = " UNION ALL ".join(["SELECT rowid FROM fts WHERE fts MATCH ?"] * len(words))
    # NOT INDEXED: as _matching's (by scope, SQLite probed the counts per row: +17 ms)
    for (zbody,) in conn.execute(
            f"SELECT zbody FROM memories NOT INDEXED WHERE shadowed = 0 AND scope = ? "
            "AND rowid IN "
            f"(SELECT rowid FROM ({each}) GROUP BY rowid HAVING count(*) >= ?) "
            "ORDER BY rowid", (scope, *(f'body : "{w}"' for w in words), at_least)):
        yield bodies.body_text(zbody)


def _gated(conn: sqlite3.Connection, tags: list[str], paths: list[str]) -> list[int]:
    """The rowids of the live memories sharing one of TAGS (FTS on the tags column, a
    superset of exact sharing) or, when PATHS is not empty, holding paths of their own;
    in index order."""
    live = f"shadowed = 0 AND {_LIVE}"
    if any(_terms(tag, 64) is None for tag in tags):  # a tag with no word: look at all
        return [r for (r,) in conn.execute(f"SELECT rowid FROM memories WHERE {live} "
                                           "ORDER BY rowid")]
    phrases = [f'"{tokens.segment(tag).replace(chr(34), chr(34) * 2)}"' for tag in tags]
    found: set[int] = set()
    if phrases:
        found.update(r for (r,) in conn.execute(
            f"SELECT rowid FROM memories WHERE {live} AND rowid IN (SELECT rowid FROM "
            "fts WHERE fts MATCH ?)", (f"tags : ({' OR '.join(phrases)})",)))
    if paths:
        found.update(r for (r,) in conn.execute(
            f"SELECT rowid FROM memories WHERE {live} AND paths != '[]'"))
    return sorted(found)


@dataclasses.dataclass
class Gated:
    """A live memory that may pass the conflict gate, as capture's check reads it: its
    gate fields, its title and stored body, what the index kept for the check (None:
    nothing that still holds: pair_cache's hash or version differs) and, when its
    relations name the new memory, its memory."""

    rowid: int
    id: str
    doc: str  # the row's front matter as JSON (its title read only when asked: text)
    zbody: str | bytes
    tags: list[str]
    paths: list[str]
    hash: str
    keys: str | None  # as conflicts.encode_keys made them
    feats: str | None  # as conflicts.encode_features made them
    names_me: model.Memory | None
    scope: str = ""
    _text: tuple[str, str] | None = dataclasses.field(default=None, repr=False, compare=False)

    def text(self) -> tuple[str, str]:
        """(title, body): what the check reads of a memory it compares or makes keys of,
        made on the first ask (json_extract of the title in the rows' query cost ~20 us
        a row, ~20 ms for the thousand rows a bench tag gates; about half are compared)."""
        if self._text is None:
            title = json.loads(self.doc).get("title")
            self._text = ("" if title is None else title, bodies.body_text(self.zbody))
        return self._text


def _gated_rows(conn: sqlite3.Connection, rowids: list[int], me: str, version: str
                ) -> list[Gated]:
    """Gated of ROWIDS (in their order); ME: the new memory's id; VERSION: what
    pair_cache rows must hold to count (conflicts.cache_version)."""
    out: dict[int, Gated] = {}
    for start in range(0, len(rowids), 500):
        chunk = rowids[start:start + 500]
        for (rowid, mid, doc, zbody, tags, paths, hash_, keys, feats, names,
             eff_status, eff_retired, eff_by, scope) in conn.execute(
                "SELECT m.rowid, m.id, m.doc, m.zbody, "
                "m.tags, m.paths, f.hash, c.keys, c.feats, "
                "EXISTS (SELECT 1 FROM links l WHERE l.src = m.rowid AND l.dst = ?1), "
                "m.eff_status, m.eff_retired_at, "
                "m.eff_superseded_by, m.scope FROM memories m JOIN files f ON f.path = m.path "
                "LEFT JOIN pair_cache c ON c.rowid = m.rowid AND c.hash = f.hash "
                "AND c.version = ?2 AND f.hash != '' "
                f"WHERE m.rowid IN ({', '.join(f'?{n + 3}' for n in range(len(chunk)))})",
                (me, version, *chunk)):
            named = as_read(doc, zbody, eff_status, eff_retired, eff_by) if names else None
            out[rowid] = Gated(rowid, mid, doc, zbody, json.loads(tags), json.loads(paths),
                               hash_, None if keys is None else bodies.body_text(keys),
                               None if feats is None else bodies.body_text(feats), named,
                               scope)
    return [out[r] for r in rowids if r in out]


def keep_pair_cache(ws: Workspace, rows: list[tuple[int, str, str, str | None]],
                    version: str) -> None:
    """Keep what capture's check made of memories ((rowid, file hash, keys, features))
    in pair_cache, stored as bodies are (bodies.pack_body), if the index is free now
    (a hint: skipped, never waited for) and the row is still the one read."""
    if not rows or not version:
        return
    with build.open_index(ws, refresh=False) as index:
        build.write_many_if_free(
            # only for a row still there with that file (a write since the read may
            # have removed it: nothing would remove the kept row then)
            index.conn, "INSERT OR REPLACE INTO pair_cache (rowid, hash, version, keys, feats) "
            "SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM memories m JOIN files f "
            "ON f.path = m.path WHERE m.rowid = ?1 AND f.hash = ?2)",
            [(rowid, hash_, version, bodies.pack_body(keys),
              None if feats is None else bodies.pack_body(feats))
             for rowid, hash_, keys, feats in rows if hash_])


def _in(scopes: Sequence[str]) -> str:
    return f"scope IN ({', '.join('?' * len(scopes))})"


def instructions(ws: Workspace, scopes: Sequence[str]) -> tuple[list[store.Loaded], int]:
    """Refresh the index; then the live memories of SCOPES with role: instruction
    (rule 1's first test; the rest is the caller's), newest first, and how many files
    are quarantined. An indexed lookup: no row without the role is read."""
    with build.open_index(ws) as index:
        rows = index.conn.execute(
            f"SELECT {_ROW} FROM memories INDEXED BY memories_instructions "
            f"WHERE role = 'instruction' AND {_in(scopes)} AND shadowed = 0 AND {_LIVE} "
            "ORDER BY updated_at DESC, id DESC", tuple(scopes)).fetchall()
        quarantined = len(index.report.quarantined)
    return [_loaded(row) for row in rows], quarantined


def opened(ws: Workspace) -> tuple[list[store.Quarantined], list[str]]:
    """Refresh the index; what it quarantined and the warnings a read repeats."""
    with build.open_index(ws) as index:
        warnings = list(index.report.warnings) + build.read_warnings(index.conn)
        return list(index.report.quarantined), warnings


_TIER = ("CASE WHEN review_state IN ('approved', 'published') THEN 0 "
         "WHEN review_state = 'proposed' THEN 1 ELSE 2 END")


def newest(ws: Workspace, scopes: Sequence[str] | None, live_only: bool = True,
           tiered: bool = False, page: int = 64) -> Iterator[store.Loaded]:
    """The memories of SCOPES (None: all; LIVE_ONLY: live ones), most recently updated
    first (id last to first on a tie), from the index (not refreshed here). One query
    orders the rowids; the rows are read a page at a time as iterated, so a caller that
    needs a dozen reads one page and one that streams them all holds one page.
    TIERED: reviewed first, then proposed, then the rest (context.tier), newest first
    within each."""
    for row in newest_rows(ws, scopes, live_only, tiered, page):
        yield _loaded(row)


def newest_rows(ws: Workspace, scopes: Sequence[str] | None, live_only: bool = True,
                tiered: bool = False, page: int = 64, columns: str = _ROW
                ) -> Iterator[tuple[Any, ...]]:
    """`newest`'s rows as stored, no Memory made: their COLUMNS (by default (rowid,
    path, home, doc, body, eff_status, eff_retired_at, eff_superseded_by)), the rows of
    `newest_pages` one by one."""
    for rows in newest_pages(ws, scopes, live_only, tiered, page, columns):
        yield from rows


def read_snapshot(ws: Workspace) -> sqlite3.Connection | None:
    """A connection of the caller's own (to close) to the index file (not refreshed
    here), in a read transaction already started: every read on it sees the index as
    it was now, whatever other processes write meanwhile (WAL: writers go on; the
    checkpoint waits past this reader). None for an index not in a file (this
    process's own, which no other process writes) or one that cannot be opened."""
    with build.open_index(ws, refresh=False) as index:
        if index.path is None:
            return None
        path = index.path
    conn: sqlite3.Connection | None = None
    try:
        conn = build.side_connection(path)
        conn.execute("BEGIN")  # deferred: the snapshot is taken by the first read
        conn.execute("SELECT 1 FROM memories LIMIT 1").fetchall()
    except sqlite3.Error:
        if conn is not None:
            conn.close()
        return None
    return conn


def newest_pages(ws: Workspace, scopes: Sequence[str] | None, live_only: bool = True,
                 tiered: bool = False, page: int = 64, columns: str = _ROW,
                 snapshot: sqlite3.Connection | None = None
                 ) -> Iterator[list[tuple[Any, ...]]]:
    """`newest_rows`, a list of at most PAGE rows at a time (a caller looping over
    them pays no generator step per row). What the caller holds is one page of rows
    and keys, whatever the store's size: the keys past the first page wait in a
    temporary table (SQLite's temp store, which spills to a file) of a connection of
    the listing's own, not as a Python object per memory. SNAPSHOT (`read_snapshot`'s):
    every row is read on it, so passes made on one see the same rows."""
    where = f"{_in(scopes)} AND " if scopes is not None else ""
    where += "shadowed = 0"
    where += f" AND {_LIVE}" if live_only else ""
    query = (f"SELECT rowid, id FROM memories WHERE {where} ORDER BY "
             f"{_TIER + ', ' if tiered else ''}updated_at DESC, id DESC")
    args = tuple(scopes or ())
    # The first page's keys alone (a caller that wants a dozen sorts no more), then the
    # rest's when it asks for more.
    if snapshot is not None:
        keys = snapshot.execute(f"{query} LIMIT ?", (*args, page)).fetchall()
    else:
        with build.open_index(ws, refresh=False) as index:
            keys = index.conn.execute(f"{query} LIMIT ?", (*args, page)).fetchall()
    yield _rows_of(ws, keys, columns, snapshot)
    if len(keys) < page:
        return
    first = {memory_id for _, memory_id in keys}
    table = f"newest_keys_{next(_KEY_TABLES)}"
    if snapshot is not None:
        own, conn = False, snapshot
    else:
        with build.open_index(ws, refresh=False) as index:
            # The keys wait on a connection of this listing's own: the index's kept one
            # is closed between two pages when the file is replaced or found busy, and
            # the listing would end there. Like the Python list of keys before, this one
            # goes on reading the keys it took even if the file is replaced meanwhile.
            own = index.path is not None
            conn = (build.side_connection(index.path) if index.path is not None
                    else index.conn)
    try:
        # All keys again, not those past the first page: a refresh between the two may
        # have moved a row into the first page's places, and an offset would skip it.
        conn.execute(f"CREATE TEMP TABLE {table} (n INTEGER PRIMARY KEY, "
                     "key INTEGER NOT NULL, mid TEXT NOT NULL)")
        # in the query's order: n counts up as the rows come
        conn.execute(f"INSERT INTO temp.{table} (key, mid) {query}", args)
        done = 0
        while True:
            batch = conn.execute(f"SELECT n, key, mid FROM temp.{table} WHERE n > ? "
                                 "ORDER BY n LIMIT ?", (done, page)).fetchall()
            if not batch:
                return
            done = batch[-1][0]
            yield _rows_of(ws, [(key, mid) for _, key, mid in batch
                                if mid not in first], columns, snapshot)
    finally:
        if own:
            conn.close()
        else:
            _drop_keys(conn, table)


_KEY_TABLES = itertools.count()  # a name per listing: two may be open at once


def _drop_keys(conn: sqlite3.Connection, table: str) -> None:
    with contextlib.suppress(sqlite3.Error):
        conn.execute(f"DROP TABLE IF EXISTS temp.{table}")


def _rows_of(ws: Workspace, batch: list[tuple[int, str]], columns: str,
             snapshot: sqlite3.Connection | None = None) -> list[tuple[Any, ...]]:
    """The COLUMNS of BATCH's (rowid, id) keys' rows, in its order (read on SNAPSHOT
    when given); a key whose row another refresh moved meanwhile is skipped."""
    if not batch:
        return []
    query = (f"SELECT rowid, id, {columns} FROM memories WHERE rowid IN "
             f"({', '.join('?' * len(batch))})")
    if snapshot is not None:
        rows = snapshot.execute(query, [rowid for rowid, _ in batch]).fetchall()
    else:
        with build.open_index(ws, refresh=False) as index:
            rows = index.conn.execute(query, [rowid for rowid, _ in batch]).fetchall()
    found = {row[0]: row for row in rows}
    return [row[2:] for rowid, memory_id in batch
            if (row := found.get(rowid)) is not None and row[1] == memory_id]


def loaded_keys(ws: Workspace, keys: list[tuple[int, str]]) -> list[store.Loaded]:
    """The memories (chains completed) of these (rowid, id) keys of `newest_rows`, in
    their order: what a caller that sorted and filtered narrow rows shows; a key whose
    row a refresh moved meanwhile is skipped."""
    loaded: list[store.Loaded] = []
    for start in range(0, len(keys), 500):
        loaded.extend(map(_loaded, _rows_of(ws, keys[start:start + 500], _ROW)))
    return loaded


def by_ids(ws: Workspace, ids: Sequence[str]) -> list[store.Loaded]:
    """The indexed memories with these ids (first copy of each), in the order asked."""
    if not ids:
        return []
    with build.open_index(ws, refresh=False) as index:
        rows = index.conn.execute(
            f"SELECT {_ROW} FROM memories WHERE shadowed = 0 AND id IN "
            f"({', '.join('?' * len(ids))})", tuple(ids)).fetchall()
    found = {item.id: item for item in map(_loaded, rows)}
    return [found[i] for i in ids if i in found]


def pair_rows(conn: sqlite3.Connection, home: str
              ) -> list[tuple[int, str, str, str, str, str]]:
    """(rowid, id, title, body, tags JSON, paths JSON) of the live memories of one home,
    in index order: what the pairwise checks' candidate pass reads, no front matter
    parsed (`read_rows` makes memories of the few rows it picks)."""
    body_text = bodies.body_text
    return [(rowid, mid, title, body_text(zbody), tags, paths)
            for rowid, mid, title, zbody, tags, paths in conn.execute(
                "SELECT rowid, id, coalesce(json_extract(doc, '$.title'), ''), zbody, tags, "
                f"paths FROM memories WHERE home = ? AND shadowed = 0 AND {_LIVE} "
                "ORDER BY rowid", (home,))]


def read_rows(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, model.Memory]:
    """rowid -> the memory as reads see it (chain completed), for these rows."""
    out: dict[int, model.Memory] = {}
    for start in range(0, len(rowids), 500):
        chunk = list(rowids[start:start + 500])
        marks = ",".join("?" * len(chunk))
        for rowid, *stored in conn.execute(
                "SELECT rowid, doc, zbody, eff_status, eff_retired_at, eff_superseded_by "
                f"FROM memories WHERE rowid IN ({marks})", chunk):
            out[rowid] = as_read(*stored)
    return out


def linking(ws: Workspace, memory_id: str) -> list[store.Loaded]:
    """The indexed memories (first copy of each id) whose relations (model.RELATIONS)
    list MEMORY_ID, from the links table, in index order; the index as it is (not
    refreshed here)."""
    with build.open_index(ws, refresh=False) as index:
        rows = index.conn.execute(
            f"SELECT {_ROW} FROM memories WHERE rowid IN "
            "(SELECT src FROM links WHERE dst = ?) AND shadowed = 0 ORDER BY rowid",
            (memory_id,)).fetchall()
    return [_loaded(row) for row in rows]
