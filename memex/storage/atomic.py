"""A file written whole: one temp file, renamed over the target. The one rule behind
every file git-memex replaces (store's memory and config files, codecache's kept code,
homes' kept verdict): a reader sees the old file or the new one, never part of one, and
a write that fails at any step (an OS error, an interrupt) removes its temp file and
leaves the target as it was."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

TEMP_SUFFIX = ".memex-tmp"


def _no_step(name: str) -> None:
    """iostep.step's place where a caller passes none."""


def umask() -> int:
    """The process umask (reading it means setting it: put it straight back)."""
    current = os.umask(0o022)
    os.umask(current)
    return current


def replace(path: str | os.PathLike[str], data: bytes, *,
            folder: str | os.PathLike[str] | None = None, mode: int | None = None,
            durable: bool = False, step: Callable[[str], None] = _no_step) -> None:
    """Write DATA to PATH through a new temp file in FOLDER (PATH's folder unless given:
    it must be on PATH's device) renamed over PATH. The temp file is made as mkstemp
    makes it (O_EXCL, mode 0600, named ".<name>.<pid>.<random>" + TEMP_SUFFIX); MODE,
    if given, is set on it before the rename; DURABLE: its bytes are fsynced first.
    STEP is told each step's name in turn (create-temp, write, fsync, rename: iostep's
    seam). Any exception is raised as it came, after the temp file is removed."""
    name = os.path.basename(os.fspath(path))
    where = os.fspath(folder) if folder is not None else os.path.dirname(os.fspath(path))
    tmp: str | None = None
    try:
        step("create-temp")
        import tempfile  # writes only (it imports random, shutil)

        fd, tmp = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=TEMP_SUFFIX,
                                   dir=where or None)
        with os.fdopen(fd, "wb") as handle:
            step("write")
            handle.write(data)
            handle.flush()
            if durable:
                step("fsync")
                os.fsync(handle.fileno())
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, mode)
        step("rename")
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
