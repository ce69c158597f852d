"""Each memory's word set, kept beside the index for the next `health` (issue 18).

`health`'s pair passes start from one word pass per live memory (`pairs.Words`:
every `\\w+` word of its title and body, lower-cased). At 10,000 memories of ~3 KB
that pass makes ~4.5 million short strings, about a third of a report's time once the
paired results (hygiene-cache.json) are gone. This cache keeps each set as numbers
over a vocabulary, in `<index dir>/words.sqlite`, keyed by the file's content hash
(the index's `files.hash`) and a digest of the source of every module between the
file's bytes and the words (the word rule, the parser, the model, the index rows the
text is read from) with git-memex's and Python's versions (Unicode's `\\w` and
lower-casing): a set is only ever read back for the exact bytes and code it was made
from. Made on first use, by the report that needed the sets (no index build pays for
it); rows of files no longer live are dropped at the next write. Disposable: an
unreadable or busy cache is ignored and the words are split again.
"""

from __future__ import annotations

import contextlib
import operator
import sys
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memex.storage.sources import of_sources
from memex.workflows import pairs

if TYPE_CHECKING:
    import sqlite3

NAME = "words.sqlite"
# What a memory's word set depends on besides the file's bytes.
_RULE_MODULES = ("memex.workflows.pairs", "memex.workflows.hygiene", "memex.core.frontmatter",
                 "memex.core.model", "memex.storage.store", "memex.index.build",
                 "memex.index.bodies", __name__)
_CODE = "I"  # word ids: 4 bytes each, native order (the cache never leaves this machine)

Progress = Callable[[int, int], None]


_VERSION: list[str | None] = []  # taken once per process, at first use


def rules_version() -> str | None:
    """A digest of the code that turns a file's bytes into its word set; None when a
    source cannot be read (then nothing is kept). Taken once, at first use (after
    those modules are imported, as conflicts' at import): a long-lived process upgraded
    under it names its rows by the code that runs."""
    from memex import __version__

    if not _VERSION:
        _VERSION.append(of_sources(
            _RULE_MODULES, f"{__version__} {sys.version} {array(_CODE).itemsize}"))
    return _VERSION[0]


_LAYOUT = "2"  # the tables' layout: any other (or none) is dropped and made again
_TABLES = ("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
           "CREATE TABLE vocab (id INTEGER PRIMARY KEY, word TEXT NOT NULL UNIQUE)",
           "CREATE TABLE word_sets (hash TEXT NOT NULL UNIQUE, ids BLOB NOT NULL)")


def _busy(exc: BaseException) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _layout(conn: sqlite3.Connection) -> str | None:
    import sqlite3

    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'layout'").fetchone()
    except sqlite3.OperationalError as exc:  # no such table (or column): not ours
        if _busy(exc):
            raise
        return None
    return None if row is None else str(row[0])


def _make_tables(conn: sqlite3.Connection) -> None:
    """Drop every table of another layout (or of none) and make this one's, in one
    write transaction (another process may have made them meanwhile)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _layout(conn) != _LAYOUT:
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                        "AND name NOT LIKE 'sqlite_%'").fetchall():
                conn.execute(f'DROP TABLE "{name}"')
            for statement in _TABLES:
                conn.execute(statement)
            conn.execute("INSERT INTO meta VALUES ('layout', ?)", (_LAYOUT,))
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise


def _connect(index_dir: Path) -> sqlite3.Connection:
    import sqlite3

    index_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(index_dir / NAME), timeout=0.5, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")  # a cache, as the index: a crash loses nothing
    conn.execute("PRAGMA secure_delete = ON")  # a dropped set's words leave the file's bytes
    return conn


def _read_kept(conn: sqlite3.Connection, words: pairs.Words,
               version: str) -> tuple[dict[int, str], dict[str, bytes]]:
    """The vocabulary and the kept sets, read in one read transaction: a process that
    starts the cache over meanwhile cannot pair sets with another vocabulary."""
    conn.execute("BEGIN")
    try:
        layout = _layout(conn)
        vocab: dict[int, str] = {}
        kept: dict[str, bytes] = {}
        if layout == _LAYOUT:
            row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is not None and row[0] == version:
                rows = conn.execute("SELECT id, word FROM vocab").fetchall()
                vocab = dict(zip((n for n, _ in rows), words.share(w for _, w in rows),
                                 strict=True))
                kept = dict(conn.execute("SELECT hash, ids FROM word_sets"))
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise
    if layout != _LAYOUT:
        _make_tables(conn)
    return vocab, kept


def read(index_dir: Path, texts: Sequence[str], hashes: Sequence[str],
         progress: Progress | None = None, words: pairs.Words | None = None) -> pairs.Words:
    """`pairs.Words` (WORDS, or a new one) holding the word set of every text (texts[n]
    is the title and body of the file whose content hash is hashes[n]): the kept ones
    read back, the others split and kept for the next report."""
    import sqlite3

    words = words if words is not None else pairs.Words()
    version = rules_version()
    conn = None
    vocab: dict[int, str] = {}
    kept: dict[str, bytes] = {}
    if version is not None:
        try:
            conn = _connect(index_dir)
            vocab, kept = _read_kept(conn, words, version)
        except (sqlite3.Error, OSError) as exc:
            vocab, kept = {}, {}
            if conn is not None:
                conn.close()
            conn = None
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                    exc, sqlite3.OperationalError):  # not a database: repaired in place
                from memex.index import build

                with contextlib.suppress(OSError):
                    build.cut_back(index_dir / NAME)
    made: dict[str, frozenset[str]] = {}
    spelled = vocab.__getitem__
    total = len(texts)
    for done, (text, content_hash) in enumerate(zip(texts, hashes, strict=True), 1):
        if text not in words:
            ids = kept.get(content_hash)
            if ids is None:
                made[content_hash] = words[text]
            else:
                try:
                    dict.__setitem__(words, text, frozenset(map(spelled, array(_CODE, ids))))
                except (KeyError, ValueError):  # a damaged row: split the text again
                    made[content_hash] = words[text]
        if progress is not None and (done % 256 == 0 or done == total):
            progress(done, total)
    if conn is not None:
        with contextlib.closing(conn):
            _keep(conn, version, words, made, kept.keys() - set(hashes))
    return words


def _encode(found: frozenset[str], ids: dict[str, int]) -> bytes:
    if len(found) > 1:  # one C call for all the lookups
        return array(_CODE, operator.itemgetter(*found)(ids)).tobytes()
    return array(_CODE, map(ids.__getitem__, found)).tobytes()


def _keep(conn: sqlite3.Connection, version: str | None, words: pairs.Words,
          made: dict[str, frozenset[str]], gone: set[str]) -> None:
    """Store the sets made (numbering their new words: those of `words` not numbered
    yet) and drop the rows of files no longer read with every word no kept set uses
    any more (a deleted memory's words leave the file), in one write transaction."""
    import sqlite3

    if not made and not gone:
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        if row is None or row[0] != version:  # another code's rows: start over
            conn.execute("DELETE FROM word_sets")
            conn.execute("DELETE FROM vocab")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version,))
        ids = {w: n for n, w in conn.execute("SELECT id, word FROM vocab")}
        first = max(ids.values(), default=-1) + 1  # ids of dropped words are not reused
        new = [(first + n, word) for n, word in enumerate(
            word for word in words.spelled() if word not in ids)]
        ids.update((word, n) for n, word in new)  # every word of every set made
        rows = [(content_hash, _encode(found, ids)) for content_hash, found in made.items()]
        conn.executemany("INSERT INTO vocab (id, word) VALUES (?, ?)", new)
        conn.executemany("INSERT OR REPLACE INTO word_sets (hash, ids) VALUES (?, ?)", rows)
        if gone:
            conn.executemany("DELETE FROM word_sets WHERE hash = ?", ((h,) for h in gone))
            used = set(array(_CODE, b"".join(
                blob for (blob,) in conn.execute("SELECT ids FROM word_sets"))))
            conn.executemany("DELETE FROM vocab WHERE id = ?",
                             ((n,) for n in ids.values() if n not in used))
        conn.execute("COMMIT")
    except (sqlite3.Error, ValueError):  # busy, or a damaged row: kept as it is
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
