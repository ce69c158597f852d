"""One digest of what an index holds, to compare two builds of the same store (not a test).

    python bench/index_digest.py INDEX.sqlite [--prefix STORE_DIR] [--tables]

Reads the index read-only and digests, table by table (sorted by name, each table's rows
in a fixed order): every plain table's rows (meta's generation and walk records left
out: they name the build, not its content; a stored body `zbody` inflated, as its bytes
depend on the compressor's buffers; paths with PREFIX cut off, so copies of a store in
two folders compare), the FTS vocabulary (fts5vocab 'row': term, documents, count), the
doc sizes (fts_docsize), the FTS config, and every position FTS5 holds (fts5vocab
'instance': term, rowid, column, offset). Prints one line per part and a total; two
indexes hold the same content when the totals match.
"""

from __future__ import annotations

import argparse
import contextlib
import sqlite3
import sys
import zlib
from hashlib import blake2b
from pathlib import Path

# meta keys that name a build rather than what it holds
_BUILD_KEYS = ("generation", "walk", "term_counts", "built_at")


def _value(value: object, prefix: str) -> bytes:
    if isinstance(value, bytes):
        with contextlib.suppress(zlib.error):
            value = zlib.decompress(value)
        return b"b" + value
    if isinstance(value, str):
        if prefix and value.startswith(prefix):
            value = "$" + value[len(prefix):]
        return b"s" + value.encode("utf-8", "surrogatepass")
    return b"v" + repr(value).encode()


def digest_rows(rows: object, prefix: str) -> tuple[str, int]:
    h = blake2b(digest_size=16)
    n = 0
    for row in rows:  # type: ignore[attr-defined]
        h.update(b"\x1e".join(_value(v, prefix) for v in row) + b"\x1f")
        n += 1
    return h.hexdigest(), n


def parts(path: Path, prefix: str) -> list[tuple[str, str, int]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
    out = []
    tables = [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
        "AND name NOT LIKE 'fts_%' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    for name in tables:
        cols = [c[1] for c in conn.execute(f'PRAGMA table_info("{name}")')]
        order = ", ".join(f'"{c}"' for c in cols)
        where = ""
        if name == "meta":
            where = " WHERE key NOT IN (" + ", ".join(f"'{k}'" for k in _BUILD_KEYS) + ")"
        # memories: the rowid is the FTS rowid, so it is part of the content
        select = "rowid, " + order if name == "memories" else order
        rows = conn.execute(f'SELECT {select} FROM "{name}"{where} ORDER BY {select}')
        out.append((name, *digest_rows(rows, prefix)))
    out.append(("fts_terms", *digest_rows(conn.execute(
        "SELECT term, doc, cnt FROM fts_terms ORDER BY term"), prefix)))
    out.append(("fts_docsize", *digest_rows(conn.execute(
        "SELECT id, sz FROM fts_docsize ORDER BY id"), prefix)))
    out.append(("fts_config", *digest_rows(conn.execute(
        "SELECT k, v FROM fts_config ORDER BY k"), prefix)))
    conn.execute("CREATE VIRTUAL TABLE temp.positions USING fts5vocab(main, fts, instance)")
    out.append(("fts positions", *digest_rows(conn.execute(
        "SELECT term, doc, col, offset FROM temp.positions"), prefix)))
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("index", type=Path)
    parser.add_argument("--prefix", default="", help="cut off this path prefix")
    args = parser.parse_args()
    total = blake2b(digest_size=16)
    for name, digest, n in parts(args.index, args.prefix):
        print(f"{name:16s} {n:>9} rows  {digest}")
        total.update(f"{name}:{digest}:{n}\n".encode())
    print(f"{'total':16s} {'':>9}       {total.hexdigest()}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
