"""Fingerprints of memory content, to recognise a personal memory wherever a copy lands.

Two kinds: git's blob id of the file's exact bytes (what `git hash-object` prints, so
a staged file's id from `git diff --cached --raw` compares without reading it), and a
hash of the normalised body (line endings, trailing space, surrounding blank lines,
BOM), which survives a copy that changed the front matter, the encoding or the name.
Pure: no I/O.
"""

from __future__ import annotations

import codecs
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from memex.core import lazyre
from memex.core.digest import blake2b

if TYPE_CHECKING:
    import hashlib

# A body shorter than this is too common to recognise by content alone ("yes", "ok"):
# only its exact file (blob id) is matched.
MIN_BODY_CHARS = 12
_FENCE_LINE = lazyre.compile(r"^---[ \t]*$")


def blob_id(data: bytes, object_format: str = "sha1") -> str:
    """`git hash-object` of these bytes in a repository of the given object format."""
    header = f"blob {len(data)}\0".encode()
    return _sha(object_format)(header + data).hexdigest()


@functools.cache
def _sha(object_format: str) -> Callable[[bytes], hashlib._Hash]:
    # OpenSSL's SHA (hashlib's) is faster than the builtin modules' on the many files a
    # build or a scan hashes: its import (~4 ms) is paid only by a process that hashes one.
    import hashlib

    return hashlib.sha256 if object_format == "sha256" else hashlib.sha1


def decode_loose(data: bytes) -> str | None:
    """Text from bytes the way a person's editor would read them: UTF-16 or UTF-32 with
    a byte order mark, else UTF-8 (invalid bytes replaced). None for binary data."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError:
                return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def normalise(text: str) -> str:
    """Line endings to LF, trailing space of each line and blank lines around gone."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def loose_body(text: str) -> str | None:
    """The body after a front matter block found leniently (blank lines, comments or
    stray text before the first fence, trailing space on fences); None without one."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    fences = [i for i, line in enumerate(lines) if _FENCE_LINE.match(line)]
    if len(fences) < 2:
        return None
    return "\n".join(lines[fences[1] + 1:])


def body_hash(body: str) -> str | None:
    """The hash a body is recognised by (None: too short to recognise by content)."""
    norm = normalise(body)
    if len(norm) < MIN_BODY_CHARS:
        return None
    return blake2b(norm.encode("utf-8"), digest_size=16).hexdigest()


def candidate_hashes(text: str) -> set[str]:
    """Body hashes a file could match: its whole text, and what follows a front
    matter block however it is spelled."""
    out = {h for h in (body_hash(text),) if h}
    body = loose_body(text)
    if body is not None and (h := body_hash(body)):
        out.add(h)
    return out
