"""The SQLite FTS5 cache of the memory files, brought up to date before every read.

A refresh stats every memory file of every visible home, hashes only files whose
stat (size, mtime, ctime, inode) changed, asks `plan.plan_changes` what to do, and applies it in one
transaction. The index lives in `ws.index_dir` (inside the git dir, per worktree;
under $GIT_MEMEX_HOME outside git). It is never the only copy of anything: a
missing, corrupt or older-schema index is rebuilt from the files, and while another
process holds the write lock a read uses the index as it is, with a warning.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import operator
import os
import sqlite3
import stat
import struct
import time
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from memex.core import fingerprint, gcpause, jsonout, lifecycle, model
from memex.core.digest import blake2b
from memex.core.errors import InvalidMemory
from memex.index import listing, schema, termcounts, tokens
from memex.index.bodies import body_text, pack_body
from memex.index.embed_text import passage_of, text_key, with_title
from memex.index.plan import FileState, Plan, needs_hash, plan_changes
from memex.storage import iostep, locks, store
from memex.storage.homes import Workspace

if TYPE_CHECKING:  # the parser: loaded when a refresh reads a file (a no-change one reads none)
    import hashlib

    from memex.core import frontmatter

Progress = Callable[[int, int], None]
# A file as the stat walk sees it: (home kind, size, mtime_ns, ctime_ns, inode), the
# stat data git's index keeps (plan.FileState says why the ctime and inode). Kept as the
# stat gives them, not as one string: formatting the numbers was a fifth of the Python
# the walk adds to its stats.
Stamp = tuple[str, int, int, int, int]


def stat_numbers(st: os.stat_result) -> tuple[int, int, int, int]:
    """The one rule for how a stat's numbers become a stamp's (size, mtime_ns,
    ctime_ns, inode): each as a signed 8-byte integer, as the files table's INTEGER
    columns and the digest's packing (_NUMBERS) hold them. One that does not fit (an
    inode at or past 2**63 on some network or FUSE file systems, a time past the year
    2262) wraps around modulo 2**64, so a stamp read back from the table equals the
    walk's. The walks, note_written's stat (_rewalk), the digest and the table all take
    their numbers from here (the lean walk packs them as they are where they fit: the
    same numbers). The inode is 0 where a folder's listing does not give it (Windows:
    DirEntry.stat() has st_ino 0, os.lstat the real one): the walk and _rewalk agree."""
    numbers = (st.st_size, st.st_mtime_ns, st.st_ctime_ns,
               st.st_ino if _LISTING_INODES else 0)
    try:
        _NUMBERS.pack(*numbers)
    except struct.error:
        return cast(tuple[int, int, int, int],
                    tuple((n + _HALF) % _SPAN - _HALF for n in numbers))
    return numbers


_SPAN = 1 << 64
_HALF = 1 << 63
# Whether a listing's entries give the inode (os.DirEntry.stat(): st_ino is 0 on Windows).
_LISTING_INODES = os.name != "nt"

# How long a refresh waits for another writer before reading the index as it is.
LOCK_WAIT_SECONDS = 0.5
# A file written this recently may change again within the same mtime tick: it is
# recorded with size -1 so the next refresh hashes it once more (git's "racy clean").
RACY_NS = 2_000_000_000
_CHUNK = 500
# FTS5 keeps a deleted row's postings (with a delete marker) until its segments merge,
# and a bulk insert leaves several segments that every term lookup visits. After a
# full rebuild (whose DELETE FROM fts would otherwise double the index until an
# automerge) or a refresh that wrote at least this share of the memories, the FTS
# index is merged into one segment: ~40 ms at 10,000 memories, and queries ~2x faster.
# A refresh of fewer files than OPTIMIZE_MIN_FILES is never large (an edit in a
# store of three memories is a quarter of it).
OPTIMIZE_SHARE = 0.25
OPTIMIZE_MIN_FILES = 200


@dataclass
class Report:
    """What a refresh did and what reads must be told."""

    new: int = 0
    changed: int = 0
    deleted: int = 0
    moved: int = 0
    touched: int = 0
    memories: int = 0
    rebuilt: bool = False
    stale: bool = False
    seconds: float = 0.0
    quarantined: list[store.Quarantined] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["seconds"] = round(self.seconds, 3)
        data["quarantined"] = [{"path": str(q.path), "reason": q.reason}
                               for q in self.quarantined]
        return data


@dataclass(frozen=True)
class Known:
    """A file its caller has already read and parsed (verify's pass over the folder).
    A refresh that reads exactly these bytes takes this parse instead of parsing again;
    the file is still read (for its hash), so a file changed in between is parsed anew."""

    data: bytes
    memory: model.Memory
    parsed: frontmatter.Parsed


@dataclass
class Index:
    """An open index: its connection, its file, and what opening it reported."""

    conn: sqlite3.Connection
    path: Path | None  # None: an in-memory index (the index folder was unusable)
    report: Report

    def close(self) -> None:
        """Connections to index files stay open for the process (see _OPEN)."""
        kept = _OPEN.get(str(self.path)) if self.path is not None else None
        if kept is None or kept.conn is not self.conn:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def db_path(ws: Workspace) -> Path:
    return ws.index_dir / schema.DB_NAME


def home_order(ws: Workspace) -> dict[str, int]:
    return {home.kind: i for i, home in enumerate(store.homes(ws))}


# ---------------------------------------------------------------- opening


@dataclass
class _Open:
    """A connection kept for the process (an MCP server searches many times), with
    the files table as last read, valid while the index's generation is unchanged."""

    conn: sqlite3.Connection
    file_id: tuple[int, int]
    generation: str | None = None
    files: dict[str, FileState] | None = None
    kinds: dict[str, str] | None = None
    stamps: dict[str, Stamp] | None = None
    stamps_generation: str | None = None
    # The last walk the files table was found (or made) to match; a _LeanWalk until a
    # write asks for its stamps (note_written).
    walk: Walk | _LeanWalk | None = None


@dataclass(frozen=True)
class Walk:
    """A walk of the homes (disk_stamps) and what the files table holds of it: every
    stamp but those of the RACY paths, whose rows hold the same content hash but not
    the stamp (recorded racy, or touched within the racy window); as of GENERATION."""

    stamps: dict[str, Stamp]
    layout: list[tuple[str, str, int]]  # (folder, home kind, how many stamps) per home
    generation: str | None
    racy: frozenset[str] = frozenset()


_OPEN: dict[str, _Open] = {}
_CLOSED_AT_EXIT: list[bool] = []  # forget_connections is registered with atexit


@dataclass
class _Watched:
    """A long-lived process's change notices for one index (see watch_with)."""

    quiet: Callable[[], bool]
    clean: tuple[str | None] | None = None  # the generation the last complete refresh left


_WATCHED: dict[str, _Watched] = {}


def watch_with(ws: Workspace, quiet: Callable[[], bool] | None) -> None:
    """Let a long-lived process (the MCP server) skip the refresh's stat walk: QUIET()
    says whether anything changed in the memory folders since its previous call
    (storage.watch, from the kernel's notices). A refresh asks it first; when it
    reports no change, the last refresh completed and the index's generation is the one
    that refresh left (no other process wrote since), the walk is skipped. None: walk
    on every refresh again."""
    key = str(db_path(ws))
    if quiet is None:
        _WATCHED.pop(key, None)
    else:
        _WATCHED[key] = _Watched(quiet)


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def forget_connections() -> None:
    """Close every kept connection and forget every change watch (tests, and before
    deleting an index folder)."""
    for kept in _OPEN.values():
        with contextlib.suppress(sqlite3.Error):
            kept.conn.close()
    _OPEN.clear()
    _WATCHED.clear()


def forget(ws: Workspace) -> None:
    """Close the kept connection to this workspace's index only (a temporary index
    about to be deleted), leaving every other index's connection open."""
    _drop(db_path(ws))


def _drop(path: Path) -> None:
    kept = _OPEN.pop(str(path), None)
    if kept is not None:
        with contextlib.suppress(sqlite3.Error):
            kept.conn.close()


WAL_SIZE_LIMIT = 4 * 1024 * 1024
# A memories row (small columns, front matter, compressed body) is ~2 KB: a 4 KB page
# holds one and wastes a third of itself; 16 KB pages hold seven (the file: ~1.3x the
# corpus instead of ~1.6x). Set when a file is made, or by its rebuild (_compactable).
PAGE_SIZE = 16384


def _connect(target: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, timeout=LOCK_WAIT_SECONDS, isolation_level=None,
                           check_same_thread=False)
    if target != ":memory:":
        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # only a new, empty file takes it
        conn.execute("PRAGMA journal_mode = WAL")
        # A full rebuild writes the whole index to the WAL; without a limit the file
        # keeps that size (as large as the index) after the checkpoint.
        conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
    conn.execute("PRAGMA synchronous = OFF")  # a cache: a crash loses nothing
    return conn


def side_connection(path: Path) -> sqlite3.Connection:
    """A second connection to the index file at PATH, its caller's to close: for what
    must outlive the kept connection, which a replaced or busy file closes."""
    return sqlite3.connect(path, timeout=LOCK_WAIT_SECONDS, isolation_level=None,
                           check_same_thread=False)


def _open_usable(ws: Workspace, report: Report) -> tuple[sqlite3.Connection, Path | None]:
    """A connection to an index of the current schema, rebuilding what is not."""
    path = db_path(ws)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        report.warnings.append(f"cannot create the index folder {path.parent} "
                               f"({exc.strerror or exc}); using a temporary index")
        return _fresh_memory(report), None
    kept = _OPEN.get(str(path))
    if kept is not None:
        try:
            if _file_id(path) == kept.file_id and _current(kept.conn):
                return kept.conn, path
        except sqlite3.Error:
            pass
        _drop(path)
    conn: sqlite3.Connection | None = None
    for attempt in range(3):
        try:
            conn = _connect(str(path))
            found = schema.version(conn)
            if _current(conn):
                return _keep(conn, path), path
            empty = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
            if not empty:
                report.warnings.append(
                    f"the index was made by another version (schema {found}); rebuilt it")
            _rebuild_in_place(conn, path, report)
            return _keep(conn, path), path
        except sqlite3.OperationalError as exc:
            if ("locked" in str(exc) or "busy" in str(exc)) and attempt < 2:
                with contextlib.suppress(sqlite3.Error, AttributeError):
                    conn.close()  # type: ignore[union-attr]
                time.sleep(LOCK_WAIT_SECONDS)
                continue
            report.warnings.append(f"the index could not be opened ({exc}); "
                                   "using a temporary index")
        except sqlite3.DatabaseError as exc:
            if attempt < 2:
                with contextlib.suppress(sqlite3.Error, AttributeError):
                    conn.close()  # type: ignore[union-attr]
                report.warnings.append(f"the index was unreadable ({exc}); rebuilt it")
                try:
                    cut_back(path)
                    continue
                except OSError:
                    pass
            report.warnings.append(f"the index was unreadable ({exc}); "
                                   "using a temporary index")
        break
    with contextlib.suppress(sqlite3.Error, AttributeError):
        conn.close()  # type: ignore[union-attr]
    return _fresh_memory(report), None


class Peeked(sqlite3.Connection):
    """peek's connection: it keeps no term count it reads (term_counts), as a write
    from it would race the refresh beside it. Not `PRAGMA query_only`: the query
    stems its words in a temporary table."""


def peek(ws: Workspace) -> sqlite3.Connection | None:
    """A connection of its own to this workspace's index as it is: not refreshed, and
    nothing is created, rebuilt or kept. For a read made beside a refresh (the search
    engine's query ahead), judged afterwards by the generation it read (a refresh
    that writes makes a new one). None when there is no index of this version."""
    path = db_path(ws)
    if not path.is_file():
        return None
    conn = None
    try:
        # mode=rw: an index deleted since is_file() is not made again, empty, here
        conn = sqlite3.connect(path.absolute().as_uri() + "?mode=rw", uri=True,
                               timeout=LOCK_WAIT_SECONDS, isolation_level=None,
                               check_same_thread=False, factory=Peeked)
        if _current(conn):
            return conn
    except sqlite3.Error:
        pass
    if conn is not None:
        with contextlib.suppress(sqlite3.Error):
            conn.close()
    return None


def _current(conn: sqlite3.Connection) -> bool:
    """Whether an index is of this schema and its FTS text was made by this version's
    rule (a row is deleted from the contentless FTS table by its text made again)."""
    return schema.version(conn) == schema.SCHEMA_VERSION and \
        schema.text_rule(conn) == text_rule()


def _rebuild_in_place(conn: sqlite3.Connection, path: Path | None, report: Report) -> None:
    """Empty an index file of any schema (or of damage) and create the current tables,
    in one transaction on the same file. A file SQLite cannot read at all is cut back
    to nothing in place (an empty file is an empty database): never deleted or
    renamed, since another process may hold it open (in WAL mode its `-wal` would
    then belong to a different file)."""
    report.rebuilt = True
    try:
        iostep.step("index create", fails=False)
        schema.create(conn, replace=True, text_rule=text_rule())
        _compactable(conn)
        return
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc) or path is None:
            raise
    except sqlite3.DatabaseError:
        if path is None:
            raise
    cut_back(path)
    schema.create(conn, replace=True, text_rule=text_rule())
    _compactable(conn)


def _compactable(conn: sqlite3.Connection) -> None:
    """Let the file give back the pages a rebuild or a large refresh frees (SQLite's
    incremental auto-vacuum, see _compact), on pages of PAGE_SIZE. A file made without
    them is converted by a VACUUM here, while its tables are empty (cheap); the page
    size changes only outside WAL mode, so only while no other process has the file
    open; if another process is busy with it, the next rebuild tries again."""
    vacuumed = conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    sized = conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE
    if vacuumed and sized:
        return
    with contextlib.suppress(sqlite3.Error):
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
        try:
            if not sized:
                with contextlib.suppress(sqlite3.Error):  # locked: another process has it
                    if conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete":
                        conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            conn.execute("VACUUM")
        finally:
            conn.execute("PRAGMA journal_mode = WAL")


# A refresh gives back free pages once they are more than this share of the file.
FREE_SHARE = 0.05


def _compact(conn: sqlite3.Connection) -> None:
    """Cut the file back by its free pages (the segments an FTS merge replaced, the
    rows a full rebuild emptied) once they are a fair share of it."""
    with contextlib.suppress(sqlite3.Error):
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        if free > FREE_SHARE * pages:
            # executescript steps the pragma to the end (execute frees one page only).
            conn.executescript("PRAGMA incremental_vacuum;")


def cut_back(path: Path) -> None:
    """Truncate an unreadable SQLite cache file, its WAL and its rollback journal in place
    (an empty file is an empty database); the inode stays, so every process's handle
    stays valid."""
    iostep.step("index cut back", fails=False)
    for suffix in ("", "-wal", "-journal"):
        with contextlib.suppress(FileNotFoundError), open(f"{path}{suffix}", "r+b") as handle:
            handle.truncate(0)


def _keep(conn: sqlite3.Connection, path: Path) -> sqlite3.Connection:
    file_id = _file_id(path)
    if file_id is not None:
        if not _CLOSED_AT_EXIT:
            # Closed at exit by name, not left to the interpreter's last collection: a
            # connection sits in a reference cycle (its statement cache), and a fast
            # path freezes the collector at exit (cli._common.fast_process). Closing
            # checkpoints the WAL and removes it, as a connection freed at exit does.
            atexit.register(forget_connections)
            _CLOSED_AT_EXIT.append(True)
        _OPEN[str(path)] = _Open(conn, file_id)
    return conn


def _fresh_memory(report: Report) -> sqlite3.Connection:
    conn = _connect(":memory:")
    schema.create(conn, text_rule=text_rule())
    report.rebuilt = True
    return conn


_DEFAULT_PROGRESS: list[Progress] = []


def report_progress_with(progress: Progress | None) -> None:
    """The progress callback for refreshes whose caller passes none (the CLI sets one,
    so the first read after a clone shows its rebuild)."""
    _DEFAULT_PROGRESS[:] = [progress] if progress is not None else []


def open_index(ws: Workspace, full: bool = False, progress: Progress | None = None,
               refresh: bool = True, known: Mapping[str, Known] | None = None) -> Index:
    """This workspace's index, brought up to date (unless refresh=False); `known`
    ({path: Known}) spares parsing files the caller has parsed already."""
    if progress is None and _DEFAULT_PROGRESS:
        progress = _DEFAULT_PROGRESS[0]
    started = time.perf_counter()
    report = Report()
    conn, path = _open_usable(ws, report)
    index = Index(conn, path, report)
    if refresh:
        try:
            _refresh(index, ws, full, progress, known)
        except sqlite3.DatabaseError as exc:
            if _busy(exc):
                _mark_stale(index)
            else:
                # Damaged beyond what opening noticed: rebuilt in place from the files,
                # and the command that found it goes on.
                report.warnings.append(f"the index was damaged ({exc}); rebuilt it")
                _repair(index, ws, progress, known)
    report.quarantined = quarantined(index.conn)
    report.memories = memory_count(index.conn)
    report.seconds = time.perf_counter() - started
    return index


def _busy(exc: sqlite3.Error) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))


def _repair(index: Index, ws: Workspace, progress: Progress | None,
            known: Mapping[str, Known] | None) -> None:
    """Rebuild a damaged index in place; if even that fails, answer this command from a
    temporary index (the file is left for the next command)."""
    try:
        _rebuild_in_place(index.conn, index.path, index.report)
        if index.path is not None:
            _drop_cache(index.path)
        _refresh(index, ws, True, progress, known)
        return
    except sqlite3.DatabaseError as exc:
        if _busy(exc):
            _mark_stale(index)
            return
        index.report.warnings.append(f"the index cannot be rebuilt ({exc}); "
                                     "using a temporary index")
    index.close()
    if index.path is not None:
        _drop(index.path)
    index.conn, index.path = _fresh_memory(index.report), None
    _refresh(index, ws, True, progress, known)


def _drop_cache(path: Path) -> None:
    """Forget the process's copy of the files table (the index was rebuilt)."""
    kept = _OPEN.get(str(path))
    if kept is not None:
        kept.files = kept.kinds = kept.generation = None
        kept.stamps = kept.stamps_generation = None
        kept.walk = None


def refresh(ws: Workspace, full: bool = False, progress: Progress | None = None) -> Report:
    """Bring the index up to date and close it; `full` rebuilds it from scratch."""
    with open_index(ws, full=full, progress=progress) as index:
        return index.report


def _mark_stale(index: Index) -> None:
    with contextlib.suppress(sqlite3.Error):
        index.conn.execute("ROLLBACK")
    index.report.stale = True
    index.report.warnings.append(
        "the index is being updated by another git-memex process; "
        "results may miss the latest changes")


# ---------------------------------------------------------------- scanning


# The mtime recorded for a file an unsettled submit rewrote, read with its bytes from
# before (storage.journalfile): no real file has it, so once the submit is settled the
# next refresh reads the file again, whichever way it went.
UNSETTLED_MTIME = -1


def disk_stamps(ws: Workspace, before: dict[str, bytes] | None = None,
                layout: list[tuple[str, str, int]] | None = None) -> dict[str, Stamp]:
    """{path: (home kind, size, mtime_ns, ctime_ns, inode)} of every memory file in the
    visible homes: a
    stat per file, nothing read. An unchanged tree is told by the digest of these
    (stamps_digest), or by one comparison with the files table's own stamps
    (indexed_stamps). While a
    killed submit is unsettled, the files it created are left out and those it rewrote
    get their bytes from before in `before` (the pre-submit state reads answer from).
    LAYOUT, when given, gets (folder, home kind, how many stamps) per home, in order."""
    stamps: dict[str, Stamp] = {}
    # A writer (it holds the write lock) also removes the temp files a killed writer
    # left in a memory folder: the walk lists the folder anyway, and the lock's settle
    # no longer lists a folder whose temps go to the git dir (store.temps_may_be_in).
    sweep = locks.held_count(ws.home) > 0
    for home, listed in _listed_homes(store.homes(ws)):
        for path, data in home.before.items():
            if data is not None and before is not None:
                before[path] = data
        count = len(stamps)
        if listed:
            _walk_folder(home, stamps, sweep=sweep)
        if layout is not None:
            layout.append((str(home.path), home.kind, len(stamps) - count))
    return stamps


def _walk_folder(home: store.Home, stamps: dict[str, Stamp],
                 known: Mapping[str, Stamp] | None = None, fresh: Container[str] = (),
                 sweep: bool = False) -> None:
    """Add the stamps of HOME's memory files to STAMPS, in the folder's listing order.
    A path in KNOWN (and not in FRESH) takes its stamp from there, not from a stat.
    SWEEP: also remove the stale temp files listed (store.remove_if_stale_temp)."""
    folder = str(home.path)
    prefix = os.path.join(folder, "")  # entry.path of a listing by name
    kind = home.kind
    before = home.before  # per file below: a local, not an attribute
    unstated: Callable[[str], bool] | None = None
    if before or known:
        def unstated(name: str) -> bool:
            """Left out (created by an unsettled submit) or stamped from KNOWN."""
            path = prefix + name
            return bool(before and store.unsettled(home, path)) or bool(
                known and path in known and path not in fresh)

    # A stamp per file is a tuple the cyclic collector tracks: a walk of 100,000 files
    # set off ~140 collections (8.5 ms of a 0.58 s no-change refresh; one collection
    # after the walk, 5.6 ms, remains). The stamps make no cycles: the collector waits.
    with gcpause.paused(), _memory_files(folder, sweep=sweep, unstated=unstated) as files:
        for name, st in files:
            path = prefix + name
            if st is _UNSTATED:  # known's stamp, unless an unsettled submit made it
                if known is not None and not (before and store.unsettled(home, path)):
                    stamps[path] = known[path]
                continue
            old = before.get(path) if before else None
            stamps[path] = ((kind, len(old), UNSETTLED_MTIME, UNSETTLED_MTIME, 0)
                            if old is not None else (kind, *stat_numbers(st)))


class _LeanWalk:
    """A walk of the homes as disk_stamps makes it, kept as each folder's names and its
    files' numbers packed as stamps_digest hashes them (_NUMBERS: size, mtime, ctime,
    inode): no path, tuple or dict entry per file. A refresh that finds nothing changed
    needs only the walk's digest (stamps_digest of the same stamps, hashed from the
    packed bytes as they are); the stamps are made when a refresh or a write asks for
    them. At 100,000 memories the stamps and their digest cost ~80 ms of CPU beside the
    stats (and as much again to free them at exit); this walk ~10 ms. The four numbers
    of a file are packed by one call: appended one by one to four arrays they cost
    ~2,000 more instructions a file than two (an array's append parses its argument
    by a format), one pack ~400 (callgrind, 10,000 files)."""

    __slots__ = ("parts", "generation", "racy", "_named")

    def __init__(self, parts: list[tuple[str, str, str, list[str], bytearray]]) -> None:
        # (folder, home kind, folder + separator, names, their _NUMBERS packed) per home
        self.parts = parts
        self.generation: str | None = None
        self.racy: frozenset[str] = frozenset()  # as Walk's
        # digest's state after the runs of parts[0], parts[1], ... (a copy each): a
        # write's digest (note_written) hashes again
        # only the names from the first part it changed on (a capture's: the outbox,
        # after the repo's 100,000 names: ~10 ms of its ~17 ms digest)
        self._named: list[hashlib._Hash] = []

    def renamed(self, at: int) -> None:
        """The names of parts[AT] changed (or may have): digest hashes them again."""
        del self._named[at:]

    def kept_as(self, generation: str | None, racy: frozenset[str] = frozenset()
                ) -> _LeanWalk:
        """This walk, noted as the one the files table matches at GENERATION (but for
        RACY, as Walk's)."""
        self.generation, self.racy = generation, racy
        return self

    def stamps_of(self, paths: Iterable[str]) -> dict[str, Stamp]:
        """The stamps of those of PATHS this walk holds (a few: a write's, the racy
        ones), without the stamps of the others."""
        wanted: dict[int, list[tuple[str, str]]] = {}
        prefixes: dict[str, int] = {}  # a folder two homes name is the first one's
        for i, (_, _, prefix, _, _) in enumerate(self.parts):
            prefixes.setdefault(prefix, i)
        for path in paths:
            folder, name = os.path.split(path)
            part = prefixes.get(os.path.join(folder, ""))
            if part is not None:
                wanted.setdefault(part, []).append((path, name))
        found: dict[str, Stamp] = {}
        for at, asked in wanted.items():
            _, kind, _, names, numbers = self.parts[at]
            place = _places(names, len(asked))
            for path, name in asked:
                n = place(name)
                if n is not None:
                    found[path] = (kind, *_NUMBERS.unpack_from(numbers, n * _NUMBERS.size))
        return found

    def layout(self) -> list[tuple[str, str, int]]:
        return [(folder, kind, len(names)) for folder, kind, _, names, _ in self.parts]

    def stamps(self) -> dict[str, Stamp]:
        stamps: dict[str, Stamp] = {}
        with gcpause.paused():  # a tuple per file, no cycle (see _walk_folder)
            for _, kind, prefix, names, numbers in self.parts:
                for name, (size, mtime, ctime, inode) in zip(
                        names, _NUMBERS.iter_unpack(numbers), strict=True):
                    stamps[prefix + name] = (kind, size, mtime, ctime, inode)
        return stamps

    def digest(self) -> str:
        """stamps_digest(self.stamps()), without the stamps: each folder's names as
        they are (a folder with files is one run of stamps_digest's). The state after
        each part's run is kept: a write's digest (note_written) hashes again only the
        runs from the first part it changed on."""
        named = self._named
        digest = named[-1].copy() if named else blake2b(digest_size=16)
        for _, kind, prefix, names, _ in self.parts[len(named):]:
            if names:
                _hash_run(digest, prefix, kind, len(names), names)
            named.append(digest.copy())
        digest.update(b"\2")
        for *_, numbers in self.parts:
            digest.update(numbers)
        return digest.hexdigest()


def _places(names: list[str], asked: int) -> Callable[[str], int | None]:
    """Where a name is in NAMES (None: not there), for ASKED look-ups: a scan of the
    list each for a few, a dict of every name for more."""
    if asked <= _SCANNED_LOOKUPS:
        def scanned(name: str) -> int | None:
            try:
                return names.index(name)
            except ValueError:
                return None
        return scanned
    return {name: n for n, name in enumerate(names)}.get


# Look-ups of a name in a walk's folder (a list scan each, ~0.5 ms at 100,000 names)
# past which one dict of the folder's names is made instead (~5 ms).
_SCANNED_LOOKUPS = 8


def _lean_walk(ws: Workspace) -> _LeanWalk | None:
    """disk_stamps(ws) as a _LeanWalk, a writer's sweep of stale temp files included;
    None where disk_stamps does more than stat the files (an unsettled submit's files,
    answered from their bytes before it)."""
    homes = store.homes(ws)
    if any(home.before for home in homes):
        return None
    sweep = locks.held_count(ws.home) > 0  # as disk_stamps'
    parts = []
    # a writer's walk sweeps stale temps as it lists (_memory_files): stated as listed
    shared = not sweep and _may_share_stats()
    for home, listed in _listed_homes(homes):
        folder = str(home.path)
        prefix = os.path.join(folder, "")
        names: list[str] = []
        numbers = bytearray()
        if listed and shared:
            names, numbers = _listed_then_stated(folder)
        elif listed:
            add_name, add_numbers, pack = names.append, numbers.extend, _NUMBERS.pack
            inodes = _LISTING_INODES
            with _memory_files(folder, sweep=sweep) as files:  # as _walk_folder's
                for name, st in files:
                    try:  # where they fit, stat_numbers(st) are the numbers as they are
                        add_numbers(pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                                         st.st_ino if inodes else 0))
                    except struct.error:  # a time past the year 2262, an inode past 2**63
                        add_numbers(pack(*stat_numbers(st)))
                    add_name(name)
        parts.append((folder, home.kind, prefix, names, numbers))
    return _LeanWalk(parts)


# Whether a listed name can be stated in its folder's open descriptor (POSIX): where a
# folder is listed from one (_LIST_BY_FD), the lean walk then lists it first and states
# its memory files after (_listed_then_stated).
_LSTAT_IN_FOLDER = os.stat in os.supports_dir_fd and os.stat in os.supports_follow_symlinks
# A folder with at least this many memory files has its stats shared with a forked
# helper (index.ahead) where that pays (ahead.forks: Linux, one thread, a CPU idle):
# a fork costs ~10-20 ms, the stats of 20,000 files ~0.1 s.
WALK_FORK_MIN = 20_000
# The names stated in one piece (the helper does every other piece).
_STAT_PIECE = 1024


def _may_share_stats() -> bool:
    """Whether the lean walk may share a large folder's stats with a forked helper:
    where a folder is stated by name in its descriptor (POSIX) and ahead.forks' gate is
    open (Linux, one thread, a CPU idle). Elsewhere, and on a busy machine, each entry
    is stated as it is listed. ahead's gate is its own (one rule); what a fork needs
    (pickle, queue) ahead loads only when it forks."""
    if not (_LIST_BY_FD and _LSTAT_IN_FOLDER and _LISTING_INODES and hasattr(os, "fork")):
        return False
    from memex.index import ahead

    return ahead.forks(WALK_FORK_MIN)


def _listed_then_stated(folder: str) -> tuple[list[str], bytearray]:
    """The lean walk's (names, numbers packed) of FOLDER's memory files, in its listing
    order, as _memory_files gives them: the folder is listed first (the same rule:
    _memory_entries, without the stats), then each listed name is stated in the listing's
    descriptor, the very call DirEntry.stat() makes for it (fstatat, not following a
    link); a name whose stat fails is passed over, as there. A folder of WALK_FORK_MIN
    files or more has every other piece of its names stated by a forked helper
    (index.ahead; the caller checked its gate). Threads do not pay: each stat hands the
    interpreter lock over (measured: ~+30% CPU, no shorter)."""
    with _listing_fd(folder) as (entries, fd):
        listed = [name for name, _ in _memory_entries(entries, "", False, None, stat=False)]
        if fd is None:  # the folder cannot be listed: no file
            return [], bytearray()
        pieces = [listed[i:i + _STAT_PIECE] for i in range(0, len(listed), _STAT_PIECE)]
        stated: Iterable[tuple[list[int], bytes]]
        if len(listed) >= WALK_FORK_MIN:
            from memex.index import ahead  # (loaded already: _may_share_stats)

            parent = os.getpid()
            opened: dict[int, int] = {parent: fd}

            def stat_piece(piece: list[str]) -> tuple[list[int], bytes]:
                # the helper closed the parent's descriptors: it opens the folder itself
                own = opened.get(os.getpid())
                if own is None:
                    own = opened[os.getpid()] = os.open(
                        folder, os.O_RDONLY | os.O_DIRECTORY)
                return _stat_names(own, piece)

            stated = ahead.in_order(pieces, stat_piece, fork=True, pattern="pc", size=1)
        else:
            stated = (_stat_names(fd, piece) for piece in pieces)
        names: list[str] = []
        numbers = bytearray()
        for piece, (passed, packed) in zip(pieces, stated, strict=True):
            gone = set(passed)
            names += [name for at, name in enumerate(piece) if at not in gone] if gone else piece
            numbers += packed
        return names, numbers


def _stat_names(fd: int, names: list[str]) -> tuple[list[int], bytes]:
    """(the positions in NAMES of those whose stat cannot be had, the others' numbers
    packed as _NUMBERS), each stated in the folder open as FD without following a link.
    Positions, not names: what a helper sends back stays small."""
    passed: list[int] = []
    numbers = bytearray()
    add_numbers, pack, stat_ = numbers.extend, _NUMBERS.pack, os.stat
    for at, name in enumerate(names):
        try:
            st = stat_(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            passed.append(at)
            continue
        try:  # where they fit, stat_numbers(st) are the numbers as they are
            add_numbers(pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        except struct.error:  # a time past the year 2262, an inode past 2**63
            add_numbers(pack(*stat_numbers(st)))
    return passed, bytes(numbers)


def _listed_homes(homes: Iterable[store.Home]) -> Iterator[tuple[store.Home, bool]]:
    """Each home, and whether a walk lists its folder: a folder two homes name is the
    first one's (the second has no files of its own)."""
    walked: set[str] = set()
    for home in homes:
        prefix = os.path.join(str(home.path), "")
        yield home, prefix not in walked
        walked.add(prefix)


# What _memory_files gives for a name its caller stamps itself (no stat is made).
_UNSTATED = os.stat_result((0,) * 10)


@contextlib.contextmanager
def _memory_files(folder: str, *, sweep: bool = False,
                  unstated: Callable[[str], bool] | None = None
                  ) -> Iterator[Iterator[tuple[str, os.stat_result]]]:
    """(name, stat) of each memory file FOLDER lists, in its listing order: the one
    rule of every walk (disk_stamps', the lean walk's, a rewalk's). A memory file is an
    entry with a memory name (store.is_memory_name) that is a regular file, not through
    a symlink, whose stat can be had: an entry whose is_file or stat fails (an OSError:
    on a file system without d_type is_file stats, and that can be refused, stale or an
    I/O error) is passed over, as a file gone. UNSTATED(name), when given and true: the
    name comes with _UNSTATED, neither checked nor stated (the caller has its stamp or
    leaves it out). SWEEP: a listed name that is no memory's is removed if it is a
    stale temp file (store.remove_if_stale_temp)."""
    with _listing(folder) as entries:
        yield _memory_entries(entries, os.path.join(folder, ""), sweep, unstated)


def _memory_entries(entries: Iterator[os.DirEntry[str]], prefix: str, sweep: bool,
                    unstated: Callable[[str], bool] | None, stat: bool = True
                    ) -> Iterator[tuple[str, os.stat_result]]:
    """STAT false: each memory file's name with _UNSTATED, its stat left to the caller."""
    is_memory_name = store.is_memory_name
    for entry in entries:
        name = entry.name
        if not is_memory_name(name):
            if sweep:
                store.remove_if_stale_temp(prefix + name, name)
            continue
        if unstated is not None and unstated(name):
            yield name, _UNSTATED
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat() if stat else _UNSTATED
        except OSError:
            continue
        yield name, st


# Whether a folder can be listed from an open descriptor (POSIX): each entry's stat
# then looks up its bare name in that folder (fstatat), not its whole path again.
_LIST_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")


@contextlib.contextmanager
def _listing(folder: str) -> Iterator[Iterator[os.DirEntry[str]]]:
    """FOLDER's entries in its listing order, none when it cannot be listed (missing,
    not a folder, not readable). Listed from a descriptor where the platform allows
    (_LIST_BY_FD): the stats of a 100,000-file walk then cost about a third less
    system time; the entries, their order and their stats are the same."""
    with _listing_fd(folder) as (entries, _):
        yield entries


@contextlib.contextmanager
def _listing_fd(folder: str) -> Iterator[tuple[Iterator[os.DirEntry[str]], int | None]]:
    """_listing's entries, and the descriptor they are listed from (None: by name, or
    the folder cannot be listed)."""
    fd = None
    try:
        try:
            if _LIST_BY_FD:
                fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            entries = os.scandir(folder if fd is None else fd)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            yield iter(()), None
            return
        with entries:
            yield entries, fd
    finally:
        if fd is not None:
            os.close(fd)


def states_of(stamps: Mapping[str, Stamp]) -> tuple[dict[str, FileState], dict[str, str]]:
    """Stamps as {path: (size, mtime_ns, ctime_ns, inode)} and {path: home kind}."""
    states: dict[str, FileState] = {}
    kinds: dict[str, str] = {}
    for path, (kind, size, mtime, ctime, inode) in stamps.items():
        states[path] = FileState(size, mtime, ctime, inode)
        kinds[path] = kind
    return states, kinds


def scan_disk(ws: Workspace, before: dict[str, bytes] | None = None
              ) -> tuple[dict[str, FileState], dict[str, str]]:
    """{path: (size, mtime_ns, ctime_ns, inode)} of every memory file in the visible homes, and each
    path's home kind. Only a stat per file: nothing is read (see disk_stamps)."""
    return states_of(disk_stamps(ws, before))


def generation(conn: sqlite3.Connection) -> str | None:
    return schema.meta(conn, "generation")


def _indexed(index: Index) -> tuple[dict[str, FileState], dict[str, str]]:
    """The files table, from the process's copy while no refresh has written since."""
    kept = _OPEN.get(str(index.path)) if index.path is not None else None
    if kept is not None and kept.conn is index.conn:
        current = generation(index.conn)
        if kept.files is None or kept.kinds is None or kept.generation != current:
            kept.files, kept.kinds = indexed_files(index.conn)
            kept.generation = current
        return kept.files, kept.kinds
    return indexed_files(index.conn)


def indexed_stamps(conn: sqlite3.Connection) -> dict[str, Stamp]:
    """The files table as disk_stamps gives the disk."""
    return {path: (kind, size, mtime, ctime, inode)
            for path, kind, size, mtime, ctime, inode in conn.execute(
                "SELECT path, home, size, mtime_ns, ctime_ns, ino FROM files")}


def stamps_digest(stamps: Mapping[str, Stamp]) -> str:
    """One digest of the stamps, in their order (disk_stamps': the homes', each folder
    in its listing order). The index keeps the digest of the walk its files table
    matches (meta 'walk', see walk_record), so an unchanged tree costs its walk and
    this digest: the table is read only when the digest differs (a file changed, or
    the folder lists in another order). The numbers go in as 8-byte integers (no
    string per file): every stamp's fit (stat_numbers).

    The stamps go in runs: the longest stretches of paths in one folder with one home
    kind (a walk's folder with files is one run). Each run is hashed as its file
    count, kind and folder (with its closing separator), each followed by a NUL, then
    its file names each followed by a NUL; then b"\2" and each stamp's numbers (size,
    mtime, ctime, inode) packed as _NUMBERS packs them, stamp after stamp. A folder's
    path is hashed once, not with each name (a digest of each whole path and kind cost
    ~2x the bytes: ~1/3 of the instructions of a no-change refresh's digest went to
    them). Names are joined and hashed _DIGEST_CHUNK at a time: joined whole, 100,000
    paths made two 6 MB buffers (their page faults were a fifth of the digest's time)."""
    digest = blake2b(digest_size=16)
    runs: list[tuple[str, str, int]] = []  # (folder with its separator, kind, count)
    for path, stamp in stamps.items():  # the runs first: no name is kept
        name = os.path.basename(path)
        at = len(path) - len(name)
        if runs and runs[-1][1] == stamp[0] and len(runs[-1][0]) == at and \
                path.startswith(runs[-1][0]):
            runs[-1] = (runs[-1][0], stamp[0], runs[-1][2] + 1)
        else:
            runs.append((path[:at], stamp[0], 1))
    paths = iter(stamps)
    for prefix, kind, count in runs:
        cut = len(prefix)
        _hash_run(digest, prefix, kind, count,
                  (path[cut:] for path in itertools.islice(paths, count)))
    digest.update(b"\2")
    numbers = map(_FILE_NUMBERS, stamps.values())
    while chunk := list(itertools.islice(numbers, _DIGEST_CHUNK)):
        digest.update(struct.pack(f"<{4 * len(chunk)}q", *itertools.chain.from_iterable(chunk)))
    return digest.hexdigest()


def _hash_run(digest: hashlib._Hash, prefix: str, kind: str, count: int,
              names: Iterable[str]) -> None:
    """Hash one run of stamps_digest's: its COUNT, KIND and PREFIX (the folder with its
    closing separator), then its COUNT NAMES, each followed by a NUL (UTF-8,
    undecodable bytes as they were)."""
    digest.update(f"{count}\0{kind}\0{prefix}\0".encode("utf-8", "surrogateescape"))
    names = iter(names)
    while chunk := list(itertools.islice(names, _DIGEST_CHUNK)):
        digest.update(("\0".join(chunk) + "\0").encode("utf-8", "surrogateescape"))


_DIGEST_CHUNK = 1024


_FILE_NUMBERS = operator.itemgetter(1, 2, 3, 4)  # a stamp's (size, mtime, ctime, inode)
# How the digest packs them: little-endian 8-byte signed integers.
_NUMBERS = struct.Struct("<4q")


# A walk with more racy paths than this is not recorded (each would be read again by
# every command until the next refresh that writes): a large import's files are.
WALK_RACY_MAX = 256


def walk_value(generation: str | None, digest: str, racy: Iterable[str]) -> str | None:
    """The meta 'walk' value: the digest of a walk the files table matches at index
    GENERATION, but for the RACY paths (their rows hold the content's hash, not its
    stamp: hashed again by the next refresh). None when there are too many."""
    racy = sorted(racy)
    if len(racy) > WALK_RACY_MAX:
        return None
    return json.dumps({"generation": generation, "digest": digest, "racy": racy})


def walk_record(conn: sqlite3.Connection) -> tuple[str | None, str, list[str]] | None:
    """The meta 'walk' record: (generation, digest, racy paths), None if none. It holds
    only at that generation: every refresh that writes makes a new one (an older
    version's writes too), so a record from before a write is never taken."""
    raw = schema.meta(conn, "walk")
    try:
        data = json.loads(raw) if raw else None
        if data is None:
            return None
        return data["generation"], str(data["digest"]), [str(p) for p in data["racy"]]
    except (ValueError, TypeError, KeyError):
        return None


@contextlib.contextmanager
def _unless_busy(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block only if no other process holds the write lock (never waited for);
    an SQLite error in it (busy, or a read-only index) skips what is left of it. The
    connection's wait is put back however the block ends (a Ctrl-C in it too)."""
    try:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("PRAGMA busy_timeout = 0")
            yield
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT_SECONDS * 1000)}")


def write_if_free(conn: sqlite3.Connection, sql: str, args: tuple[object, ...]) -> None:
    """One statement that keeps a hint (a digest, a cached table) in the index: written
    only if no other process holds the write lock (never waited for), else skipped."""
    with _unless_busy(conn):
        conn.execute(sql, args)


def term_counts(conn: sqlite3.Connection, terms: Sequence[str], most: int | None = None
                ) -> dict[str, int]:
    """How many memories hold each term: termcounts.lookup, keeping what it reads
    (but from peek's connection); MOST: lookup's."""
    return termcounts.lookup(conn, terms, None if isinstance(conn, Peeked) else _unless_busy,
                             most)


def term_rarity(conn: sqlite3.Connection, words: Mapping[str, str], cap: int
                ) -> dict[str, int]:
    """termcounts.rarity, keeping what it learns (but from peek's connection)."""
    return termcounts.rarity(conn, words, cap,
                             None if isinstance(conn, Peeked) else _unless_busy)


def write_many_if_free(conn: sqlite3.Connection, sql: str,
                       rows: Sequence[tuple[object, ...]]) -> None:
    """write_if_free for several rows, in one transaction."""
    with _unless_busy(conn):
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(sql, rows)
            conn.execute("COMMIT")
        except BaseException:  # a Ctrl-C too: no transaction left open on the connection
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def _note_walk(conn: sqlite3.Connection, digest: str, seen: str | None,
               racy: Iterable[str]) -> None:
    """Keep the digest of a walk the files table was found to match (but for RACY), so
    the next refresh need not read the table; only if no refresh has written since the
    generation SEEN (read before the comparison)."""
    value = walk_value(seen, digest, racy)
    if value is not None:
        write_if_free(conn, "INSERT OR REPLACE INTO meta (key, value) SELECT 'walk', ? "
                      "WHERE (SELECT value FROM meta WHERE key = 'generation') IS ?",
                      (value, seen))


def _keep_walk(index: Index, walk: Walk | _LeanWalk | None) -> None:
    """Keep (or, None, forget) the walk the files table matches, for note_written."""
    kept = _OPEN.get(str(index.path)) if index.path is not None else None
    if kept is not None and kept.conn is index.conn:
        kept.walk = walk


def _stamps_unchanged(index: Index, stamps: dict[str, Stamp]) -> bool:
    """Whether the disk is as the index last recorded it (no file to look at)."""
    return stamps == _recorded_stamps(index)


def _recorded_stamps(index: Index) -> dict[str, Stamp]:
    """The files table as stamps, from the process's copy while no refresh has written
    since."""
    kept = _OPEN.get(str(index.path)) if index.path is not None else None
    if kept is None or kept.conn is not index.conn:
        return indexed_stamps(index.conn)
    current = generation(index.conn)
    if kept.stamps is None or kept.stamps_generation != current:
        kept.stamps, kept.stamps_generation = indexed_stamps(index.conn), current
    return kept.stamps


def _indexed_of(index: Index, paths: set[str]
                ) -> tuple[dict[str, FileState], dict[str, str]]:
    """The files table's rows of PATHS (those it holds): looked up one by one when they
    are few, else from the whole table (or the process's copy of it)."""
    kept = _OPEN.get(str(index.path)) if index.path is not None else None
    if len(paths) > _CHUNK or (kept is not None and kept.conn is index.conn
                               and kept.files is not None):
        files, kinds = _indexed(index)
        return ({p: files[p] for p in paths if p in files},
                {p: kinds[p] for p in paths if p in kinds})
    return indexed_files(index.conn, sorted(paths)) if paths else ({}, {})


def indexed_files(conn: sqlite3.Connection, paths: list[str] | None = None
                  ) -> tuple[dict[str, FileState], dict[str, str]]:
    """The files table's {path: state} and {path: home kind}, of PATHS only if given."""
    where = f" WHERE path IN ({', '.join('?' * len(paths))})" if paths is not None else ""
    states: dict[str, FileState] = {}
    kinds: dict[str, str] = {}
    for path, home, size, mtime_ns, ctime_ns, inode, digest in conn.execute(
            "SELECT path, home, size, mtime_ns, ctime_ns, ino, hash FROM files" + where,
            paths or ()):
        states[path] = FileState(size, mtime_ns, ctime_ns, inode, digest)
        kinds[path] = home
    return states, kinds


def content_hash(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def quarantined(conn: sqlite3.Connection) -> list[store.Quarantined]:
    rows = conn.execute(
        "SELECT path, problem FROM files WHERE problem IS NOT NULL ORDER BY path")
    return [store.Quarantined(Path(path), problem) for path, problem in rows]


# ---------------------------------------------------------------- refreshing


def _refresh(index: Index, ws: Workspace, full: bool, progress: Progress | None,
             known: Mapping[str, Known] | None = None,
             given: tuple[Walk | _LeanWalk, set[str]] | None = None) -> None:
    """Bring the files table up to the disk. GIVEN (note_written's): a walk made from
    this process's last one instead of a new walk, and the paths to compare (only these
    can differ from the table); written only if no other refresh has written since."""
    conn, report = index.conn, index.report
    watched = (_WATCHED.get(str(index.path)) if index.path is not None and given is None
               else None)
    if watched is not None:
        quiet = watched.quiet()  # asked before the walk: a change after it is seen next time
        if quiet and not full and watched.clean == (generation(conn),):
            return
        watched.clean = None
    contents: dict[str, bytes] = {}
    seen = None if full else generation(conn)
    suspects: set[str] | None = None
    record = None
    layout: list[tuple[str, str, int]] = []
    lean: _LeanWalk | None = None
    if given is not None:
        suspects = given[1]
        if isinstance(given[0], _LeanWalk):
            lean = given[0]
            digest = lean.digest()
            stamps = lean.stamps_of(suspects)  # only these are compared
        else:
            stamps, layout = given[0].stamps, given[0].layout
            digest = stamps_digest(stamps)
    elif (lean := None if full else _lean_walk(ws)) is not None:
        digest = lean.digest()
        record = walk_record(conn)
        if record is not None and record[0] == seen and record[1] == digest:
            # The table matches the walk but for the racy paths: only theirs are made.
            suspects = set(record[2])
            stamps = lean.stamps_of(suspects)
        else:
            stamps, layout = lean.stamps(), lean.layout()
    else:
        stamps = disk_stamps(ws, contents, layout)
        digest = stamps_digest(stamps)

    def walked(made: str | None, racy: frozenset[str] = frozenset()) -> Walk | _LeanWalk:
        """This refresh's walk, as the files table matches it at generation MADE."""
        if lean is not None:
            return lean.kept_as(made, racy)
        return Walk(stamps, layout, made, racy)

    if not full and given is None:
        if suspects is None:
            record = walk_record(conn)
            if record is not None and record[0] == seen and record[1] == digest:
                suspects = set(record[2])  # the table matches the walk but for these
            elif _stamps_unchanged(index, stamps):
                _note_walk(conn, digest, seen, ())
                suspects = set()
        if suspects is not None and not suspects:
            _keep_walk(index, walked(seen))
            if watched is not None:
                watched.clean = (seen,)
            return
    plan, hashed, kinds, whole = _decide(index, ws, full, contents, stamps, suspects)
    if plan.empty and not full:
        _keep_walk(index, None)
        if watched is not None:
            watched.clean = (seen,)
        return
    if not full and given is None and whole and _only_racy(plan, hashed):
        # Nothing to write: the files whose stamp differs hold the bytes indexed and are
        # still racy (a write now would record them racy again).
        racy = frozenset(plan.touched)
        if record is None or record[0] != seen or record[1] != digest or set(record[2]) != racy:
            _note_walk(conn, digest, seen, racy)
        _keep_walk(index, walked(seen, racy))
        if watched is not None:
            watched.clean = (seen,)
        return
    try:
        # The index's write steps are kill points only: SQLite reports its own I/O
        # errors, and a refresh that fails is answered by a rebuild or a temporary index.
        iostep.step("index begin", fails=False)
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if _busy(exc):
            _mark_stale(index)
            return
        raise
    try:
        if not full and generation(conn) != seen:
            if given is not None:  # another process refreshed: the next command walks
                conn.execute("ROLLBACK")
                _keep_walk(index, None)
                return
            # Another process refreshed between the look and the lock: decide again
            # from what the index holds now (files it added are not added twice).
            contents.clear()  # a file may have changed since it was read: read again
            plan, hashed, kinds, whole = _decide(index, ws, full, contents)
            digest = ""  # not the digest of what this refresh applies
        if full:
            _clear(conn)
        tally = termcounts.Tally(conn, full)
        # A build makes no reference cycles: the collector's passes over the rows
        # and memories it holds alive cost ~2% of a full build, for nothing.
        with gcpause.paused():
            written = _apply(conn, ws, plan, hashed, kinds, contents, progress, known or {},
                             tally)
        # The files table now holds the walk's stamps but for the files recorded racy
        # (size -1), unless a file vanished before it was read: then no digest.
        whole = whole and all(path in written for path in plan.to_read)  # read late: full
        racy = frozenset(path for path, (state, _) in written.items()
                         if state.size != hashed[path].size)
        new_generation = f"{os.getpid()}-{time.time_ns()}"
        value = walk_value(new_generation, digest, racy) if digest and whole else None
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('walk', ?)",
                     (value or "",))
        # The digest earlier versions kept (valid only with no racy row): never left
        # behind a table this version changed.
        conn.execute("DELETE FROM meta WHERE key = 'stamps'")
        large = full or len(plan.to_read) >= max(OPTIMIZE_SHARE * len(hashed),
                                                 OPTIMIZE_MIN_FILES)
        if full:
            conn.execute(schema.FTS_SETTINGS)  # the kept hash size again (see _clear)
        if large:
            conn.execute("INSERT INTO fts (fts) VALUES ('optimize')")
        tally.finish(conn, new_generation)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)",
                     (new_generation,))
        iostep.step("index commit", fails=False)
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
            if full:
                _reload_fts_settings(conn)
        _keep_walk(index, None)
        raise
    _keep_walk(index, walked(new_generation, racy) if value else None)
    if large:
        _compact(conn)
        _truncate_wal(conn)
    _remember(index, full, plan, written)
    if watched is not None:
        watched.clean = (generation(conn),)
    # a file gone (or unreadable) since the walk was not indexed: not counted
    report.new += sum(path in written for path in plan.new)
    report.changed += sum(path in written for path in plan.changed)
    report.deleted += len(plan.deleted)
    report.moved += len(plan.moved)
    report.touched += len(plan.touched)


def note_written(ws: Workspace, paths: Iterable[Path | str]) -> None:
    """Index the files a write (holding the write lock) has just made or replaced, so
    the next command finds nothing to do: no walk, but this process's last one (the
    write's own lookup refreshed the index) with PATHS stated again, and their folder
    listed again if one is new. The record it leaves is the digest of that walk, so a
    file another program changed meanwhile makes the next walk's digest differ (and
    that command compares as before). Nothing is done when this process has no walk
    the table matches, or another process has written the index since."""
    kept = _OPEN.get(str(db_path(ws)))
    walk = kept.walk if kept is not None else None
    if kept is None or walk is None:
        return
    kept.walk = None  # changed in place below: kept again once its record is written
    with contextlib.suppress(sqlite3.Error):
        if generation(kept.conn) != walk.generation:
            return
        written = [str(p) for p in paths]
        given = (_rewalk_lean(ws, walk, written) if isinstance(walk, _LeanWalk)
                 else _rewalk(ws, walk, written))
        if given is not None:
            _refresh(Index(kept.conn, db_path(ws), Report()), ws, False, None, given=given)


def _rewalk(ws: Workspace, walk: Walk, paths: list[str]) -> tuple[Walk, set[str]] | None:
    """WALK with PATHS stated again (dropped if gone) and the folder of any path it
    lacks listed again (known names keep their stamps: one stat per new name), and the
    paths that may differ from the files table: PATHS, the walk's racy ones, and the
    names a listing added or lost. WALK's stamps are changed in place (the caller no
    longer keeps it): only the homes from the first folder listed again on are taken
    out and put back. None when the homes are not the walk's."""
    homes = store.homes(ws)
    folders = [(str(h.path), h.kind) for h in homes]
    if any(h.before for h in homes) or folders != [(f, k) for f, k, _ in walk.layout] \
            or len(dict(folders)) != len(folders):
        return None
    by_folder = {str(h.path): h for h in homes}
    position = {folder: i for i, (folder, _) in enumerate(folders)}
    counts = [count for _, _, count in walk.layout]
    stamps = walk.stamps
    relist: set[str] = set()
    for path in paths:
        folder, name = os.path.split(path)
        if folder not in by_folder or not store.is_memory_name(name):
            return None
        if path not in stamps:
            relist.add(folder)
            continue
        at = position[folder]
        try:
            st = os.lstat(path)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode):
            del stamps[path]
            counts[at] -= 1
        else:
            stamps[path] = (folders[at][1], *stat_numbers(st))  # in its place
    suspects = set(paths) | walk.racy
    first = min((position[folder] for folder in relist), default=len(folders))
    tail = [stamps.popitem() for _ in range(sum(counts[first:]))]
    tail.reverse()
    taken = 0
    for at in range(first, len(folders)):
        folder = folders[at][0]
        part = tail[taken:taken + counts[at]]
        taken += counts[at]
        if folder not in relist:
            stamps.update(part)
            continue
        before = dict(part)
        start = len(stamps)
        _walk_folder(by_folder[folder], stamps, before, set(paths))
        counts[at] = len(stamps) - start
        suspects |= before.keys() ^ set(itertools.islice(reversed(stamps), counts[at]))
    layout = [(f, k, n) for (f, k), n in zip(folders, counts, strict=True)]
    return Walk(stamps, layout, walk.generation), suspects


def _rewalk_lean(ws: Workspace, walk: _LeanWalk, paths: list[str]
                 ) -> tuple[_LeanWalk, set[str]] | None:
    """_rewalk of a lean walk, kept lean: PATHS' numbers stated again in their places
    (dropped if gone), a folder that lacks one of them listed again (known names keep
    their numbers: one stat per new name), no stamp made per file. WALK is changed in
    place."""
    homes = store.homes(ws)
    folders = [(str(h.path), h.kind) for h in homes]
    if any(h.before for h in homes) or folders != [(f, k) for f, k, *_ in walk.parts] \
            or len(dict(folders)) != len(folders):
        return None
    position = {folder: i for i, (folder, _) in enumerate(folders)}
    size = _NUMBERS.size
    asked: dict[int, list[str]] = {}
    for path in paths:
        folder, name = os.path.split(path)
        if folder not in position or not store.is_memory_name(name):
            return None
        asked.setdefault(position[folder], []).append(name)
    suspects = set(paths) | walk.racy
    for at, names_asked in asked.items():
        _, _, prefix, names, numbers = walk.parts[at]
        place = _places(names, len(names_asked))
        places = [place(name) for name in names_asked]
        if None in places:  # a new name: where the folder lists it, only a listing says
            suspects |= _relist(walk, at, set(names_asked))
            continue
        gone = []
        for name, n in zip(names_asked, places, strict=True):
            assert n is not None
            try:
                st = os.lstat(prefix + name)
            except OSError:
                st = None
            if st is None or not stat.S_ISREG(st.st_mode):
                gone.append(n)
            else:
                numbers[n * size:(n + 1) * size] = _NUMBERS.pack(*stat_numbers(st))
        if gone:
            walk.renamed(at)
        for n in sorted(set(gone), reverse=True):
            del names[n]
            del numbers[n * size:(n + 1) * size]
    return walk, suspects


def _relist(walk: _LeanWalk, at: int, fresh: set[str]) -> set[str]:
    """List the folder of WALK's part AT again, in place: a name it held (and not in
    FRESH, the names written) keeps its numbers, the others are stated. The paths
    whose presence changed."""
    folder, kind, prefix, names, numbers = walk.parts[at]
    size = _NUMBERS.size
    old = {name: n for n, name in enumerate(names)}
    new_names: list[str] = []
    new_numbers = bytearray()
    with _memory_files(folder, unstated=lambda name: name in old and name not in fresh
                       ) as files:
        for name, st in files:
            if st is _UNSTATED:
                n = old[name]
                new_numbers += numbers[n * size:(n + 1) * size]
            else:
                new_numbers += _NUMBERS.pack(*stat_numbers(st))
            new_names.append(name)
    walk.parts[at] = (folder, kind, prefix, new_names, new_numbers)
    walk.renamed(at)
    return {prefix + name for name in old.keys() ^ set(new_names)}


def _only_racy(plan: Plan, hashed: Mapping[str, FileState]) -> bool:
    """Whether the plan only touches files (same bytes, other stamp) still in the racy
    window: recording them would record them racy again."""
    if not plan.touched or plan.new or plan.changed or plan.deleted or plan.moved:
        return False
    now_ns = time.time_ns()
    return all(_recorded(hashed[path], now_ns)[0] == -1 for path in plan.touched)


def _decide(index: Index, ws: Workspace, full: bool, contents: dict[str, bytes],
            stamps: dict[str, Stamp] | None = None, suspects: set[str] | None = None
            ) -> tuple[Plan, dict[str, FileState], dict[str, str], bool]:
    """What a refresh must do: the disk (STAMPS, or a new scan) against the files
    table. `contents` keeps the bytes read for hashing (a second decision reads no
    file twice) and the bytes from before of files an unsettled submit rewrote.

    Only the paths whose stamp differs from the table's, and those gone from the disk,
    are compared (plan_changes looks at no other): a one-file change at 100,000
    memories builds two states, not 200,000. SUSPECTS, when given, are those paths
    (known from a walk record: the table is then not read). Returns the plan, the
    compared disk states (hashed where needed), their home kinds, and whether every
    compared file could still be read."""
    stamps = disk_stamps(ws, contents) if stamps is None else stamps
    if full:
        compared = stamps
        old: dict[str, FileState] = {}
        old_kinds: dict[str, str] = {}
    elif suspects is not None:
        compared = {p: stamps[p] for p in suspects if p in stamps}
        old, old_kinds = _indexed_of(index, suspects)
    else:
        recorded = _recorded_stamps(index)
        compared = {p: s for p, s in stamps.items() if recorded.get(p) != s}
        old, old_kinds = _indexed_of(index, compared.keys() | (recorded.keys() - stamps.keys()))
    disk, kinds = states_of(compared)
    hashed: dict[str, FileState] = dict(disk)
    # A full build compares with nothing, so it needs no hash to decide: each file is
    # read and hashed with its rows (file_rows, partly in index.ahead's helper), not all
    # up front (at 100,000 memories ~3 s in this process alone, and ~260 MB held).
    for path in () if full else needs_hash(old, disk):
        data = contents.get(path)
        if data is None:
            data = _read_since_walk(path)
            if data is None:
                hashed.pop(path, None)
                continue
            contents[path] = data
        hashed[path] = disk[path]._replace(hash=content_hash(data))
    plan = plan_changes(old, hashed)
    # A move between homes changes what the file means (its scope check): re-read it.
    for src, dst in list(plan.moved):
        if old_kinds.get(src) != kinds.get(dst):
            plan.moved.remove((src, dst))
            plan.deleted.append(src)
            plan.new.append(dst)
    return plan, hashed, kinds, len(hashed) == len(disk)


def _read_since_walk(path: str) -> bytes | None:
    """The bytes of the memory file PATH the walk found, or None when it can no longer
    be read as one: gone, unreadable, or no longer a regular file (a symbolic link or
    a FIFO put in its place since: store.read_bytes' InvalidMemory, the walk's rule).
    A refresh then leaves it out, as the walk would have; the one rule of _decide and
    file_rows."""
    try:
        return store.read_bytes(path)
    except (OSError, InvalidMemory):
        return None


def _truncate_wal(conn: sqlite3.Connection) -> None:
    """Fold a large WAL into the file and cut it back to nothing. With no busy wait: a
    reader in another process makes the checkpoint give up at once rather than stall
    this refresh and the writers behind it; the WAL is then cut back later, to
    journal_size_limit, once a checkpoint completes."""
    try:
        iostep.step("index checkpoint", fails=False)
        conn.execute("PRAGMA busy_timeout = 0")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT_SECONDS * 1000)}")


def _remember(index: Index, full: bool, plan: Plan,
              written: dict[str, tuple[FileState, str]]) -> None:
    """Update the process's copy of the files table with what this refresh wrote."""
    kept = _OPEN.get(str(index.path)) if index.path is not None else None
    if kept is None or kept.files is None or kept.kinds is None:
        return
    if full:
        kept.files, kept.kinds = {}, {}
    for path in plan.deleted + plan.changed:
        kept.files.pop(path, None)
        kept.kinds.pop(path, None)
    for src, _dst in plan.moved:
        kept.files.pop(src, None)
        kept.kinds.pop(src, None)
    for path, (state, kind) in written.items():
        kept.files[path] = state
        kept.kinds[path] = kind
    kept.generation = generation(index.conn)


def _clear(conn: sqlite3.Connection) -> None:
    """Empty everything but the usage hints (which are keyed by memory id)."""
    conn.execute("DELETE FROM files")
    conn.execute("DELETE FROM memories")
    conn.execute("DELETE FROM links")
    conn.execute("DELETE FROM chain_warnings")
    conn.execute("DELETE FROM guards")
    conn.execute("DELETE FROM pair_cache")
    conn.execute("DELETE FROM meta WHERE key = 'memories'")  # derive counts them again
    conn.execute("INSERT INTO fts (fts) VALUES ('delete-all')")
    # the build's postings in one segment (schema.FTS_BUILD_HASH_BYTES); _refresh puts
    # schema.FTS_SETTINGS back before it commits (an index made before that setting
    # gets it then), a rollback takes both back
    conn.execute(schema.FTS_BUILD_SETTINGS)


def _reload_fts_settings(conn: sqlite3.Connection) -> None:
    """After a rolled-back full build: FTS5 keeps a setting the transaction changed (the
    build's hash size, _clear) in the connection's memory until it next reads the table's
    structure, which a query does; it then reads the kept settings again."""
    conn.execute("SELECT rowid FROM fts WHERE fts MATCH 'settings' LIMIT 1").fetchall()


def _recorded(state: FileState, now_ns: int) -> tuple[int, int, int, int]:
    """The stat a files row records of STATE: the size as -1 while the file is racy."""
    size = -1 if state.mtime_ns > now_ns - RACY_NS else state.size
    return size, state.mtime_ns, state.ctime_ns, state.ino


def _delete_paths(conn: sqlite3.Connection, paths: Iterable[str],
                  tally: termcounts.Tally | None = None) -> tuple[set[str], int]:
    """Remove files (and their memories, with what capture's check kept of them:
    pair_cache) from the index; returns the ids removed and how many rows."""
    ids: set[str] = set()
    rows = 0
    for path in paths:
        row = conn.execute("SELECT rowid, id, doc, zbody FROM memories WHERE path = ?",
                           (path,)).fetchone()
        if row is not None:
            text = fts_row(stored_memory(json.loads(row[2]), body_text(row[3])))
            conn.execute("INSERT INTO fts (fts, rowid, title, tags, body, aliases) "
                         "VALUES ('delete', ?, ?, ?, ?, ?)", (row[0], *text))
            if tally is not None:
                tally.remove(text)
            conn.execute("DELETE FROM memories WHERE rowid = ?", (row[0],))
            conn.execute("DELETE FROM links WHERE src = ?", (row[0],))
            conn.execute("DELETE FROM pair_cache WHERE rowid = ?", (row[0],))
            ids.add(row[1])
            rows += 1
        conn.execute("DELETE FROM files WHERE path = ?", (path,))
        conn.execute("DELETE FROM guards WHERE path = ?", (path,))
    return ids, rows


# A row's JSON (its front matter, tags, paths) is jsonout.compact's: one encoder made
# once, not json.dumps's new one a call (~2 us, three calls a row). Tags and paths are
# lists of texts (model._coerce), a front matter a parsed mapping: no reference cycle.


def memory_row(path: str, kind: str, m: model.Memory, order: int,
               titled: str | None = None, data: dict[str, Any] | None = None
               ) -> tuple[object, ...]:
    """The memories row (columns as _flush names them) of the memory M of the file PATH
    in the home of KIND, which is ORDER-th in store.homes order; TITLED: with_title of
    its title and body, when made already (file_rows makes it once for this and
    fts_row); DATA: the parsed front matter M was made from (listing.front: a canonical
    file's is its front_matter() as it is, not made again)."""
    # the body's UTF-8 once, for its stored form and the listing's look at its bytes
    raw = m.body.encode("utf-8")
    front, plain_types = (m.front_matter(), False) if data is None else listing.front(data, m)
    doc, listed, summary = listing.stored(front, m.body, raw, plain_types)
    if titled is None:
        titled = with_title(m.title, m.body)
    return (
        path, m.id, kind, order, m.scope, m.type, m.status,
        m.review_state, m.importance, m.created_at or None, m.updated_at or None,
        m.retired_at or None, m.valid_from or None, m.valid_until or None,
        m.expires_at or None, m.supersedes, m.superseded_by,
        jsonout.compact(m.tags), jsonout.compact(m.paths), doc,
        pack_body(m.body, raw), text_key(passage_of(titled, m.aliases)), m.role,
        listed, summary,
    )


def link_targets(memory: model.Memory) -> list[str]:
    """The ids of the links table's rows for one memory: each id its relations list,
    once, in order."""
    lists = _RELATION_LISTS(memory)
    if not any(lists):  # most memories name none: no generator to run
        return []
    return list(dict.fromkeys(dst for ids in lists for dst in ids))


# A memory's relations lists, in model.RELATIONS' order, in one call.
_RELATION_LISTS = operator.attrgetter(*model.RELATIONS)


def stored_memory(data: dict[str, Any], body: str) -> model.Memory:
    """A Memory from the index's copy of its front matter (validated when indexed)."""
    if model.KNOWN_KEYS.issuperset(data):  # the usual case: no keys unknown here
        return model.assemble(body, {}, data)
    known = {k: v for k, v in data.items() if k in model.KNOWN_KEYS}
    extra = {k: v for k, v in data.items() if k not in model.KNOWN_KEYS}
    return model.assemble(body, extra, known)


_RULE: list[str] = []


def text_rule() -> str:
    """A digest of what fts_row makes of a few memories (CJK, a title apart from the
    body, tags, aliases) and of their doc and listing columns (index.listing): a
    change to either rule changes it, and the index is rebuilt rather than left holding
    text its deletes would no longer match or listings in another form."""
    if not _RULE:
        samples = [
            model.Memory(id="r", scope="project", title="Ship it", body="依赖管理用 pnpm.",
                         tags=["ci-cd", "日本"], aliases=["roll out", "部署"]),
            model.Memory(id="r", scope="project", body="First line\nthen more words"),
        ]
        digest = blake2b(digest_size=8)
        for sample in samples:
            digest.update("\x00".join(fts_row(sample)).encode("utf-8"))
            doc, listed, summary = listing.stored(sample.front_matter(), sample.body)
            digest.update(f"\x00{doc}\x00{listed}\x00".encode() + (summary or b""))
        _RULE.append(digest.hexdigest())
    return _RULE[0]


def fts_row(m: model.Memory, titled: str | None = None) -> tuple[str, str, str, str]:
    """(title, tags, body, aliases) as indexed. The body column always holds the title's
    words once (a default title is the body's first line; an explicit one is
    prepended), so the title column's weight is pure emphasis and a derived title is
    not counted three times over. TITLED: with_title(m.title, m.body) when made
    already."""
    if titled is None:
        titled = with_title(m.title, m.body)
    return (tokens.segment(m.title.strip()), tokens.segment(" ".join(m.tags)),
            tokens.segment(titled), tokens.segment("\n".join(m.aliases)))


def fts_body(title: str, body: str) -> str:
    """The fts body column of a memory with this title and body (see fts_row)."""
    return tokens.segment(with_title(title, body))


def _apply(conn: sqlite3.Connection, ws: Workspace, plan: Plan,
           disk: dict[str, FileState], kinds: dict[str, str],
           contents: dict[str, bytes], progress: Progress | None,
           known: Mapping[str, Known], tally: termcounts.Tally | None = None
           ) -> dict[str, tuple[FileState, str]]:
    """Apply the plan; returns the files rows written {path: (state, home kind)}.
    CONTENTS (the bytes read already) loses each file's bytes once its rows are made."""
    now_ns = time.time_ns()
    written: dict[str, tuple[FileState, str]] = {}
    touched_ids, removed = _delete_paths(conn, plan.deleted + plan.changed, tally)
    added = 0
    for src, dst in plan.moved:
        recorded = _recorded(disk[dst], now_ns)
        written[dst] = (FileState(*recorded, disk[dst].hash), kinds[dst])
        conn.execute("UPDATE files SET path = ?, size = ?, mtime_ns = ?, ctime_ns = ?, "
                     "ino = ? WHERE path = ?", (dst, *recorded, src))
        row = conn.execute("SELECT id FROM memories WHERE path = ?", (src,)).fetchone()
        conn.execute("UPDATE memories SET path = ? WHERE path = ?", (dst, src))
        conn.execute("UPDATE guards SET path = ? WHERE path = ?", (dst, src))
        if row is not None:
            touched_ids.add(row[0])
    for path in plan.touched:
        recorded = _recorded(disk[path], now_ns)
        conn.execute("UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ?, ino = ? "
                     "WHERE path = ?", (*recorded, path))
        written[path] = (FileState(*recorded, disk[path].hash), kinds[path])
    order = home_order(ws)
    homes = {h.kind: h for h in store.homes(ws)}
    next_rowid = (conn.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()[0]
                  + 1)
    todo = plan.to_read
    files_rows: list[tuple[object, ...]] = []
    mem_rows: list[tuple[object, ...]] = []
    text_rows: list[tuple[object, ...]] = []
    guard_rows: list[tuple[object, ...]] = []
    link_out: list[tuple[int, str]] = []
    object_format = ws.config.get("extensions.objectformat", "sha1")

    def _flush_all() -> None:
        _flush(conn, files_rows, mem_rows, text_rows, tally)
        conn.executemany("INSERT INTO guards (path, id, kind, blob, body_hash) "
                         "VALUES (?, ?, ?, ?, ?)", guard_rows)
        guard_rows.clear()
        conn.executemany("INSERT INTO links (src, dst) VALUES (?, ?)", link_out)
        link_out.clear()

    def rows_of(path: str) -> FileRows | None:
        return file_rows(path, kinds[path], _recorded(disk[path], now_ns), disk[path].hash,
                         contents.get(path), known.get(path), homes, order, object_format)

    if len(todo) > 1:
        from memex.index import ahead  # its fork loads pickle and queue

        made: Iterable[FileRows | None] = ahead.in_order(todo, rows_of)
    else:  # a write's own file (note_written): nothing to share with a helper
        made = map(rows_of, todo)
    for done, rows in enumerate(made, 1):
        if rows is not None:  # None: gone (or unreadable) since the walk: left out
            files_row, guard, memory = rows
            path, kind, size, mtime, ctime, inode, hash_ = files_row[:7]
            # the file's bytes are let go once its rows are made (a full build at 100,000
            # memories held ~330 MB of them to its end)
            contents.pop(path, None)
            if guard is not None:
                guard_rows.append(guard)
            files_rows.append(files_row)
            written[path] = (FileState(size, mtime, ctime, inode, hash_), kind)
            if memory is not None:
                row, text, links, mid = memory
                mem_rows.append((next_rowid, *row))
                text_rows.append((next_rowid, *text))
                link_out.extend((next_rowid, dst) for dst in links)
                touched_ids.add(mid)
                next_rowid += 1
                added += 1
        if len(files_rows) >= _CHUNK or done == len(todo):
            _flush_all()
            if progress is not None:
                progress(done, len(todo))
    derive(conn, touched_ids, added - removed)
    return written


# What file_rows makes of one file: its files row, its guards row or None, and when it
# reads as a memory, (its memories row and FTS text, both without the rowid, the ids
# its links name, its id).
FileRows = tuple[tuple[str, str, int, int, int, int, str, str | None],
                 tuple[object, ...] | None,
                 tuple[tuple[object, ...], tuple[str, ...], list[str], str] | None]


def file_rows(path: str, kind: str, recorded: tuple[int, int, int, int], hash_: str | None,
              data: bytes | None, seen: Known | None, homes: Mapping[str, store.Home],
              order: Mapping[str, int], object_format: str) -> FileRows | None:
    """The rows of the memory file PATH (in the home of KIND; its bytes DATA when read
    already, SEEN: a caller's parse of it) as a refresh writes them; HASH_ None: the
    file's content hash is made here. Reads no index, writes nothing: a forked helper
    may make them (index.ahead). None when DATA is not given and the file cannot be
    read (gone since the walk, or no longer a regular file): a refresh then leaves it
    out, as _decide does a file it cannot read to hash."""
    size, mtime, ctime, inode = recorded
    problem: str | None = None
    memory: model.Memory | None = None
    # The walk's names are memory names (store.is_memory_name: "<stem>.md"); the
    # path stays text (a Path per file cost ~5 us of a ~150 us file).
    name = os.path.basename(path)
    if data is None:
        data = _read_since_walk(path)
        if data is None:
            return None
    if hash_ is None:
        hash_ = content_hash(data)
    try:
        if seen is not None and seen.data == data:
            parsed = seen.parsed
            memory = store.placed(parsed, name, name[:-3], homes[kind], seen.memory)
        else:
            from memex.core import frontmatter

            parsed = frontmatter.parse(store.decode(data))
            memory = store.placed(parsed, name, name[:-3], homes[kind])
    except (InvalidMemory, OSError) as exc:
        problem = str(exc) or type(exc).__name__
        memory = None
    guard = guard_row(path, kind, data, memory, object_format)
    files_row = (path, kind, size, mtime, ctime, inode, hash_, problem)
    if memory is None:
        return files_row, guard, None
    titled = with_title(memory.title, memory.body)
    return files_row, guard, (memory_row(path, kind, memory, order[kind], titled, parsed.data),
                              fts_row(memory, titled), link_targets(memory), memory.id)


def guard_row(path: str, kind: str, data: bytes, memory: model.Memory | None,
              object_format: str) -> tuple[object, ...] | None:
    """A guards row for a personal or private memory file (unreadable files of the
    personal home included: their content is personal all the same), else None."""
    if memory is not None:
        if memory.scope == "personal":
            what = "personal"
        elif memory.visibility == "private":
            what = "private"
        else:
            return None
        body = memory.body
        mid = memory.id
        # and what `show` / `show --json` print of it (listing.shown_hashes)
        shown = listing.shown_hashes(memory, path, kind)
    elif kind == "personal":
        what, mid, shown = "personal", Path(path).stem, []
        text = fingerprint.decode_loose(data) or ""
        body = fingerprint.loose_body(text) or text
    else:
        return None
    hashes = [h for h in (fingerprint.body_hash(body), *shown) if h]
    return (path, mid, what, fingerprint.blob_id(data, object_format),
            " ".join(hashes) or None)


def guards(conn: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    """{blob id or body hash: (memory id, personal | private)} of every guarded file."""
    out: dict[str, tuple[str, str]] = {}
    for blob, body_hash, mid, kind in conn.execute(
            "SELECT blob, body_hash, id, kind FROM guards"):
        out[str(blob)] = (str(mid), str(kind))
        for digest in str(body_hash or "").split():  # the body's, show's, show --json's
            out[digest] = (str(mid), str(kind))
    return out


def _flush(conn: sqlite3.Connection, files_rows: list[tuple[object, ...]],
           mem_rows: list[tuple[object, ...]], text_rows: list[tuple[object, ...]],
           tally: termcounts.Tally | None = None) -> None:
    iostep.step("index write", fails=False)
    conn.executemany("INSERT OR REPLACE INTO files (path, home, size, mtime_ns, ctime_ns, ino, "
                     "hash, problem) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", files_rows)
    conn.executemany(
        "INSERT INTO memories (rowid, path, id, home, home_order, scope, type, status, "
        "review_state, importance, created_at, updated_at, retired_at, valid_from, "
        "valid_until, expires_at, supersedes, superseded_by, tags, paths, doc, zbody, "
        "text_key, role, listed, summary) "
        "VALUES (" + ", ".join("?" * 26) + ")", mem_rows)
    conn.executemany("INSERT INTO fts (rowid, title, tags, body, aliases) "
                     "VALUES (?, ?, ?, ?, ?)", text_rows)
    if tally is not None:
        tally.add(text_rows)
    files_rows.clear()
    mem_rows.clear()
    text_rows.clear()


# ---------------------------------------------------------------- derived state


_CHAIN_COLUMNS = ("id, home, scope, status, review_state, created_at, retired_at, "
                  "supersedes, superseded_by, json_extract(doc, '$.related')")


def derive(conn: sqlite3.Connection, touched_ids: set[str], change: int | None = None
           ) -> None:
    """Recompute what reads derive across files: duplicate ids and completed chains
    (lifecycle.complete_chains, exactly as reads.load_view applies it). CHANGE: how
    many memories rows the caller added less those it removed since the count kept in
    meta was right (None: not known, they are counted)."""
    ids = sorted(_shadow_candidates(conn, touched_ids))
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i : i + _CHUNK]
        marks = ", ".join("?" * len(chunk))
        # Only the rows whose mark changes are written (a row holds its whole body).
        conn.execute(
            f"UPDATE memories SET shadowed = 1 - shadowed WHERE id IN ({marks}) AND "
            "shadowed != EXISTS (SELECT 1 FROM memories o "
            "WHERE o.id = memories.id AND (o.home_order < memories.home_order OR "
            "(o.home_order = memories.home_order AND o.path < memories.path)))", chunk)
    conn.execute("UPDATE memories SET eff_status = NULL, eff_retired_at = NULL, "
                 "eff_superseded_by = NULL WHERE eff_status IS NOT NULL "
                 "OR eff_retired_at IS NOT NULL OR eff_superseded_by IS NOT NULL")
    # Each branch of the union reads one partial index (schema 7), not every row; the
    # rows come in rowid order, as a scan of the table gave them.
    rows = conn.execute(
        f"SELECT {_CHAIN_COLUMNS} FROM memories WHERE shadowed = 0 AND rowid IN ("
        "SELECT rowid FROM memories WHERE supersedes IS NOT NULL "
        "UNION SELECT rowid FROM memories WHERE superseded_by IS NOT NULL "
        "UNION SELECT rowid FROM memories WHERE id IN "
        "(SELECT supersedes FROM memories WHERE supersedes IS NOT NULL) "
        "UNION SELECT rowid FROM memories WHERE id IN "
        "(SELECT superseded_by FROM memories WHERE superseded_by IS NOT NULL)) "
        "ORDER BY rowid").fetchall()
    write_completed_chains(conn, rows)
    conn.execute(
        "INSERT INTO chain_warnings (id, message) SELECT s.id, s.id || ' exists in more "
        "than one place; showing ' || (SELECT w.path FROM memories w WHERE w.id = s.id "
        "AND w.shadowed = 0) FROM memories s WHERE s.shadowed = 1 ORDER BY s.rowid")
    # the count is kept as it changes where meta holds it (counting the rows cost ~12 ms
    # a write at 100,000 memories); _clear drops it, so a full build counts
    if change is None or not conn.execute(
            "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'memories'",
            (change,)).rowcount:
        conn.execute("INSERT OR REPLACE INTO meta (key, value) "
                     "SELECT 'memories', count(*) FROM memories")


def _shadow_candidates(conn: sqlite3.Connection, touched_ids: set[str]) -> set[str]:
    """The ids of TOUCHED_IDS whose rows' shadowed mark may be wrong: only a row whose
    id is held more than once may need a 1, and only a row marked 1 may need a 0. Many
    ids (a full build's every id: ~0.25 CPU s at 100,000, the look-up of each) are
    narrowed to those by one pass over the id index; a few are looked up as they are."""
    if len(touched_ids) <= _CHUNK:
        return touched_ids
    held = {mid for (mid,) in conn.execute(
        "SELECT id FROM memories GROUP BY id HAVING count(*) > 1 "
        "UNION SELECT id FROM memories WHERE shadowed = 1")}
    return touched_ids & held


def write_completed_chains(conn: sqlite3.Connection, rows: list[Any]) -> None:
    """Complete the chains of ROWS (_CHAIN_COLUMNS of every chain member) and write the
    effective values that differ from the file's, and the chain warnings."""
    skeletons = [skeleton(row) for row in rows]
    pending = frozenset(row[0] for row in rows if row[1] == "outbox")
    completed, warnings = lifecycle.complete_chains(skeletons, pending)
    for before in skeletons:
        after = completed[before.id]
        if (after.status, after.retired_at, after.superseded_by) != (
                before.status, before.retired_at, before.superseded_by):
            conn.execute(
                "UPDATE memories SET eff_status = ?, eff_retired_at = ?, "
                "eff_superseded_by = ? WHERE id = ? AND shadowed = 0",
                (after.status, after.retired_at, after.superseded_by, after.id))
    conn.execute("DELETE FROM chain_warnings")
    conn.executemany("INSERT INTO chain_warnings (id, message) VALUES (?, ?)",
                     [(w.id, w.message) for w in warnings])


def memory_paths(conn: sqlite3.Connection, home: str) -> set[str]:
    """The paths of the memories the index holds from one home kind (e.g. "repo")."""
    return {str(path) for (path,) in conn.execute(
        "SELECT path FROM memories WHERE home = ?", (home,))}


def file_hashes(conn: sqlite3.Connection, home: str) -> dict[str, str]:
    """{path: content hash} of the files the index holds from one home kind, readable
    or not (verify finds its cached verdicts by them)."""
    return {str(path): str(digest) for path, digest in conn.execute(
        "SELECT path, hash FROM files WHERE home = ?", (home,))}


def memory_count(conn: sqlite3.Connection) -> int:
    """How many memories the index holds (kept in meta by each refresh)."""
    count = schema.meta(conn, "memories")
    return int(count) if count else 0


def skeleton(row: tuple[object, ...]) -> model.Memory:
    """The fields eligibility and chains look at, without parsing the file again."""
    (mid, _home, scope, status, review_state, created_at, retired_at, supersedes,
     superseded_by, related) = row
    try:  # lifecycle.kept_over reads it
        links = json.loads(related) if isinstance(related, str) else []
    except ValueError:
        links = []
    return model.Memory(
        related=[str(x) for x in links] if isinstance(links, list) else [],
        # the row's values passed model.validate when the file was parsed
        id=str(mid), scope=cast(model.Scope, scope), status=cast(model.Status, status),
        review_state=cast(model.ReviewState, review_state) if isinstance(review_state, str)
        else None,
        created_at=created_at if isinstance(created_at, str) else "",
        retired_at=retired_at if isinstance(retired_at, str) else None,
        supersedes=supersedes if isinstance(supersedes, str) else None,
        superseded_by=superseded_by if isinstance(superseded_by, str) else None,
    )


def read_warnings(conn: sqlite3.Connection) -> list[str]:
    return [message for (message,) in conn.execute(
        "SELECT message FROM chain_warnings ORDER BY rowid")]
