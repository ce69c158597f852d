"""A file written whole: one temp file, renamed over the target. The one rule behind
every file git-memex replaces (store's memory and config files, codecache's kept code,
homes' kept verdict): a reader sees the old file or the new one, never part of one, and
a write that fails at any step (an OS error, an interrupt) removes its temp file and
leaves the target as it was."""

from __future__ import annotations

import contextlib
import errno
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


def create_temp(folder: str, prefix: str) -> tuple[int, str]:
    """A new file FOLDER/PREFIX<random><TEMP_SUFFIX> opened for writing, as mkstemp
    makes one (O_EXCL: never a file that exists, nor through a symlink; mode 0600; not
    inherited by a child process) without importing tempfile (which imports shutil and
    with it bz2 and lzma: a search writes the home's kept verdict). The random part is
    12 hex digits from os.urandom (no dot: clean_stale_temps reads the pid before it);
    a name that is taken is drawn again."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(_TRIES):
        path = os.path.join(folder, f"{prefix}{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "No usable temporary file name found", folder)


_TRIES = 100


def replace(path: str | os.PathLike[str], data: bytes, *,
            folder: str | os.PathLike[str] | None = None, mode: int | None = None,
            durable: bool = False, step: Callable[[str], None] = _no_step) -> None:
    """Write DATA to PATH through a new temp file in FOLDER (PATH's folder unless given,
    the current folder for a bare name: it must be on PATH's device) renamed over PATH.
    The temp file is made by create_temp (O_EXCL, mode 0600, named
    ".<name>.<pid>.<random>" + TEMP_SUFFIX); MODE, if given, is set on it before the
    rename; DURABLE: its bytes are fsynced first. STEP is told each step's name in turn
    (create-temp, write, fsync, rename: iostep's seam). Any exception is raised as it
    came, after the temp file is removed."""
    name = os.path.basename(os.fspath(path))
    where = os.fspath(folder) if folder is not None else \
        os.path.dirname(os.fspath(path)) or os.curdir
    tmp: str | None = None
    try:
        step("create-temp")
        fd, tmp = create_temp(where, f".{name}.{os.getpid()}.")
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
