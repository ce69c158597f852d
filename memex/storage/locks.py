"""One lock per memory home for every read-modify-write of a memory file, whoever the
caller (CLI, MCP, hooks): two writers never interleave a read and a write.

An advisory `flock` on `$GIT_MEMEX_HOME/.write.lock`, held for one write; it is
released when the process dies, so a killed process never leaves it stuck. Where flock
does not exist (Windows) writes go on unlocked, as before. The lock is re-entrant in
a process (a write that calls another write holds it once). A writer waits up to
`memex.lockTimeout` seconds (default LOCK_TIMEOUT) and then fails cleanly ("busy"),
having written nothing. `home_lock(home, name)` is the same on another lock file (the
usage log's rotation uses `.usage.lock`, so that a rotation inside a held write lock
never waits for itself).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from memex.core.errors import MemexError

if TYPE_CHECKING:
    from memex.storage.homes import Workspace

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

P = ParamSpec("P")
R = TypeVar("R")

LOCK_NAME = ".write.lock"
# Seconds a writer waits for another before giving up (memex.lockTimeout). Long enough
# that any queue of writers on one machine drains (a capture holds it ~10-50 ms).
LOCK_TIMEOUT = 60
_POLL_SECONDS = (0.002, 0.005, 0.01, 0.02, 0.05)

_held: dict[str, int] = {}
_held_guard = threading.RLock()


class LockBusy(MemexError):
    """Another process held the lock past the wait allowed: nothing was written."""


def _acquire(handle_fd: int, path: Path, timeout: float | None) -> None:
    if fcntl is None:
        return
    if timeout is None:
        fcntl.flock(handle_fd, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        try:
            fcntl.flock(handle_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        if time.monotonic() >= deadline:
            raise LockBusy(
                f"busy: another git-memex process has held {path} for over {timeout:g} s "
                "(memex.lockTimeout); nothing was written, try again")
        time.sleep(_POLL_SECONDS[min(tries, len(_POLL_SECONDS) - 1)])
        tries += 1


@contextlib.contextmanager
def home_lock(home: Path, name: str, timeout: float | None = None) -> Iterator[None]:
    """Hold `home/name` exclusively (re-entrant within this process)."""
    path = home / name
    key = str(path)
    with _held_guard:
        if _held.get(key):
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _held_guard:
                _held[key] -= 1
        return
    try:
        home.mkdir(parents=True, exist_ok=True)
        handle = path.open("a")
    except OSError as exc:
        raise MemexError(f"cannot open the lock file {path}: {exc.strerror or exc}") from None
    with handle:
        _acquire(handle.fileno(), path, timeout)
        with _held_guard:
            _held[key] = 1
        try:
            yield
        finally:
            with _held_guard:
                _held.pop(key, None)
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def write_lock(home: Path, timeout: float | None = None) -> Iterator[None]:
    with home_lock(home, LOCK_NAME, timeout):
        yield


def lock_timeout(ws: Workspace) -> float:
    """`memex.lockTimeout` in seconds (0 or less: fail at once when busy)."""
    return max(0, ws.int_setting("memex.lockTimeout", LOCK_TIMEOUT))


@contextlib.contextmanager
def writing(ws: Workspace) -> Iterator[None]:
    """The write lock of this workspace's home, with its configured wait; a submit a
    killed process left half-done in this repo is settled first (storage.journal)."""
    timeout = lock_timeout(ws)
    with write_lock(ws.home, timeout):
        if _held_count(ws.home) == 1:
            _settle(ws, timeout)
        yield


def _settle(ws: Workspace, timeout: float) -> None:
    """What a killed writer left: its temp files, and a half-done submit."""
    from memex.storage import journal, store

    for folder in (ws.outbox_dir, ws.personal_dir, ws.memory_dir):
        if folder is not None:
            store.clean_stale_temps(folder)
    notice = journal.settle(ws.repo, timeout)
    if notice:
        print(f"git-memex: {notice}", file=sys.stderr)


def _held_count(home: Path) -> int:
    with _held_guard:
        return _held.get(str(home / LOCK_NAME), 0)


def holds_write_lock(func: Callable[Concatenate[Workspace, P], R]
                     ) -> Callable[Concatenate[Workspace, P], R]:
    """Run a library write (its first argument the workspace) under `writing(ws)`."""

    @functools.wraps(func)
    def wrapper(ws: Workspace, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with writing(ws):
            return func(ws, *args, **kwargs)

    return wrapper
