"""Whole-process MCP latency: start `git memex mcp` to the first answered memory_search,
then the median (and p95) of N searches over the same connection.

Usage: python bench/mcp_latency.py [--memories 200] [--searches 100] [--starts 5]
                                   [--repo PATH]
Runs in a throwaway repo and GIT_MEMEX_HOME with generated memories, or with --repo in
an existing repo under the current environment (a bench/scale.py --keep store at
10,000 memories, say); needs the `mcp` extra (pip install -e '.[mcp]'), whose
inotify_simple lets the server skip the stat walk between changes.
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
from typing import TextIO

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

WORDS = ["cache", "deploy", "queue", "billing", "webhook", "retry", "schema", "index",
         "token", "build", "release", "test", "staging", "docker", "kafka", "redis", "lint",
         "migrate", "rollback", "latency"]
QUERIES = ["deploy rollback", "billing webhook retry", "redis cache", "kafka queue latency",
           "release test", "缓存 部署", "schema migrate index"]


def seed(repo: Path, home: Path, count: int) -> None:
    """COUNT memories (every fifth personal), written by the library in this process."""
    os.environ["GIT_MEMEX_HOME"] = str(home)
    from memex.storage import homes
    from memex.workflows import writes

    ws = homes.workspace(repo)
    for i in range(count):
        words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 7, 11))
        scope = "personal" if i % 5 == 0 else "project"
        writes.capture(ws, writes.CaptureRequest(
            text=f"Memory {i}: the {words} note number {i}", scope=scope))


async def one_session(params: StdioServerParameters, searches: int
                      ) -> tuple[float, list[float]]:
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        return await _session(params, searches, start, devnull)


async def _session(params: StdioServerParameters, searches: int, start: float,
                   devnull: TextIO) -> tuple[float, list[float]]:
    async with stdio_client(params, errlog=devnull) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        first = await session.call_tool("memory_search", {"query": "deploy rollback"})
        assert not first.is_error, first.content
        startup = time.perf_counter() - start
        samples = []
        for n in range(searches):
            t0 = time.perf_counter()
            result = await session.call_tool("memory_search", {"query": QUERIES[n % 7]})
            samples.append(time.perf_counter() - t0)
            assert not result.is_error
    return startup, samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="an existing repo to serve")
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    if args.repo is not None:
        env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
        report(args, StdioServerParameters(command=str(bindir / "git-memex"),
                                           args=["mcp", "--repo", str(args.repo)], env=env),
               f"{args.repo}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        repo.mkdir()
        env = dict(os.environ, GIT_MEMEX_HOME=str(root / "home"),
                   PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "remote", "add", "origin",
                        "https://example.com/bench/app.git"], check=True)
        seed(repo, root / "home", args.memories)
        params = StdioServerParameters(command=str(bindir / "git-memex"),
                                       args=["mcp", "--repo", str(repo)], env=env)
        report(args, params, f"{args.memories} memories")
    return 0


def report(args: argparse.Namespace, params: StdioServerParameters, what: str) -> None:
    startups: list[float] = []
    searches: list[float] = []
    for _ in range(args.starts):
        startup, samples = anyio.run(one_session, params, args.searches)
        startups.append(startup)
        searches.extend(samples)
    searches.sort()
    p95 = searches[int(len(searches) * 0.95) - 1]
    print(f"{what}, {args.starts} server starts, {args.searches} searches per connection; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"start -> first memory_search answered: median {statistics.median(startups):.3f}s"
          f"  max {max(startups):.3f}s")
    print(f"memory_search over one connection:      median "
          f"{statistics.median(searches) * 1000:.1f} ms  p95 {p95 * 1000:.1f} ms")


if __name__ == "__main__":
    raise SystemExit(main())
