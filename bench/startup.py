"""Startup cost of the commands that run in hooks and shell loops.

Usage: python bench/startup.py [--runs 20] [--against OTHER_VENV_BIN]
Reports the median and max wall time of `git-memex --help` and `git memex list` on an
empty store (a throwaway repo and GIT_MEMEX_HOME), as whole processes. With --against,
each run of this install's command is followed by the same command from the other
install's bin folder (another checkout's venv), so machine load hits both alike.
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


def once(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
    return time.perf_counter() - start


def timed(cmd: list[str], cwd: Path, env: dict[str, str], runs: int) -> list[float]:
    return [once(cmd, cwd, env) for _ in range(runs)]


def with_bin(env: dict[str, str], bindir: Path) -> dict[str, str]:
    return dict(env, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--against", type=Path, help="another install's bin folder")
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
        if args.against is not None:
            other = with_bin(env, args.against.resolve())
            print(f"{'command':32} {'this':>8} {'other':>8} {'ratio':>6}  (median of "
                  f"{args.runs} alternating runs)")
            for label, cmd in rows:
                mine, theirs = [], []
                for _ in range(args.runs):
                    mine.append(once(cmd, repo, env))
                    theirs.append(once(cmd, repo, other))
                a, b = statistics.median(mine), statistics.median(theirs)
                print(f"{label:32} {a:7.3f}s {b:7.3f}s {a / b:6.3f}")
            return 0
        print(f"{'command':32} {'median':>8} {'max':>8}  ({args.runs} runs)")
        for label, cmd in rows:
            samples = timed(cmd, repo, env, args.runs)
            print(f"{label:32} {statistics.median(samples):7.3f}s {max(samples):7.3f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
