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
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from memex.core.errors import MemexError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".write.lock"
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


def held_count(home: Path, name: str = LOCK_NAME) -> int:
    """How many times this process holds `home/name` (0: not held)."""
    with _held_guard:
        return _held.get(str(home / name), 0)
