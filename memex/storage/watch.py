"""Change notices for a long-lived process (the MCP server): has anything in these
folders changed since I last asked?

A command that runs once stats every memory file to see what changed (the index
refresh's walk). A process that lives for hours asks that question on every call;
on Linux the kernel can answer it (inotify) without a stat per file. This module
reads the kernel's events through `inotify_simple` (a small, maintained ctypes
wrapper on PyPI, the `watch` extra), imported only when a watch starts; without it,
or on another system, `start` returns None and the caller keeps walking.

`Watch.quiet()` drains the events queued since its previous call and says whether
there were none. The kernel queues an event when the change happens, so a change
made before `quiet()` returns is either reported now or by the next call: a caller
that asks first and walks after (when not quiet) never misses one. Anything the
watch cannot vouch for counts as a change: a folder created, deleted or moved, a
queue overflow, a folder it cannot watch (one that does not exist yet is looked for
with one stat per call).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# What changes a memory file or the folder's list of them. IN_ATTRIB: `touch` (the
# refresh compares mtimes); IN_CLOSE_WRITE: the end of a write in place.
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_UNMOUNT = 0x2000
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
        | _IN_CREATE | _IN_DELETE | _IN_DELETE_SELF | _IN_MOVE_SELF)
_FOLDER_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_IGNORED


class Watch:
    """Kernel change notices for FOLDERS; `relevant(name)` says which file names in
    them matter (None: every name)."""

    def __init__(self, notify: Any, folders: Sequence[Path],
                 relevant: Callable[[str], bool] | None = None) -> None:
        self._notify = notify
        self._relevant = relevant
        self._by_wd: dict[int, str] = {}
        self._missing: set[str] = set()
        for folder in dict.fromkeys(str(f) for f in folders):
            if not self._add(folder):
                self._missing.add(folder)

    def _add(self, folder: str) -> bool:
        try:
            wd = self._notify.add_watch(folder, MASK)
        except OSError:  # missing, not a folder, or the watch limit reached
            return False
        self._by_wd[wd] = folder
        return True

    def quiet(self) -> bool:
        """Drain the queued events: True when none of them changes a memory file or a
        watched folder, and every folder asked for is watched."""
        changed = False
        for event in self._notify.read(timeout=0):
            if event.mask & _IN_Q_OVERFLOW:
                changed = True
            elif event.mask & _FOLDER_GONE:
                folder = self._by_wd.pop(event.wd, None)
                if folder is not None:
                    self._missing.add(folder)
                changed = True
            elif self._relevant is None or not event.name or self._relevant(event.name):
                changed = True
        for folder in sorted(self._missing):
            # A missing folder holds no memory (the walk that followed its removal saw
            # that); one made since (or made again) is watched from now on and walked
            # once, since files may have landed in it before the watch did.
            if os.path.isdir(folder):
                if self._add(folder):
                    self._missing.discard(folder)
                changed = True
        return not changed

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._notify.close()


def start(folders: Sequence[Path], relevant: Callable[[str], bool] | None = None
          ) -> Watch | None:
    """A Watch on FOLDERS, or None where the kernel's notices cannot be had (no
    inotify_simple installed, not Linux, inotify refused): the caller then walks."""
    try:
        import inotify_simple
    except ImportError:
        return None
    try:
        notify = inotify_simple.INotify(nonblocking=True)
    except (OSError, AttributeError):
        return None
    return Watch(notify, folders, relevant)
