"""A list's results made in order, most of them by a forked helper process on a
second core (a full index build: reading, parsing and encoding rows is ~3/4 of it,
while the process that holds the index only inserts; an import: preparing each entry,
while the importing process looks up and writes the files).

`in_order(items, work)` yields work(item) for each item, in order. When it pays (Linux,
a second CPU this process may run on and idle, no other thread in this process, at
least FORK_MIN items), the items go in blocks and a child forked at the start does the
blocks its caller's PATTERN marks (PATTERN by default: five blocks in six, as a full
index build uses; an import's helper does three in four), streaming each block's
results back pickled through a pipe, which a thread of the parent drains into a short
queue; the parent does the other blocks itself and takes the child's in turn, so the
child runs a few blocks ahead (QUEUED, or the caller's queue depth) and what waits stays
small. The child first closes every descriptor it inherits but its pipe (a lock the
parent holds, such as an import's write lock, is then free when the parent ends, killed
or not), so it holds no file and no SQLite connection of the parent's; it writes nothing
but the pipe and ends in os._exit (no finaliser or exit handler of the parent's runs in
it), so a parent killed at any point leaves a child that ends at its next write.

Whatever goes wrong on the child's side (an exception in WORK, a crash, a kill, a
result that does not unpickle) costs only time: the parent does every item the child
did not deliver, as a one-process run does, so the results (and an exception WORK
raises) are the same.
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import sys
import threading
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    import queue

T = TypeVar("T")
R = TypeVar("R")

# Fewer items than this are done in one process: a fork, its pipe and the pickling
# cost ~10-20 ms, more than a second core saves on a small list.
FORK_MIN = 2000
# The items go in blocks of BLOCK; of each PATTERN's worth of blocks, the child does
# those marked "c" (the parent also inserts every row, about half of the per-row cost
# on a full build since the child reads and hashes each file too: five blocks in six
# balance the two at 10k and 100k, docs/decisions.md). The blocks interleave so the
# child runs only a few blocks ahead: what waits for the parent stays small (QUEUED
# blocks in memory, then the pipe's buffer), however many the items.
BLOCK = 256
PATTERN = "pccccc"
QUEUED = 4

_FRAME = struct.Struct("<Q")
_MAX_FD = 1 << 20  # os.closerange's end (close_range(2) on Linux: one call)


def cpus() -> int:
    """The CPUs this process may run on: its affinity, and a container's CPU quota
    (cgroup v2 `cpu.max`: `docker run --cpus=1` leaves every host CPU in the affinity)."""
    try:
        found = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        found = os.cpu_count() or 1
    try:
        with open(CPU_MAX, encoding="ascii") as limit:
            quota = quota_cpus(limit.read())
    except (OSError, ValueError):
        quota = None
    return found if quota is None else max(1, min(found, quota))


# A cgroup v2 container's CPU limit, as the container sees its own cgroup.
CPU_MAX = "/sys/fs/cgroup/cpu.max"


def quota_cpus(cpu_max: str) -> int | None:
    """Whole CPUs a cgroup v2 `cpu.max` ("<quota> <period>" or "max <period>") grants;
    None when it sets no limit."""
    fields = cpu_max.split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    return int(fields[0]) // max(1, int(fields[1]))


def forks(count: int) -> bool:
    """Whether a list of COUNT items is shared with a child process: only when a
    second CPU is likely free (the last minute's load average, this process's own
    share included, under the CPUs less half a one). On a busy machine the child only
    adds its pickling to the work."""
    if count < FORK_MIN or not sys.platform.startswith("linux") or not hasattr(os, "fork") \
            or threading.active_count() != 1:
        return False
    available = cpus()
    return available >= 2 and _load() < available - 0.5


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average
        return float("inf")


def in_order(items: Sequence[T], work: Callable[[T], R],
             fork: bool | None = None, pattern: str | None = None,
             queued: int = QUEUED, size: int | None = None) -> Generator[R, None, None]:
    """work(item) for each of ITEMS, in order; FORK: whether a child does part of them
    (None: `forks`'s choice). PATTERN (default PATTERN) marks the child's blocks ("c")
    of SIZE items (default BLOCK); QUEUED: how many of its blocks may wait for the parent (a caller
    whose own part per item is large lets the child run further ahead)."""
    pattern = pattern or PATTERN
    size = size or BLOCK
    blocks = [items[i:i + size] for i in range(0, len(items), size)]
    theirs = [pattern[k % len(pattern)] == "c" for k in range(len(blocks))]
    if not (forks(len(items)) if fork is None else fork) or not any(theirs):
        yield from map(work, items)
        return
    # loaded only for a fork (~3 ms): the lean walk asks `forks` on every read command
    import pickle
    import queue

    try:
        read_fd, write_fd = os.pipe()
    except OSError:  # pragma: no cover - out of descriptors
        yield from map(work, items)
        return
    try:
        pid = os.fork()
    except OSError:  # pragma: no cover - out of processes or memory
        os.close(read_fd)
        os.close(write_fd)
        yield from map(work, items)
        return
    if pid == 0:  # pragma: no cover - the child (coverage does not follow a fork)
        _child(read_fd, write_fd, [b for b, t in zip(blocks, theirs, strict=True) if t], work)
    os.close(write_fd)
    frames: queue.Queue[bytes | None] = queue.Queue(queued)
    stop = threading.Event()
    drain = threading.Thread(target=_drain, args=(read_fd, frames, stop), daemon=True)
    alive = True
    try:
        drain.start()
        for block, child in zip(blocks, theirs, strict=True):
            results = None
            if child and alive:
                frame = frames.get()
                try:
                    results = pickle.loads(frame) if frame is not None else None
                except Exception:  # noqa: BLE001 - a damaged frame: the parent does the rest
                    results = None
                if results is None or len(results) != len(block):
                    alive, results = False, None
            yield from results if results is not None else map(work, block)
    finally:
        stop.set()
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # done (or given up on) either way
        with contextlib.suppress(OSError):
            os.waitpid(pid, 0)
        with contextlib.suppress(queue.Empty):
            while True:  # let a drain blocked on a full queue see the stop
                frames.get_nowait()
        drain.join()
        os.close(read_fd)


def _drain(read_fd: int, frames: queue.Queue[bytes | None], stop: threading.Event) -> None:
    """Put each whole frame the child writes on FRAMES, then None (the end, or the
    child gone before its end)."""
    try:
        with os.fdopen(os.dup(read_fd), "rb") as pipe:
            while not stop.is_set():
                head = pipe.read(_FRAME.size)
                if len(head) < _FRAME.size:
                    break
                (size,) = _FRAME.unpack(head)
                frame = pipe.read(size)
                if size == 0 or len(frame) < size:
                    break
                frames.put(frame)
    except OSError:  # pragma: no cover - the pipe failed: the parent does the rest
        pass
    finally:
        if not stop.is_set():
            frames.put(None)


def _child(read_fd: int, write_fd: int, blocks: list[Sequence[T]],
           work: Callable[[T], R]) -> None:  # pragma: no cover - runs in the child
    """Do BLOCKS and write each one's results in a frame, then an empty frame; end the
    process without running any finaliser or exit handler."""
    import pickle  # loaded already: in_order did before the fork

    code = 1
    try:
        os.close(read_fd)
        with open(os.devnull, "wb") as null:  # nothing it prints reaches the user
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
        # none of the parent's open files: a lock it holds (an import's write lock, an
        # flock shared by every copy of its descriptor) is released when the parent
        # ends, killed or not, not when this child does
        os.closerange(3, write_fd)
        os.closerange(write_fd + 1, _MAX_FD)
        with os.fdopen(write_fd, "wb") as pipe:
            for block in blocks:
                frame = pickle.dumps([work(item) for item in block], pickle.HIGHEST_PROTOCOL)
                pipe.write(_FRAME.pack(len(frame)))
                pipe.write(frame)
                pipe.flush()
            pipe.write(_FRAME.pack(0))
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent does the rest
        code = 1
    finally:
        os._exit(code)
