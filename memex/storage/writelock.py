"""The write lock of a workspace, as every library write takes it: the home's lock
(storage.locks) with the wait `memex.lockTimeout` allows, and, once inside, what a
killed writer left is settled: its temp files, and a half-done submit (storage.journal).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Concatenate, ParamSpec, TypeVar

from memex.storage import journal, locks, store
from memex.storage.homes import Workspace

P = ParamSpec("P")
R = TypeVar("R")

# Seconds a writer waits for another before giving up (memex.lockTimeout). Long enough
# that any queue of writers on one machine drains (a capture holds it ~10-50 ms).
LOCK_TIMEOUT = 60


def lock_timeout(ws: Workspace) -> float:
    """`memex.lockTimeout` in seconds (0 or less: fail at once when busy)."""
    return max(0, ws.int_setting("memex.lockTimeout", LOCK_TIMEOUT))


@contextlib.contextmanager
def writing(ws: Workspace) -> Iterator[None]:
    """The write lock of this workspace's home, with its configured wait; a submit a
    killed process left half-done in this repo is settled first (storage.journal)."""
    timeout = lock_timeout(ws)
    with locks.write_lock(ws.home, timeout):
        if locks.held_count(ws.home) == 1:
            _settle(ws, timeout)
        yield


def _settle(ws: Workspace, timeout: float) -> None:
    """What a killed writer left: its temp files, and a half-done submit."""
    for folder in (ws.outbox_dir, ws.personal_dir, ws.memory_dir):
        if folder is not None and store.temps_may_be_in(folder):
            store.clean_stale_temps(folder)
            store.temps_swept(folder)  # listed once, not by every later write
    notice = journal.settle(ws.repo, timeout)
    if notice:
        print(f"git-memex: {notice}", file=sys.stderr)


def holds_write_lock(func: Callable[Concatenate[Workspace, P], R]
                     ) -> Callable[Concatenate[Workspace, P], R]:
    """Run a library write (its first argument the workspace) under `writing(ws)`."""

    @functools.wraps(func)
    def wrapper(ws: Workspace, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with writing(ws):
            return func(ws, *args, **kwargs)

    return wrapper
