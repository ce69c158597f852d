"""A digest of git-memex's own source: how a cache names the code that made its rows
(the word cache, the verdict cache, the pair cache); one rule for all of them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from pathlib import Path

from memex.core.digest import blake2b


def of_sources(modules: Iterable[str], prefix: str = "", size: int = 16) -> str | None:
    """A digest (BLAKE2b of SIZE bytes, hex) of PREFIX and the source of each module
    named, read from its `__file__` now: the one way a cache names the code that made
    its rows. None when a module has no readable source (then nothing is kept). A
    caller whose process may outlive an upgrade takes it once (at import or first use),
    so that it names rows by the code that runs."""
    digest = blake2b(digest_size=size)
    digest.update(prefix.encode())
    for name in modules:
        try:
            module = sys.modules.get(name) or importlib.import_module(name)
            digest.update(Path(str(module.__file__)).read_bytes())
        except (OSError, ImportError, AttributeError):
            return None
    return digest.hexdigest()
