"""One lock per memory home for read-modify-write sequences that may race: two MCP
servers (or a server and a hook) editing the same memory at once.

An advisory `flock` on `$GIT_MEMEX_HOME/.write.lock`, held for one write; it is
released when the process dies, so a killed server never leaves it stuck. Where flock
does not exist (Windows) writes go on unlocked, as before. `home_lock(home, name)` is
the same on another lock file (the usage log's rotation uses `.usage.lock`, so that a
rotation inside a held write lock never waits for itself).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".write.lock"


@contextlib.contextmanager
def home_lock(home: Path, name: str) -> Iterator[None]:
    home.mkdir(parents=True, exist_ok=True)
    with (home / name).open("a") as handle:
        if fcntl is not None:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def write_lock(home: Path) -> Iterator[None]:
    with home_lock(home, LOCK_NAME):
        yield
