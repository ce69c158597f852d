"""The index's tables. Bump SCHEMA_VERSION on any change: an older index is rebuilt."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 12
TOKENIZER = "porter unicode61 remove_diacritics 2"
DB_NAME = "index.sqlite"

# FTS columns and their bm25() weights: title and tags count above the body. The body
# column also holds the title's words (build.fts_row), so a title word weighs 1.5.
# Aliases (other phrasings the writer gave) weigh less than the memory's own words.
FTS_COLUMNS = ("title", "tags", "body", "aliases")
WEIGHTS = (0.5, 2.0, 1.0, 0.5)

DDL = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- One row per memory file seen, readable or not; `problem` holds a quarantine reason.
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    home TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    -- with mtime_ns, git's stat data (schema 11): a rewrite that keeps the size and
    -- puts the old mtime back still changes the ctime, or the inode (plan.FileState)
    ctime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    hash TEXT NOT NULL,
    problem TEXT
);
CREATE INDEX IF NOT EXISTS files_problems ON files (path) WHERE problem IS NOT NULL;

-- One row per readable memory; rowid is the FTS rowid. eff_* hold what chain
-- completion changed (NULL: the file's own value); shadowed marks a duplicate id
-- that reads skip (the first home in store.homes order wins). The small columns come
-- first and doc, zbody last, so a query that filters or sorts on them reads a row's
-- first bytes only. zbody is the body: as text when short, else zlib-compressed UTF-8
-- (bodies.pack_body; read back with bodies.body_text), about half the text's size.
CREATE TABLE IF NOT EXISTS memories (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    scope TEXT NOT NULL,
    shadowed INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    eff_status TEXT,
    review_state TEXT,
    updated_at TEXT,
    home TEXT NOT NULL,
    home_order INTEGER NOT NULL,
    type TEXT NOT NULL,
    importance TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at TEXT,
    retired_at TEXT,
    valid_from TEXT,
    valid_until TEXT,
    expires_at TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    eff_retired_at TEXT,
    eff_superseded_by TEXT,
    tags TEXT NOT NULL,
    paths TEXT NOT NULL,
    text_key TEXT NOT NULL,  -- embed.text: what a vector of this memory is stored under
    path TEXT NOT NULL UNIQUE,
    doc TEXT NOT NULL,
    zbody NOT NULL,
    -- What `list --json` copies beside doc, which holds the front matter as the
    -- listing writes it (index.listing, schema 10): which of model.FIELD_ORDER's
    -- fields doc holds (bit i: FIELD_ORDER[i]; bit 62: the body is plain ASCII,
    -- index.listing.PLAIN) and the summary as a JSON string in UTF-8 (NULL: built
    -- whole). Last, so a query reading doc or zbody does not step over them.
    listed INTEGER,
    summary BLOB
);
CREATE INDEX IF NOT EXISTS memories_id ON memories (id);
-- context and list: the newest memories of some scopes without reading every row.
CREATE INDEX IF NOT EXISTS memories_newest ON memories (scope, updated_at, id);
-- Covers the newest-first key query (views.newest_rows: the filter and both orders), so
-- it reads this index, not every row's page (a row holds its doc and body).
CREATE INDEX IF NOT EXISTS memories_listing
    ON memories (scope, shadowed, status, eff_status, review_state, updated_at, id);
-- context's instructions (rule 1 needs role: instruction) and a write's chain repair
-- (who supersedes this id) without reading every row.
CREATE INDEX IF NOT EXISTS memories_instructions ON memories (scope)
    WHERE role = 'instruction';
CREATE INDEX IF NOT EXISTS memories_supersedes ON memories (supersedes)
    WHERE supersedes IS NOT NULL;
-- build.derive after a write reads only the rows these hold (few in any store), not
-- every row: the chain's other end, the values chain completion changed, the shadowed
-- duplicates (schema 7).
CREATE INDEX IF NOT EXISTS memories_superseded_by ON memories (superseded_by)
    WHERE superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_derived ON memories (id) WHERE eff_status IS NOT NULL
    OR eff_retired_at IS NOT NULL OR eff_superseded_by IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_shadowed ON memories (shadowed, id) WHERE shadowed = 1;

-- The links a memory's front matter lists (model.RELATIONS), one row per memories
-- rowid and target id: `show` finds the memories naming one without a scan of docs.
CREATE TABLE IF NOT EXISTS links (src INTEGER NOT NULL, dst TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_dst ON links (dst);
CREATE INDEX IF NOT EXISTS links_src ON links (src);

-- Fingerprints of personal and private memory files (core.fingerprint): the scan
-- refuses a staged file anywhere in the repo whose blob id or body hash is here.
CREATE TABLE IF NOT EXISTS guards (
    path TEXT NOT NULL,
    id TEXT NOT NULL,
    kind TEXT NOT NULL,   -- personal | private
    blob TEXT NOT NULL,
    body_hash TEXT        -- the body's hash, then show's and show --json's (schema 12)
);
CREATE INDEX IF NOT EXISTS guards_path ON guards (path);

-- What capture's contradiction check (workflows.conflicts) made of a memory: its pair
-- keys and rule features, kept once made (schema 9). A row holds while the file's
-- content hash (files.hash) and the rules' version are those it names; rowid is the
-- memories rowid it was made for. keys and feats are stored as zbody is (bodies).
CREATE TABLE IF NOT EXISTS pair_cache (
    rowid INTEGER PRIMARY KEY,
    hash TEXT NOT NULL,
    version TEXT NOT NULL,
    keys NOT NULL,
    feats
);

CREATE TABLE IF NOT EXISTS chain_warnings (id TEXT NOT NULL, message TEXT NOT NULL);

-- Ranking hints only: losing them loses nothing a person decided.
CREATE TABLE IF NOT EXISTS access (
    id TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    last_access TEXT NOT NULL
);

-- Contentless: the text is not stored a second time (memories holds it). A row is
-- removed with the 'delete' command and the text it was indexed with (build.fts_row of
-- the stored memory; TEXT_RULE in meta says which rule made that text).
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5 (
    {", ".join(FTS_COLUMNS)}, content = '', tokenize = '{TOKENIZER}'
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_terms USING fts5vocab (fts, 'row');
"""

# FTS5 gathers a transaction's new postings in memory and writes them out as a segment
# each time they pass its hash size (1 MB by default), merging those segments as it
# goes. A full build of 10,000 memories (~15 MB of postings) then wrote ~15 segments
# and merged them again and again: with room for 64 MB it writes one or a few, the
# insert costs ~30% less CPU and the 'optimize' after it ~70% less, and the index's
# rows and every bm25 score are the same. The setting is kept in the FTS table's own
# config (it bounds the memory a large refresh may use for pending postings).
FTS_HASH_BYTES = 64 * 1024 * 1024
FTS_SETTINGS = f"INSERT INTO fts (fts, rank) VALUES ('hashsize', {FTS_HASH_BYTES});\n"
# A full build holds up to this much instead, while its transaction lasts (build._refresh
# puts FTS_SETTINGS back before the 'optimize'): 100,000 memories make ~150 MB of
# postings, three segments at 64 MB that the 'optimize' then read and wrote again
# (~1.6-2.3 CPU s); held in one, they are written once and nothing is merged. The peak
# memory of a full build of 100,000 rises by ~90 MB (the postings held), of 10,000 not
# at all (~15 MB of postings, one segment either way).
FTS_BUILD_HASH_BYTES = 256 * 1024 * 1024
FTS_BUILD_SETTINGS = f"INSERT INTO fts (fts, rank) VALUES ('hashsize', {FTS_BUILD_HASH_BYTES})"


def create(conn: sqlite3.Connection, replace: bool = False, text_rule: str = "") -> None:
    """Create the tables in one transaction (another process never sees half of
    them); `replace` first drops whatever the file holds, in the same transaction: an
    index is rebuilt in place, never deleted under a process that has it open.
    TEXT_RULE names the rule that turns a memory into its FTS text (build.text_rule)."""
    script = "BEGIN IMMEDIATE;\n"
    if replace:
        script += "".join(f"DROP TABLE IF EXISTS \"{name}\";\n" for name in _tables(conn))
    script += DDL + FTS_SETTINGS
    script += ("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', "
               f"'{SCHEMA_VERSION}');\n"
               f"INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', '{TOKENIZER}');\n"
               "INSERT OR REPLACE INTO meta (key, value) VALUES ('text_rule', "
               f"'{text_rule}');\n"
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


def meta(conn: sqlite3.Connection, key: str) -> str | None:
    """One value of the index's meta table (None: not set)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def text_rule(conn: sqlite3.Connection) -> str | None:
    """The text rule an existing index was built with (see create)."""
    return meta(conn, "text_rule")


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
