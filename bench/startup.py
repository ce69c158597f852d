"""Startup cost of the commands that run in hooks and shell loops.

Usage: python bench/startup.py [--runs 20]
Reports the median and max wall time of `git-memex --help` and `git memex list` on an
empty store (a throwaway repo and GIT_MEMEX_HOME), as whole processes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(cmd: list[str], cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        env = dict(os.environ, GIT_MEMEX_HOME=str(root / "home"),
                   PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
        rows = [
            ("git-memex --help", ["git-memex", "--help"]),
            ("git memex list (empty store)", ["git", "memex", "list"]),
            ("git-memex-list (empty store)", ["git-memex-list"]),
        ]
        print(f"{'command':32} {'median':>8} {'max':>8}  ({args.runs} runs)")
        for label, cmd in rows:
            samples = timed(cmd, repo, env, args.runs)
            print(f"{label:32} {statistics.median(samples):7.3f}s {max(samples):7.3f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
