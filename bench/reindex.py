"""Full reindex, index size, no-change refresh and search at N memories (not a test).

Stores are built once under --store (default /tmp/memex-reindex-store) and reused:
N canonical memory files (~3 KB bodies, bench/index_search's text) and the same
memories written by hand (`hand`: another key order, quoted strings, quoted times,
block and quoted flow lists, comments), each in its own git repo. For each (N, form):

- full reindex, in-process (median of --runs), beside the raw FTS5 insert of the
  same text into a bare FTS5 table with the index's tokenizer (the floor), once with
  FTS5's default settings and once with the index's (schema.FTS_SETTINGS);
- the index file's size beside the corpus (the memory files' bytes);
- no-change refresh in a warm process and from a cold open, beside the stat floor
  (os.scandir + stat of every file);
- in-process query p50 / p95 (bench/index_search.QUESTIONS over an open index).

    python bench/reindex.py [--sizes 1000 10000] [--huge] [--forms canonical hand]
                            [--runs 3] [--store DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import index_search  # noqa: E402

from memex.index import build, schema  # noqa: E402
from memex.storage import homes  # noqa: E402
from tests.helpers.memfiles import hand_written  # noqa: E402


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
                   cwd=cwd, check=True, capture_output=True)


def store_for(base: Path, n: int, form: str) -> Path:
    """The repo of N memories in FORM, built on first use."""
    repo = base / f"{form}-{n}" / "repo"
    done = repo.parent / "built"
    if done.exists():
        return repo
    repo.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=repo)
    git("remote", "add", "origin", "https://example.com/bench/repo", cwd=repo)
    if form == "canonical":
        index_search.populate(repo, n, 11, (225, 675))
    else:
        source = store_for(base, n, "canonical") / ".memex"
        folder = repo / ".memex"
        folder.mkdir()
        rng = random.Random(3)
        old = time.time() - 3600
        for path in sorted(source.iterdir()):
            target = folder / path.name
            target.write_text(hand_written(path.read_text(encoding="utf-8"), rng),
                              encoding="utf-8")
            os.utime(target, (old, old))
    git("add", "-A", cwd=repo)
    git("commit", "-qm", "memories", cwd=repo)
    done.write_text("")
    return repo


def corpus_bytes(folder: Path) -> int:
    return sum(entry.stat().st_size for entry in os.scandir(folder))


def stat_floor(folder: Path) -> None:
    for entry in os.scandir(folder):
        entry.stat()


def raw_fts_insert(ws: homes.Workspace, settings: bool = False) -> float:
    """Seconds to insert the indexed text of every memory into a bare FTS5 table (a
    file beside the index, WAL off, one transaction): what any index must spend.
    SETTINGS: with the index's own FTS5 settings (schema.FTS_SETTINGS: its hash size)."""
    with build.open_index(ws, refresh=False) as index:
        rows = []
        for doc, zbody in index.conn.execute("SELECT doc, zbody FROM memories"):
            data = json.loads(doc)
            body = build.body_text(zbody)
            title = str(data.get("title") or "")
            rows.append((title, " ".join(data.get("tags") or []), f"{title}\n{body}",
                         "\n".join(data.get("aliases") or [])))
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(str(Path(tmp) / "raw.sqlite"), isolation_level=None)
        conn.execute(f"PRAGMA page_size = {build.PAGE_SIZE}")  # as the index
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(f"CREATE VIRTUAL TABLE fts USING fts5 (title, tags, body, aliases, "
                     f"tokenize = '{schema.TOKENIZER}')")
        if settings:
            conn.executescript(schema.FTS_SETTINGS)
        started = time.process_time()
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO fts (title, tags, body, aliases) VALUES (?, ?, ?, ?)",
                         rows)
        conn.execute("COMMIT")
        seconds = time.process_time() - started
        conn.close()
    return seconds


CPU: dict[str, float] = {}  # name -> median CPU seconds of the last timed() of it


def timed(func: object, runs: int, name: str = "") -> float:
    """Median wall seconds of RUNS calls; the median CPU seconds (this process: on a
    shared machine the honest figure) go to CPU[name]."""
    samples = []
    cpu = []
    for _ in range(runs):
        started, cpu_started = time.perf_counter(), time.process_time()
        func()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
    if name:
        CPU[name] = statistics.median(cpu)
    return statistics.median(samples)


def query_samples(ws: homes.Workspace, rounds: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each search.run_query over an open, fresh index
    (bench/index_search.QUESTIONS, `rounds` times)."""
    from memex.search import engine as search

    wall, cpu = [], []
    with build.open_index(ws) as index:
        for _ in range(rounds):
            for question in index_search.QUESTIONS:
                req = search.SearchRequest(query=question, record_access=False)
                words = search.terms(question)
                started, cpu_started = time.perf_counter(), time.process_time()
                search.run_query(index.conn, ws, req, words, None, None)
                wall.append(time.perf_counter() - started)
                cpu.append(time.process_time() - cpu_started)
    return wall, cpu


def measure(repo: Path, runs: int) -> dict[str, float]:
    home = repo.parent / "memex-home"
    os.environ["GIT_MEMEX_HOME"] = str(home)
    ws = homes.workspace(repo, home=home)
    folder = repo / ".memex"
    out: dict[str, float] = {}
    build.refresh(ws)
    out["full reindex (wall)"] = timed(lambda: build.refresh(ws, full=True), runs, "full")
    out["full reindex (CPU)"] = CPU["full"]
    out["raw FTS5 insert of the same text (CPU)"] = raw_fts_insert(ws)
    out["CPU ratio full reindex / raw FTS5"] = out["full reindex (CPU)"] / out[
        "raw FTS5 insert of the same text (CPU)"]
    out["raw FTS5 insert, the index's FTS5 settings (CPU)"] = raw_fts_insert(ws, True)
    out["CPU ratio full reindex / that raw FTS5"] = out["full reindex (CPU)"] / out[
        "raw FTS5 insert, the index's FTS5 settings (CPU)"]
    build.forget_connections()
    size = build.db_path(ws).stat().st_size
    corpus = corpus_bytes(folder)
    out["index size (MB)"] = size / 1e6
    out["corpus (MB)"] = corpus / 1e6
    out["index / corpus"] = size / corpus
    out["stat floor (wall)"] = timed(lambda: stat_floor(folder), runs * 3, "floor")
    out["stat floor (CPU)"] = CPU["floor"]
    build.refresh(ws)
    out["no-change refresh, warm process (wall)"] = timed(lambda: build.refresh(ws), runs * 3,
                                                          "warm")
    out["no-change refresh, warm process (CPU)"] = CPU["warm"]

    def cold() -> None:
        build.forget_connections()
        build.refresh(ws)

    out["no-change refresh, cold open (wall)"] = timed(cold, runs * 3, "cold")
    out["no-change refresh, cold open (CPU)"] = CPU["cold"]
    out["CPU ratio cold refresh / stat floor"] = CPU["cold"] / CPU["floor"]
    wall, cpu = query_samples(ws, max(runs, 5))
    out["query p50 (wall)"] = index_search.percentile(wall, 0.5)
    out["query p50 (CPU)"] = index_search.percentile(cpu, 0.5)
    out["query p95 (CPU)"] = index_search.percentile(cpu, 0.95)
    build.forget_connections()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--huge", action="store_true", help="also N = 100,000")
    parser.add_argument("--forms", nargs="+", default=["canonical", "hand"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--store", type=Path, default=Path("/tmp/memex-reindex-store"))
    args = parser.parse_args()
    sizes = list(args.sizes) + ([100_000] if args.huge else [])
    os.environ["GIT_MEMEX_NOW"] = index_search.AT
    load = os.getloadavg()
    results = {}
    for n in sizes:
        for form in args.forms:
            results[(n, form)] = measure(store_for(args.store, n, form), args.runs)
            print(f"done N = {n:,} {form}", file=sys.stderr)
    after = os.getloadavg()
    print(f"load average {load[0]:.1f} before, {after[0]:.1f} after ({os.cpu_count()} cores)")
    keys = list(results)
    print("| measure | " + " | ".join(f"{n:,} {form}" for n, form in keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name in next(iter(results.values())):
        cells = []
        for key in keys:
            value = results[key][name]
            if "(MB)" in name:
                cells.append(f"{value:.1f} MB")
            elif "/" in name or "ratio" in name:
                cells.append(f"{value:.2f}x")
            else:
                cells.append(f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
