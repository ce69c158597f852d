"""ULIDs: 48-bit millisecond time + 80 random bits, Crockford base32.

In-house rather than python-ulid: that package costs ~0.17 s to import, and
commands run in hooks (docs/decisions.md).
"""

from __future__ import annotations

import os
import threading
import time

from memex.core import lazyre

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_RE = lazyre.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
PREFIX_RE = lazyre.compile(r"^[0-9A-HJKMNP-TV-Z]{1,26}$")  # an id or its start, upper-cased
_lock = threading.Lock()
_last: list[int] = [0, 0]


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_ulid() -> str:
    """A new ULID, monotonic within this process."""
    with _lock:
        ms = int(time.time() * 1000)
        if ms <= _last[0]:
            ms = _last[0]
            rand = _last[1] + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big")
        _last[0], _last[1] = ms, rand
    return _encode(ms, 10) + _encode(rand & ((1 << 80) - 1), 16)


def is_ulid(text: str) -> bool:
    return bool(ULID_RE.match(text))


def is_id_prefix(text: str) -> bool:
    """Has TEXT (any case, spaces around) the shape of a memory id or its start?"""
    return bool(PREFIX_RE.match(text.strip().upper()))


def quoted_id(value: object) -> str:
    """VALUE as a message quotes an id the user gave: as typed when it has an id's shape
    (the bare detector reads a long prefix or a lower-case id as random), else masked as
    a write would store it (redact.quoted)."""
    if isinstance(value, str) and is_id_prefix(value):
        return repr(value)
    from memex.core import redact  # only for a refusal: its patterns compile for writes

    return redact.quoted(value)
