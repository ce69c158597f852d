"""How the memories table stores a body: text when short, else zlib-format deflate,
made and read by one codec (build writes it, build and listing read it)."""

from __future__ import annotations

import zlib
from typing import Any, cast

# The zlib format's codec for stored bodies (pack_body, body_text): ISA-L's (the `isal`
# package, a dependency where it has wheels) where it imports, else the standard
# library's. Both write and read the same format, so an index made with one is read by
# the other; ISA-L's level 1 is ~3x faster than zlib's (~10 us a 3 KB body) and ~4%
# smaller, its inflate ~1.5x faster (docs/decisions.md).
_ZLIB: Any
try:
    from isal import isal_zlib as _ZLIB
except ImportError:  # pragma: no cover - where isal has no wheel
    _ZLIB = zlib


# Bodies of at least this many bytes are stored compressed (level 1: ~0.49 of typical
# text; higher levels gain 2% for 50% more time); shorter ones as text, where
# compression gains little.
PACK_MIN = 256


def pack_body(body: str, data: bytes | None = None) -> str | bytes:
    """A body as the memories table stores it (see body_text); DATA: its UTF-8, when
    the caller has made it already."""
    if data is None:
        data = body.encode("utf-8")
    return body if len(data) < PACK_MIN else cast(bytes, _ZLIB.compress(data, 1))


def body_text(stored: str | bytes) -> str:
    """The body from its stored form (text, or zlib-compressed UTF-8)."""
    return stored if isinstance(stored, str) else body_bytes(stored).decode("utf-8")


def body_bytes(stored: str | bytes) -> bytes:
    """The body's UTF-8 from its stored form."""
    return cast(bytes, _ZLIB.decompress(stored)) if isinstance(stored, bytes) else \
        stored.encode("utf-8")
