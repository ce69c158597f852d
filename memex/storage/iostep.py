"""The one seam every write step passes through (store's file writes and deletes, the
submit journal, git commands that change the repo, the index's and the vector store's
transactions, the usage log's append): counted, so a test can stop a process at
exactly the Nth step, or make a step fail with an OS error (the index, vector and
usage steps are kill points only: their own errors never fail a command).

`GIT_MEMEX_FAULT` (tests only) is `ACTION@N` or `ACTION@*`: at the Nth step (1-based,
counted per process) or at every step, ACTION happens: `kill` (SIGKILL, as a crash or
an OOM kill would), or an errno name (`EACCES`, `EROFS`, `ENOSPC`, ...) raised as the
OSError that step would get. `GIT_MEMEX_FAULT_LOG=PATH` appends one line per step
("N name"), which is how a test learns how many steps a run makes.
"""

from __future__ import annotations

import errno
import os
import signal

_count = 0


def step(name: str, fails: bool = True) -> None:
    """Mark one I/O step; a no-op unless a test asked for a fault. `fails=False`: a
    point between steps where a kill can land but no OS error can arise."""
    spec = os.environ.get("GIT_MEMEX_FAULT")
    log = os.environ.get("GIT_MEMEX_FAULT_LOG")
    if not spec and not log:
        return
    global _count
    _count += 1
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{_count} {name}\n")
    if not spec:
        return
    action, _, when = spec.partition("@")
    if when != "*" and when != str(_count):
        return
    if action == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    code = getattr(errno, action, None)
    if isinstance(code, int) and fails:
        raise OSError(code, os.strerror(code), name)


def reset() -> None:
    """Start counting again (tests that run several commands in one process)."""
    global _count
    _count = 0
