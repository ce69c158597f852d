"""The usage log: one JSON line per read or write, for local gates (`verify --since`).

Bounded: an append that takes `usage.jsonl` past the limit (`memex.usageMaxBytes`,
default 8 MiB) renames it to `usage.jsonl.1`, replacing the generation before, so the
two files hold about twice the limit. `entries()` reads `.1` first, then the current
file, so a `--since` window across a rotation still sees both.

Many processes append at once (agents, hooks). Each line is one O_APPEND write, so
lines never interleave; the writer then fstats its descriptor (the only extra call):
the size says whether to rotate, the link count whether the line went into a
generation that a concurrent rotation had already dropped (then it is appended again).
Rotation takes `.usage.lock`, re-checks the size of the file now at the path and
renames with os.replace, so two processes that both saw the file over the limit rotate
it once, and a line already written is never cut or rewritten.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING

from memex.core import clock, jsonout
from memex.storage import iostep, locks, settings

if TYPE_CHECKING:
    from memex.storage.homes import Workspace



class Op(StrEnum):
    """Every operation the log records. Writers and readers both use these, so a reader
    can never test for a name nothing writes."""

    READ = "read"  # one memory shown (show, MCP get, pr-status)
    LIST = "list"
    SEARCH = "search"
    CONTEXT = "context"  # the session-start block
    WRITE = "write"
    DELETE = "delete"
    EXPORT = "export"
    IMPORT = "import"


READS = frozenset({Op.READ, Op.LIST, Op.SEARCH, Op.CONTEXT})
WRITES = frozenset({Op.WRITE, Op.DELETE, Op.IMPORT})

SETTING = "memex.usageMaxBytes"
DEFAULT_MAX_BYTES: int = settings.default(SETTING)
LOCK_NAME = ".usage.lock"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND
_START = '{"at": '  # how every line record() writes begins (json.dumps' separators)
_RETRIES = 3


def log_path(home: Path) -> Path:
    return home / "usage.jsonl"


def old_path(home: Path) -> Path:
    """The previous generation, the one rotation keeps."""
    return home / "usage.jsonl.1"


def limit(ws: Workspace) -> int:
    """The rotation limit for this workspace's settings; 0 or less never rotates."""
    return ws.int_setting(SETTING)


def record_in(ws: Workspace, operation: Op, ids: Iterable[str] | Handed,
              repo_id: str | None = None) -> None:
    """Record an operation of this workspace (or of `repo_id`, a project it acts on)
    in its home's log, rotated at its setting."""
    record(ws.home, ws.repo_id if repo_id is None else repo_id, operation, ids, limit(ws))


class Handed:
    """The ids a streamed read hands out, kept as the JSON text of the list their line
    holds (about 30 bytes an id, not a str object each): a listing of every memory
    keeps no Python object per memory for its log line."""

    __slots__ = ("text",)

    def __init__(self) -> None:
        self.text = bytearray()  # each id's JSON string and ", "

    def add(self, memory_id: str) -> None:
        self.text += b"%s, " % jsonout.string(memory_id).encode("utf-8")


def record(home: Path, repo_id: str, operation: Op, ids: Iterable[str] | Handed,
           max_bytes: int) -> None:
    """Append one line; a log that cannot be written never fails the command."""
    listed = [] if isinstance(ids, Handed) else list(ids)
    line = json.dumps(
        {"at": clock.now_str(), "repo_id": repo_id, "op": operation, "ids": listed},
        ensure_ascii=False,
    )
    data = (line + "\n").encode("utf-8")
    if isinstance(ids, Handed) and ids.text:  # the same line, its list spliced in
        data = b"".join((data[:-3], memoryview(ids.text)[:-2], b"]}\n"))
    path = log_path(home)
    with contextlib.suppress(OSError):
        for _ in range(_RETRIES):
            try:
                fd = os.open(path, _FLAGS, 0o600)
            except FileNotFoundError:
                home.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, _FLAGS, 0o600)
            try:
                iostep.step("usage append", fails=False)  # a failed append is ignored
                os.write(fd, data)
                size, links = (st := os.fstat(fd)).st_size, st.st_nlink
            finally:
                os.close(fd)
            if links:
                break
            # Opened before two rotations and written after: the file is gone; again.
        if 0 < max_bytes < size:
            _rotate(home, max_bytes)


def _rotate(home: Path, limit: int) -> None:
    """Rename the current file to the old generation, once, whoever else tries too."""
    path = log_path(home)
    with locks.home_lock(home, LOCK_NAME):
        try:
            if os.stat(path).st_size <= limit:
                return  # another process has rotated it since our append
        except FileNotFoundError:
            return
        os.replace(path, old_path(home))


def _open(path: Path) -> IO[str] | None:
    """The file to read, or None when it is missing or cannot be read (a log that
    cannot be read never fails the command either)."""
    try:
        return path.open(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _parse(line: str) -> dict[str, object] | None:
    try:
        item = json.loads(line)
    except ValueError:
        # A line torn by a crash, then continued by the next append: keep the whole
        # entry at its end.
        cut = line.rfind(_START, 1)
        if cut < 0:
            return None
        try:
            item = json.loads(line[cut:])
        except ValueError:
            return None
    return item if isinstance(item, dict) else None


def _generations(home: Path) -> list[IO[str]]:
    """Open handles on the old generation and the current file, oldest first.

    The current file is opened first: when a rotation happens between the two opens,
    both name the same file and it is read once; when two happen (the file opened as
    current is gone), both are opened again. The newer file is never read first.
    """
    for attempt in range(_RETRIES):
        current = _open(log_path(home))
        old = _open(old_path(home))
        if current is None or old is None:
            return [h for h in (old, current) if h is not None]
        if os.path.sameopenfile(old.fileno(), current.fileno()):
            old.close()
            return [current]
        if os.fstat(current.fileno()).st_nlink:
            return [old, current]
        current.close()  # dropped by a second rotation: `old` is the newer of the two
        if attempt == _RETRIES - 1:
            return [old]
        old.close()
    return []  # pragma: no cover - the loop always returns


def entries(home: Path) -> Iterator[dict[str, object]]:
    """Every readable entry, the old generation then the current file: oldest first,
    except that a line written by a process that opened the file just before a
    rotation lands at the end of the old generation (readers look for the latest or
    any entry, never rely on strict order)."""
    handles = _generations(home)
    try:
        for handle in handles:
            for line in handle:
                item = _parse(line)
                if item is not None:
                    yield item
    finally:
        for handle in handles:
            handle.close()
