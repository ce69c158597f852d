"""Whole-process MCP latency: start `git memex mcp` to the first answered memory_search,
then the median (and p95) of N searches over the same connection.

Usage: python bench/mcp_latency.py [--memories 200] [--searches 100] [--starts 5]
                                   [--repo PATH | --store DIR] [--edit-check]
Runs in a throwaway repo and GIT_MEMEX_HOME with generated memories, with --repo in
an existing repo under the current environment, or with --store in a kept
bench/scale.py store (DIR/repo, served with the store's own isolated HOME, XDG_*,
GIT_MEMEX_HOME and git config, as the scale bench runs it: a copy of DIR/10000, say;
the server keeps the index warm). Needs the `mcp` extra (pip install -e '.[mcp]'), whose
inotify_simple lets the server skip the stat walk between changes.

--edit-check: after the timed searches of each connection, a memory file is edited by
hand (a made-up word appended to its body, outside git-memex), the next search over the
same connection must find it by that word, and the file is put back (the next search
must no longer find it): the long-lived server's change notices in action. It writes in
the repo served: use it on a copy.
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


async def one_session(params: StdioServerParameters, searches: int,
                      edit: Path | None = None) -> tuple[float, list[float]]:
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull:
        return await _session(params, searches, start, devnull, edit)


def _hits(result: object) -> str:
    return " ".join(getattr(part, "text", "") for part in getattr(result, "content", []))


async def _edit_check(session: ClientSession, memories: Path) -> None:
    """A hand edit between two calls shows in the second; the file put back, it goes."""
    target = min(memories.rglob("*.md"))
    word = f"handedit{time.time_ns()}"
    before = target.read_bytes()
    try:
        target.write_bytes(before.rstrip(b"\n") + f"\n\nA hand edit: {word}\n".encode())
        found = await session.call_tool("memory_search", {"query": word})
        assert not found.is_error and target.stem in _hits(found), (
            f"a hand edit of {target.name} did not show: {_hits(found)[:300]}")
    finally:
        target.write_bytes(before)
    gone = await session.call_tool("memory_search", {"query": word})
    assert not gone.is_error and target.stem not in _hits(gone), "the edit put back still shows"


async def _session(params: StdioServerParameters, searches: int, start: float,
                   devnull: TextIO, edit: Path | None) -> tuple[float, list[float]]:
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
        if edit is not None:
            await _edit_check(session, edit)
    return startup, samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--repo", type=Path, help="an existing repo to serve")
    parser.add_argument("--store", type=Path, help="a kept bench/scale.py store to serve")
    parser.add_argument("--edit-check", action="store_true",
                        help="check that a hand edit between two calls shows (writes!)")
    args = parser.parse_args()
    if args.edit_check and args.store is None and args.repo is None:
        parser.error("--edit-check needs --store or --repo: it edits a memory file of the "
                     "repo's .memex/ (the generated repo's are not kept there)")
    bindir = Path(sys.executable).parent
    if args.store is not None:
        store = args.store.resolve()
        home = store / "home"
        env = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
               "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "XDG_DATA_HOME": str(home / ".local/share"),
               "XDG_CACHE_HOME": str(home / ".cache"),
               "GIT_MEMEX_HOME": str(store / "memex-home"),
               "GIT_CONFIG_GLOBAL": str(store / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
               "LANG": "C.UTF-8"}
        if os.environ.get("PYTHONPATH"):  # to time another checkout's code
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        args.repo = store / "repo"
        report(args, StdioServerParameters(command=str(bindir / "git-memex"),
                                           args=["mcp", "--repo", str(args.repo)], env=env),
               f"{store}")
        return 0
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
    edit = args.repo / ".memex" if args.edit_check else None
    for _ in range(args.starts):
        startup, samples = anyio.run(one_session, params, args.searches, edit)
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
    if edit is not None:
        print("a hand edit between two calls: shown by the next search, gone once put back "
              f"({args.starts} connections)")


if __name__ == "__main__":
    raise SystemExit(main())
