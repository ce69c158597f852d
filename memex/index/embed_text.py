"""What of a memory is embedded, and the key its vector is stored under (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from memex.core.digest import blake2b

MAX_CHARS = 2000


def with_title(title: str, body: str) -> str:
    """The body, after the title unless the body already starts with it (a default
    title is the body's first line, perhaps cut with an ellipsis)."""
    title = title.strip()
    if title and not body.lstrip().startswith(title.rstrip("\u2026").rstrip()):
        return f"{title}\n{body}"
    return body


def passage_text(title: str, body: str, aliases: Sequence[str] = ()) -> str:
    """with_title, then the aliases one a line, cut to MAX_CHARS: the words BM25 holds
    in the body and aliases columns."""
    return passage_of(with_title(title, body), aliases)


def passage_of(titled: str, aliases: Sequence[str] = ()) -> str:
    """passage_text of a memory whose with_title is TITLED (an index build makes it once
    for this and the FTS body column)."""
    text = titled.strip()
    if aliases:
        text += "\n" + "\n".join(aliases)
    return text[:MAX_CHARS]


def text_key(text: str) -> str:
    """Vectors are keyed by their text: an edited memory needs a new one, a moved or
    re-indexed one does not."""
    return blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
