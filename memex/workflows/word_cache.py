"""Each memory's word set, kept beside the index for the next `health` (issue 18).

`health`'s pair passes start from one word pass per live memory (`pairs.WordIds`:
every `\\w+` word of its title and body, lower-cased, as the ids of the words). At
10,000 memories of ~3 KB that pass makes ~4.5 million short strings, about a third of
a report's time once the paired results (hygiene-cache.json) are gone. This cache
keeps each set as those ids (a kept set is read back as it is stored, a made one
written as it is held) with their vocabulary, in `<index dir>/words.sqlite`, keyed by
the file's content hash (the index's `files.hash`) and a digest of the source of every
module between the file's bytes and the words (the word rule, the parser, the model,
the index rows the text is read from) with git-memex's and Python's versions (Unicode's `\\w` and
lower-casing): a set is only ever read back for the exact bytes and code it was made
from. Made on first use, by the report that needed the sets (no index build pays for
it); rows of files no longer live are dropped at the next write. Disposable: an
unreadable or busy cache is ignored and the words are split again.
"""

from __future__ import annotations

import contextlib
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
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
_CODE = pairs.ID_CODE  # word ids: native order (the cache never leaves this machine)

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


def _read_kept(conn: sqlite3.Connection, words: pairs.WordIds,
               version: str) -> dict[str, bytes]:
    """The kept sets, their vocabulary given to WORDS, read in one read transaction: a
    process that starts the cache over meanwhile cannot pair sets with another
    vocabulary."""
    conn.execute("BEGIN")
    try:
        layout = _layout(conn)
        kept: dict[str, bytes] = {}
        if layout == _LAYOUT:
            row = conn.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
            if row is not None and row[0] == version:
                words.know(conn.execute("SELECT id, word FROM vocab").fetchall())
                kept = dict(conn.execute("SELECT hash, ids FROM word_sets"))
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(Exception):
            conn.execute("ROLLBACK")
        raise
    if layout != _LAYOUT:
        _make_tables(conn)
    return kept


def read(index_dir: Path, texts: Sequence[str], hashes: Sequence[str],
         progress: Progress | None = None, words: pairs.WordIds | None = None,
         counts: Counter[int] | None = None) -> pairs.WordIds:
    """`pairs.WordIds` (WORDS, or a new one; one that numbered no word yet takes the
    cache's numbers) holding the word ids of every text (texts[n] is the title and body
    of the file whose content hash is hashes[n]): the kept ones read back as they are,
    the others split and kept for the next report. COUNTS (given empty) is filled with
    pairs.counts of the texts' sets, one per text in order (as the caller would count
    them): the kept sets are checked through it."""
    import sqlite3

    words = words if words is not None else pairs.WordIds()
    version = rules_version()
    conn = None
    kept: dict[str, bytes] = {}
    if version is not None and not words.spelled:
        try:
            conn = _connect(index_dir)
            kept = _read_kept(conn, words, version)
        except (sqlite3.Error, OSError) as exc:
            kept = {}
            words.forget()  # nothing of a vocabulary read in part
            if conn is not None:
                conn.close()
            conn = None
            if isinstance(exc, sqlite3.DatabaseError) and not isinstance(
                    exc, sqlite3.OperationalError):  # not a database: repaired in place
                from memex.index import build

                with contextlib.suppress(OSError):
                    build.cut_back(index_dir / NAME)
    made: dict[str, array[int]] = {}
    taken: list[tuple[str, str]] = []  # (text, hash) of the sets read back
    limit = words.next_id  # a kept set names only ids below it, and of words
    found: Counter[int] = Counter() if counts is None else counts
    total = len(texts)
    for done, (text, content_hash) in enumerate(zip(texts, hashes, strict=True), 1):
        if text not in words:
            blob = kept.get(content_hash)
            ids = None
            if blob is not None:
                with contextlib.suppress(ValueError):
                    ids = array(_CODE, blob)
            if ids is not None and len(set(ids)) == len(ids):  # a set: each id once
                dict.__setitem__(words, text, ids)
                taken.append((text, content_hash))
            else:  # not kept, not a whole number of ids or an id twice: split it
                made[content_hash] = words[text]
        found.update(words[text])  # each id once per set (the count pass's walk)
        if progress is not None and (done % 256 == 0 or done == total):
            progress(done, total)
    # the sets read back may hold ids past the vocabulary or those no word has (dropped
    # words'): the counted ids are checked once (a new word's id is past it too: then
    # each set read back is checked), each set only when one of them is off
    if taken and not _known(found.keys(), words, limit):
        for text, content_hash in taken:
            ids = dict.__getitem__(words, text)
            if not _known(set(ids), words, limit):
                dict.__delitem__(words, text)  # a damaged row: split the text again
                made[content_hash] = words[text]
        found.clear()
        for text in texts:
            found.update(words[text])
    if conn is not None:
        with contextlib.closing(conn):
            _keep(conn, version, words, made, kept.keys() - set(hashes))
    return words


def _known(held: AbstractSet[int], words: pairs.WordIds, limit: int) -> bool:
    """Whether the ids HELD are all ids the vocabulary had a word for before the read
    (LIMIT: its next id then): each below LIMIT and, when words were dropped (ids are
    not reused: the numbering has gaps; the words numbered since LIMIT fill it on
    without one), each a word's, looked up among the words (never the range of every
    id ever given, which follows the largest id, not the words)."""
    if not held:
        return True
    if max(held) >= limit:
        return False
    return len(words.spelled) == words.next_id or held <= words.spelled.keys()


def _keep(conn: sqlite3.Connection, version: str | None, words: pairs.WordIds,
          made: dict[str, array[int]], gone: set[str]) -> None:
    """Store the sets made (numbering their new words: those of `words` the cache has
    not numbered yet) and drop the rows of files no longer read with every word no kept
    set uses any more (a deleted memory's words leave the file), in one write
    transaction. A set is written as it is when the cache numbers its words as `words`
    does (no other process wrote meanwhile: the usual case), else renumbered."""
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
            word for _, word in sorted(words.spelled.items()) if word not in ids)]
        ids.update((word, n) for n, word in new)  # every word of every set made
        moved = {mine: ids[word] for mine, word in words.spelled.items() if ids[word] != mine}
        rows = [(content_hash, (array(_CODE, [moved.get(n, n) for n in found])
                                if moved else found).tobytes())
                for content_hash, found in made.items()]
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
