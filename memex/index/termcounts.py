"""How many memories hold each term, kept in the index and kept up per change.

A search weighs its terms by how many memories hold each one. fts5vocab finds that by
reading the term's whole doclist: at 100,000 memories a capture's near-duplicate check
spent ~0.09 s CPU on its 32 terms' counts, every time. The counts asked for are kept
here (table term_counts; those of terms some memory holds) and every refresh that
writes the index adds and takes away the terms of the rows it writes and removes, in
the same transaction, so a count read from the table is the one fts5vocab gives,
without reading a doclist.

The table is valid only at the generation meta 'term_counts' names (the one the refresh
that last kept it up wrote): an index written by a version without this module (or any
writer that did not keep it up) leaves the two apart, and its rows are then never read
and are dropped by the next refresh or the next reader that keeps a count. A full
rebuild drops them; a refresh that changes more than TALLY_MAX rows drops them rather
than tokenizing every row a second time. The table is made by the first reader that
keeps a count (no schema version change: an older index simply has none).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager

from memex.index import schema

TABLE = ("CREATE TABLE IF NOT EXISTS term_counts (term TEXT PRIMARY KEY, "
         "doc INTEGER NOT NULL) WITHOUT ROWID")
_MARK = "term_counts"  # meta key: the generation the table's counts hold at
TALLY_MAX = 2000  # rows a refresh may change and keep the counts up (else they go)
_CHUNK = 500  # terms per IN (...) lookup


def _state(conn: sqlite3.Connection) -> tuple[str | None, str | None, bool]:
    """(the index's generation, the one the counts hold at, whether the table exists)."""
    values = dict(conn.execute("SELECT key, value FROM meta WHERE key IN "
                               "('generation', ?)", (_MARK,)).fetchall())
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                          "name = 'term_counts'").fetchone() is not None
    return values.get("generation"), values.get(_MARK), exists


Unless = Callable[[sqlite3.Connection], AbstractContextManager[None]]


def vocab_count(conn: sqlite3.Connection, term: str) -> int:
    """How many memories hold TERM (an index token), as fts5vocab counts it: the read
    of the term's whole doclist the kept counts spare (0 for a term no memory holds,
    which has no doclist to read: cheap)."""
    row = conn.execute("SELECT doc FROM fts_terms WHERE term = ?", (term,)).fetchone()
    return int(row[0]) if row else 0


# Terms a probe (rarity) found in at least this many memories: "common", no count kept.
FLOORS = ("CREATE TABLE IF NOT EXISTS term_floors (term TEXT PRIMARY KEY, "
          "floor INTEGER NOT NULL) WITHOUT ROWID")


def rarity(conn: sqlite3.Connection, words: Mapping[str, str], cap: int,
           unless_busy: Unless | None = None) -> dict[str, int]:
    """How many memories hold each term of WORDS ({term: a word the index tokenizes as
    that term alone}) where that is under CAP, else CAP or more: what a caller needs to
    pick a text's rarest words (never a count a reader is shown). The kept counts answer
    where they hold, a floor kept earlier (table term_floors: at least CAP) marks a term
    common; each other term is probed by reading at most CAP of the rows holding its
    word, not its whole doclist (fts_terms: ~30-50 ms for a common word at 100,000
    memories, ~1 ms read this way). A probe's count under CAP is exact and kept with the
    counts (given UNLESS_BUSY, as lookup's); one that reaches CAP is kept as a floor.
    Floors are hints: a stale one (the memories holding a term removed since) only
    makes a term look common; they go when the counts are dropped (Tally.finish)."""
    terms = list(words)
    if not terms:
        return {}
    gen, out = _kept(conn, terms)
    rest = [t for t in terms if t not in out]
    if rest and _table_exists(conn, "term_floors"):
        out.update(_by_term(conn, "SELECT term, floor FROM term_floors WHERE floor >= ? AND",
                            rest, (cap,)))
    exact: dict[str, int] = {}
    floors: dict[str, int] = {}
    for term in rest:
        if term in out:
            continue
        found = out[term] = probe(conn, words[term], cap)
        if found >= cap:
            floors[term] = found
        elif found:  # as lookup: a count of 0 is not kept
            exact[term] = found
    if (exact or floors) and gen is not None and unless_busy is not None:
        _keep(conn, gen, exact, unless_busy, floors)
    return out


def probe(conn: sqlite3.Connection, word: str, cap: int) -> int:
    """How many memories hold WORD (plain: letters and digits), counted up to CAP: the
    first CAP rows of its doclist are read, no more."""
    return int(conn.execute(
        "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)",
        (f'"{word}"', cap)).fetchone()[0])


def _table_exists(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (name,)).fetchone() is not None


def _kept(conn: sqlite3.Connection, terms: Sequence[str]) -> tuple[str | None, dict[str, int]]:
    """The index's generation, and the kept counts of TERMS where they hold."""
    gen, kept_at, exists = _state(conn)
    out: dict[str, int] = {}
    if exists and gen is not None and kept_at == gen:
        out = _by_term(conn, "SELECT term, doc FROM term_counts WHERE", terms)
    return gen, out


def _by_term(conn: sqlite3.Connection, select: str, terms: Sequence[str],
             args: tuple[object, ...] = ()) -> dict[str, int]:
    """{term: value} of SELECT (a query of (term, value) ending in its WHERE, and ARGS its
    parameters) for those of TERMS it finds: `term IN` chunks of them."""
    out: dict[str, int] = {}
    for i in range(0, len(terms), _CHUNK):
        chunk = list(terms[i : i + _CHUNK])
        out.update(conn.execute(f"{select} term IN ({', '.join('?' * len(chunk))})",
                                (*args, *chunk)).fetchall())
    return out


def lookup(conn: sqlite3.Connection, terms: Sequence[str],
           unless_busy: Unless | None = None, most: int | None = None) -> dict[str, int]:
    """How many memories hold each of TERMS (index tokens, as fts_terms holds them):
    from the kept counts where they hold, else from fts_terms (vocab_count), then kept
    (given UNLESS_BUSY, build's: only if no other process is writing the index). A
    count of 0 is not kept: the terms searched for that no memory holds (typos, pasted
    identifiers, an MCP server's one-off queries) would grow the table without bound,
    and fts_terms answers them cheaply (no doclist). MOST: at most this many terms not
    kept are counted (in their order); the others are left out of the answer."""
    if not terms:
        return {}
    gen, out = _kept(conn, terms)
    missing = [t for t in dict.fromkeys(terms) if t not in out][:most]
    found: dict[str, int] = {}
    for term in missing:
        found[term] = vocab_count(conn, term)
    held = {term: n for term, n in found.items() if n}
    if held and gen is not None and unless_busy is not None:
        _keep(conn, gen, held, unless_busy)
    out.update(found)
    return out


def _keep(conn: sqlite3.Connection, gen: str, found: dict[str, int],
          unless_busy: Unless, floors: Mapping[str, int] | None = None) -> None:
    """Keep counts read at generation GEN: only if the index is still at GEN (no refresh
    wrote between the reads and now), and never waiting for another writer; and
    FLOORS (rarity's) with them."""
    with unless_busy(conn):
        try:
            conn.execute("BEGIN IMMEDIATE")
            if schema.meta(conn, "generation") == gen:
                conn.execute(TABLE)
                if schema.meta(conn, _MARK) != gen:  # rows of another generation: gone
                    conn.execute("DELETE FROM term_counts")
                    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                 (_MARK, gen))
                # (a term no memory holds is not kept: a write that adds one leaves it
                # to fts_terms, as any term not kept; one kept falls to 0 and stays)
                conn.executemany("INSERT OR REPLACE INTO term_counts (term, doc) "
                                 "VALUES (?, ?)", found.items())
                if floors:
                    conn.execute(FLOORS)
                    conn.executemany("INSERT OR REPLACE INTO term_floors (term, floor) "
                                     "VALUES (?, ?)", floors.items())
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


class Tally:
    """The rows one refresh removes from and adds to the FTS table (their texts, as
    given to FTS), made into count changes when it ends (`finish`, in its transaction)."""

    def __init__(self, conn: sqlite3.Connection, full: bool) -> None:
        gen, kept_at, self.exists = _state(conn)
        # counts that hold now and are worth keeping up
        self.on = (self.exists and not full and gen is not None and kept_at == gen
                   and conn.execute("SELECT 1 FROM term_counts LIMIT 1").fetchone()
                   is not None)
        self.removed: list[Sequence[str]] = []
        self.added: list[Sequence[str]] = []

    def remove(self, text: Sequence[str]) -> None:
        if self.on:
            self.removed.append(text)
            self._cap()

    def add(self, rows: Iterable[Sequence[object]]) -> None:
        """Rows as inserted into fts: (rowid, *columns)."""
        if self.on:
            self.added.extend(tuple(str(v) for v in row[1:]) for row in rows)
            self._cap()

    def _cap(self) -> None:
        if len(self.removed) + len(self.added) > TALLY_MAX:
            self.on = False
            self.removed.clear()
            self.added.clear()

    def finish(self, conn: sqlite3.Connection, new_generation: str) -> None:
        """Apply the changes to the kept counts (or drop them) and mark them as holding
        at NEW_GENERATION; inside the refresh's transaction, before it commits."""
        if not self.exists:
            return
        if not self.on:
            conn.execute("DELETE FROM term_counts")
            if _table_exists(conn, "term_floors"):
                conn.execute("DELETE FROM term_floors")
        else:
            change: dict[str, int] = {}
            for texts, sign in ((self.added, 1), (self.removed, -1)):
                for term, docs in _doc_counts(conn, texts).items():
                    change[term] = change.get(term, 0) + sign * docs
            conn.executemany("UPDATE term_counts SET doc = doc + ? WHERE term = ?",
                             [(n, t) for t, n in change.items() if n])
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     (_MARK, new_generation))


def _doc_counts(conn: sqlite3.Connection, texts: list[Sequence[str]]) -> dict[str, int]:
    """{term: how many of TEXTS hold it}, tokenized by SQLite as the FTS table is."""
    if not texts:
        return {}
    columns = ", ".join(schema.FTS_COLUMNS)
    conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.tally_tok USING fts5 "
                 f"({columns}, content = '', tokenize = '{schema.TOKENIZER}')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.tally_tok_v USING fts5vocab "
                 "(temp, 'tally_tok', 'row')")
    marks = ", ".join("?" * len(schema.FTS_COLUMNS))
    conn.executemany(f"INSERT INTO temp.tally_tok ({columns}) VALUES ({marks})", texts)
    counts = dict(conn.execute("SELECT term, doc FROM temp.tally_tok_v").fetchall())
    conn.execute("INSERT INTO temp.tally_tok (tally_tok) VALUES ('delete-all')")
    return counts


_STEMS: dict[str, tuple[str, ...]] = {}  # word -> its tokens under the index tokenizer


def stems(conn: sqlite3.Connection, words: list[str]) -> dict[str, tuple[str, ...]]:
    """Each word as the index's own tokenizer sees it ('deploying' -> 'deploy'),
    asked of SQLite through a temporary FTS table and cached for the process."""
    if len(_STEMS) > 10_000:
        _STEMS.clear()
    missing = [w for w in words if w not in _STEMS]
    if missing:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_tok USING fts5 "
                     f"(t, tokenize = '{schema.TOKENIZER}')")
        conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_tok_v USING fts5vocab "
                     "(temp, 'query_tok', 'instance')")
        found: dict[int, list[str]] = {}
        # One transaction whose rollback takes the rows away: each row inserted on its
        # own was a commit of the FTS table, ~0.17 ms a word (35 ms for a capture's 200)
        conn.execute("SAVEPOINT query_tok")
        try:
            conn.executemany("INSERT INTO temp.query_tok (rowid, t) VALUES (?, ?)",
                             list(enumerate(missing)))
            for term, doc in conn.execute("SELECT term, doc FROM temp.query_tok_v"):
                found.setdefault(doc, []).append(term)
        finally:
            conn.execute("ROLLBACK TO query_tok")
            conn.execute("RELEASE query_tok")
        for i, word in enumerate(missing):
            _STEMS[word] = tuple(found.get(i, ()))
    return {w: _STEMS[w] for w in words}
