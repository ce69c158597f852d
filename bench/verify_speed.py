"""`git memex verify` on a fresh clone, as CI runs it (not a test).

For each N: N valid memory files (bench/index_search.populate) committed in a temp
repo, then, per run, a fresh `git clone` and a fresh GIT_MEMEX_HOME; `git-memex
verify` is timed as a whole process cold (no index yet: it is built) and warm (a
second run in the same clone: a stat per file). Medians of --runs runs.

    python bench/verify_speed.py [--sizes 1000 10000] [--runs 3] [--profile N]

--profile N runs one more cold verify at N under cProfile (in a subprocess, so
imports are counted) and prints the top functions by cumulative and own time.
Prints a Markdown table (docs/benchmarks.md holds one).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.index_search import AT, git, populate  # noqa: E402

BIN = Path(sys.executable).parent
EXE = shutil.which("git-memex", path=str(BIN)) or "git-memex"


def make_origin(tmp: Path, n: int) -> Path:
    origin = tmp / "origin"
    origin.mkdir()
    git("init", "-q", "-b", "main", cwd=origin)
    populate(origin, n)
    git("add", "-A", cwd=origin)
    git("-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "m",
        cwd=origin)
    return origin


def fresh_clone(tmp: Path, origin: Path, i: int) -> tuple[Path, dict[str, str]]:
    """A new clone and a new GIT_MEMEX_HOME: nothing cached anywhere."""
    clone = tmp / f"clone{i}"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True,
                   capture_output=True)
    env = dict(os.environ, GIT_MEMEX_HOME=str(tmp / f"home{i}"), GIT_MEMEX_NOW=AT,
               PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return clone, env


def run_verify(clone: Path, env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([EXE, "verify", *args], cwd=clone, env=env, capture_output=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"verify failed ({done.returncode}): {done.stdout!r} {done.stderr!r}")
    return seconds


def measure(n: int, runs: int) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="memex-bench-verify-"))
    try:
        origin = make_origin(tmp, n)
        cold: list[float] = []
        warm: list[float] = []
        for i in range(runs):
            clone, env = fresh_clone(tmp, origin, i)
            cold.append(run_verify(clone, env))
            warm.append(run_verify(clone, env))
            shutil.rmtree(clone, ignore_errors=True)
        return {"`git memex verify` cold (fresh clone, no index)": statistics.median(cold),
                "`git memex verify` warm (second run)": statistics.median(warm)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def profile(n: int, top: int = 30) -> None:
    import pstats

    tmp = Path(tempfile.mkdtemp(prefix="memex-bench-verify-"))
    try:
        origin = make_origin(tmp, n)
        clone, env = fresh_clone(tmp, origin, 0)
        out = tmp / "verify.prof"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), EXE, "verify"],
                       cwd=clone, env=env, check=False, capture_output=True)
        print(f"cold verify under cProfile, N = {n:,}: "
              f"{time.perf_counter() - started:.2f} s\n")
        stats = pstats.Stats(str(out))
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=int, metavar="N",
                        help="also profile one cold run at N memories")
    args = parser.parse_args()
    results = {n: measure(n, args.runs) for n in args.sizes}
    names = list(next(iter(results.values())))
    print("| measure | " + " | ".join(f"N = {n:,}" for n in args.sizes) + " |")
    print("|---|" + "---:|" * len(args.sizes))
    for name in names:
        cells = " | ".join(_fmt(results[n][name]) for n in args.sizes)
        print(f"| {name} | {cells} |")
    if args.profile:
        print()
        profile(args.profile)


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    main()
