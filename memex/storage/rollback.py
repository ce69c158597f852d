"""All or nothing for a write that touches several files.

    with rollback.restoring() as keep:
        for item in items:
            keep(item.path)      # before changing it
            store.save(item)
        gitio.commit_only(...)

If anything inside the block raises (a failed write, a failed commit, Ctrl-C), every
kept file gets back the bytes it had, and a file that did not exist is removed; the
exception goes on. Restoring is best effort: a file that cannot be put back is left as
it is rather than hiding the original error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from memex.storage import store


@contextlib.contextmanager
def restoring() -> Iterator[Callable[[Path], None]]:
    previous: dict[Path, bytes | None] = {}

    def keep(path: Path) -> None:
        if path not in previous:
            previous[path] = path.read_bytes() if path.exists() else None

    try:
        yield keep
    except BaseException:
        restore(previous)
        raise


def restore(previous: dict[Path, bytes | None]) -> None:
    """Put files back to the bytes they had (None: the file did not exist)."""
    for path, data in previous.items():
        with contextlib.suppress(OSError):
            if data is None:
                path.unlink(missing_ok=True)
            else:
                store.write_bytes_atomic(path, data)
