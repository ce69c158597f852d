"""Holding off Python's cyclic garbage collector during a bulk computation.

A report over 10,000 memories allocates hundreds of thousands of small containers
(word sets, clauses, features) while the memories themselves stay alive. Each
allocation burst triggers a collection that walks every tracked object, the
live memories included, again and again: at 10,000 memories that was as much time
as the work itself. These computations make no reference cycles that need
collecting in the meantime (reference counting frees what they drop), so the
collector is paused for their duration and resumed after, as it was.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Disable the cyclic collector inside the block; re-enable it after if it was on
    (nested blocks leave it to the outermost)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
