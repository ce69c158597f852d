"""The index's tables. Bump SCHEMA_VERSION on any change: an older index is rebuilt."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 3
TOKENIZER = "porter unicode61 remove_diacritics 2"
DB_NAME = "index.sqlite"

# FTS columns and their bm25() weights: title and tags count above the body. The body
# column also holds the title's words (build.fts_row), so a title word weighs 1.5.
FTS_COLUMNS = ("title", "tags", "body")
WEIGHTS = (0.5, 2.0, 1.0)

DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- One row per memory file seen, readable or not; `problem` holds a quarantine reason.
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    home TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash TEXT NOT NULL,
    problem TEXT
);
CREATE INDEX IF NOT EXISTS files_problems ON files (path) WHERE problem IS NOT NULL;

-- One row per readable memory; rowid is the FTS rowid. eff_* hold what chain
-- completion changed (NULL: the file's own value); shadowed marks a duplicate id
-- that reads skip (the first home in store.homes order wins).
CREATE TABLE IF NOT EXISTS memories (
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    id TEXT NOT NULL,
    home TEXT NOT NULL,
    home_order INTEGER NOT NULL,
    scope TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    review_state TEXT,
    importance TEXT NOT NULL,
    created_at TEXT,
    updated_at TEXT,
    retired_at TEXT,
    valid_from TEXT,
    valid_until TEXT,
    expires_at TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    tags TEXT NOT NULL,
    paths TEXT NOT NULL,
    doc TEXT NOT NULL,
    body TEXT NOT NULL,
    text_key TEXT NOT NULL,  -- embed.text: what a vector of this memory is stored under
    eff_status TEXT,
    eff_retired_at TEXT,
    eff_superseded_by TEXT,
    shadowed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS memories_id ON memories (id);

-- Fingerprints of personal and private memory files (core.fingerprint): the scan
-- refuses a staged file anywhere in the repo whose blob id or body hash is here.
CREATE TABLE IF NOT EXISTS guards (
    path TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,   -- personal | private
    blob TEXT NOT NULL,
    body_hash TEXT
);
CREATE INDEX IF NOT EXISTS guards_path ON guards (path);

CREATE TABLE IF NOT EXISTS chain_warnings (id TEXT NOT NULL, message TEXT NOT NULL);

-- Ranking hints only: losing them loses nothing a person decided.
CREATE TABLE IF NOT EXISTS access (
    id TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    last_access TEXT NOT NULL
);

CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (
    {", ".join(FTS_COLUMNS)}, tokenize = '{TOKENIZER}'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_terms USING fts5vocab (fts, 'row');
"""


def create(conn: sqlite3.Connection, replace: bool = False) -> None:
    """Create the tables in one transaction (another process never sees half of
    them); `replace` first drops whatever the file holds, in the same transaction: an
    index is rebuilt in place, never deleted under a process that has it open."""
    script = "BEGIN IMMEDIATE;\n"
    if replace:
        script += "".join(f"DROP TABLE IF EXISTS \"{name}\";\n" for name in _tables(conn))
    script += DDL
    script += ("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', "
               f"'{SCHEMA_VERSION}');\n"
               f"INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', '{TOKENIZER}');\n"
               "COMMIT;\n")
    try:
        conn.executescript(script)
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _tables(conn: sqlite3.Connection) -> list[str]:
    """The tables to drop for a rebuild: virtual tables first (they own shadow tables),
    then the plain tables that are not an FTS table's shadow."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    shadows = tuple(f"{v}_" for v in virtual)
    plain = [name for name, _ in rows if name not in virtual and not name.startswith(shadows)
             and not name.startswith("sqlite_")]
    return [*sorted(virtual, key=lambda n: n != "fts_terms"), *plain]


def version(conn: sqlite3.Connection) -> int | None:
    """The schema version an existing index was built with (None: not an index)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return None
    if row is None:
        return None
    try:
        return int(row[0])
    except ValueError:
        return None
