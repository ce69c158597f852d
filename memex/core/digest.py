"""The digests a process takes once or on short texts (BLAKE2b; SHA-256 of a repo's
origin), from CPython's own builtin modules: `import hashlib` loads OpenSSL's (~4 ms of
every process start, a tenth of a search's imports) for the same digests. Where a build
lacks a builtin module, hashlib's. Bulk SHA (git blob ids of files) takes hashlib's:
OpenSSL's is ~3x faster there (fingerprint.blob_id)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import hashlib

    Hasher = Callable[..., hashlib._Hash]


def _builtin(modules: tuple[str, ...], name: str) -> Hasher:
    for module in modules:
        try:
            return cast("Hasher", getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    import hashlib

    return cast("Hasher", getattr(hashlib, name))


blake2b = _builtin(("_blake2",), "blake2b")
sha256 = _builtin(("_sha256", "_sha2"), "sha256")  # _sha2 from Python 3.12
