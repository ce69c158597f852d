"""Vectors beside the FTS index (`vectors.sqlite` in the index folder), built
incrementally by `embed_pending` and read by searches.

Kept apart from index.sqlite on purpose: the FTS index is rebuilt freely (a schema
bump, damage, `reindex --full`), vectors cost seconds per hundred memories. Rows are
keyed by (provider name, text key), so an edited memory is simply not embedded until
the next `git memex embed`, and vectors of texts no memory holds any more are pruned.
"""

from __future__ import annotations

import json
import sqlite3
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memex.index import bodies, build
from memex.index.embed_text import passage_text
from memex.search.dense import Provider
from memex.storage import iostep
from memex.storage.homes import Workspace

DB_NAME = "vectors.sqlite"
BATCH = 32
_CHUNK = 500

Progress = Callable[[int, int], None]


@dataclass
class EmbedReport:
    """What an embed run did: memories seen, encoded and pruned."""

    provider: str
    memories: int = 0  # distinct texts among the indexed memories
    embedded: int = 0  # newly encoded now
    pruned: int = 0  # vectors no memory needs any more
    seconds: float = 0.0

    def as_json(self) -> dict[str, object]:
        return {**asdict(self), "seconds": round(self.seconds, 3)}


def db_path(ws: Workspace) -> Path:
    return ws.index_dir / DB_NAME


def connect(path: Path, repaired: bool = False) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=2.0, isolation_level=None)
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        # A rowid table: blobs of 1.5 kB would spill out of a WITHOUT ROWID b-tree's
        # pages (3x the disk measured).
        conn.execute("CREATE TABLE IF NOT EXISTS vectors (provider TEXT NOT NULL, "
                     "key TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL, "
                     "UNIQUE (provider, key))")
    except sqlite3.DatabaseError as exc:
        # A cache: a damaged file is started again (re-embedding costs time, not data),
        # cut back in place like the index, never deleted: another process may hold it.
        conn.close()
        if repaired or "locked" in str(exc) or "busy" in str(exc):
            raise
        build.cut_back(path)
        return connect(path, repaired=True)
    return conn


def _bump(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)",
                 (str(time.time_ns()),))


def pack(vector: Sequence[float]) -> bytes:
    return array("f", vector).tobytes()


def store(ws: Workspace, provider: Provider, keys: Sequence[str],
          vecs: Sequence[Sequence[float]]) -> None:
    """Vectors computed elsewhere (a write embedding its own memory)."""
    conn = connect(db_path(ws))
    try:
        _insert(conn, provider.name, keys, vecs)
    finally:
        conn.close()


def _insert(conn: sqlite3.Connection, provider: str, keys: Sequence[str],
            vecs: Sequence[Sequence[float]]) -> None:
    iostep.step("vectors write", fails=False)  # a kill point, as the index's steps
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT OR REPLACE INTO vectors (provider, key, dim, vec) VALUES (?, ?, ?, ?)",
        [(provider, k, len(v), pack(v)) for k, v in zip(keys, vecs, strict=True)])
    _bump(conn)
    conn.execute("COMMIT")


def embed_pending(ws: Workspace, provider: Provider, progress: Progress | None = None
                  ) -> EmbedReport:
    """Encode every indexed memory whose text has no vector yet (in batches, each
    committed, so an interrupted run keeps what it did) and prune vectors no memory
    uses. Refreshes the FTS index first."""
    started = time.perf_counter()
    report = EmbedReport(provider.name)
    with build.open_index(ws) as index:
        wanted = {key for (key,) in index.conn.execute(
            "SELECT DISTINCT text_key FROM memories WHERE shadowed = 0")}
        conn = connect(db_path(ws))
        try:
            have = {key for (key,) in conn.execute(
                "SELECT key FROM vectors WHERE provider = ?", (provider.name,))}
            missing = sorted(wanted - have)
            texts = _texts(index.conn, missing)
            report.memories = len(wanted)
            for i in range(0, len(missing), BATCH):
                keys = [k for k in missing[i : i + BATCH] if k in texts]
                _insert(conn, provider.name, keys, provider.passages([texts[k] for k in keys]))
                report.embedded += len(keys)
                if progress is not None:
                    progress(min(i + BATCH, len(missing)), len(missing))
            stale = sorted(have - wanted)
            if stale:
                conn.execute("BEGIN IMMEDIATE")
                for j in range(0, len(stale), _CHUNK):
                    chunk = stale[j : j + _CHUNK]
                    conn.execute(f"DELETE FROM vectors WHERE provider = ? AND key IN "
                                 f"({', '.join('?' * len(chunk))})", [provider.name, *chunk])
                _bump(conn)
                conn.execute("COMMIT")
                report.pruned = len(stale)
        finally:
            conn.close()
    report.seconds = time.perf_counter() - started
    return report


def _texts(conn: sqlite3.Connection, keys: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(keys), _CHUNK):
        chunk = keys[i : i + _CHUNK]
        for key, doc, zbody in conn.execute(
                f"SELECT text_key, doc, zbody FROM memories WHERE text_key IN "
                f"({', '.join('?' * len(chunk))})", chunk):
            front = json.loads(doc)
            out[key] = passage_text(str(front.get("title") or ""), bodies.body_text(zbody),
                                    [str(a) for a in front.get("aliases") or []])
    return out


# ---------------------------------------------------------------- reading


@dataclass
class Table:
    """One provider's vectors: key -> row, and the rows as a matrix when numpy is
    installed (a list of arrays otherwise)."""

    rows: dict[str, int]
    matrix: Any
    generation: str | None


_LOADED: dict[tuple[str, str], Table] = {}


def load(path: Path, provider_name: str) -> Table:
    """The vectors of one provider, kept for the process while unchanged."""
    if not path.exists():
        return Table({}, None, None)
    conn = connect(path)
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        gen = row[0] if row else None
        cached = _LOADED.get((str(path), provider_name))
        if cached is not None and cached.generation == gen:
            return cached
        keys: list[str] = []
        blobs: list[bytes] = []
        for key, blob in conn.execute(
                "SELECT key, vec FROM vectors WHERE provider = ? ORDER BY key",
                (provider_name,)):
            keys.append(key)
            blobs.append(blob)
    finally:
        conn.close()
    table = Table({k: i for i, k in enumerate(keys)}, _matrix(blobs), gen)
    _LOADED[(str(path), provider_name)] = table
    return table


def _matrix(blobs: list[bytes]) -> Any:
    try:
        import numpy as np
    except ImportError:
        return [array("f", blob) for blob in blobs]
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


def similarities(table: Table, query: Sequence[float], keys: Sequence[str]
                 ) -> dict[str, float]:
    """Cosine similarity (vectors are unit length) of the query to each key that has
    a vector; keys without one are left out."""
    present = [k for k in keys if k in table.rows]
    if not present:
        return {}
    index = [table.rows[k] for k in present]
    if isinstance(table.matrix, list):
        return {k: sum(a * b for a, b in zip(table.matrix[i], query, strict=False))
                for k, i in zip(present, index, strict=True)}
    import numpy as np

    q = np.asarray(query, dtype=np.float32)
    scores = table.matrix[np.asarray(index)] @ q if len(index) < len(table.rows) \
        else (table.matrix @ q)[np.asarray(index)]
    return {k: float(s) for k, s in zip(present, scores.tolist(), strict=True)}


def forget_loaded() -> None:
    _LOADED.clear()
