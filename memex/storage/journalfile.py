"""The submit journal's file, and what reads make of it while a killed submit is unsettled.

`storage.journal` writes `<git dir>/memex-submit.json` before a submit's first change
and settles it under the repo lock. Until then, reads answer from the pre-submit state:
a repo file the journal says the submit created is left out, and a file it rewrote (a
memory it retired) is read with the bytes it had before. This module is that read side
(and the file's format), below `storage.store` so every read of a home can apply it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

JOURNAL_NAME = "memex-submit.json"


def journal_file(git_dir: Path) -> Path:
    return git_dir / JOURNAL_NAME


def pending(git_dir: Path) -> bool:
    """Whether a submit is unsettled in the repository of GIT_DIR."""
    return journal_file(git_dir).exists()


def pending_notice(git_dir: Path) -> str | None:
    """The one line reads print while a killed submit is unsettled (here, not in
    storage.journal, so a read need not import the writer)."""
    if not pending(git_dir):
        return None
    return ("an interrupted submit is pending: the next git-memex command that writes "
            "finishes or undoes it")


@dataclass
class Record:
    """A journal as written: HEAD before, each repo file with its previous bytes
    (base64; None: the submit created it) and the sha256 of its new bytes, and the
    outbox drafts to delete after the commit."""

    head: str | None = None
    files: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    drafts: list[str] = field(default_factory=list)

    def encode(self) -> bytes:
        data = {"head": self.head, "drafts": self.drafts,
                "files": {p: {"previous": prev, "sha256": new}
                          for p, (prev, new) in self.files.items()}}
        return json.dumps(data, indent=1).encode("utf-8")


def load(git_dir: Path) -> Record | None:
    """The journal of this git dir; None when there is none. A journal a kill tore
    while it was written (before the submit changed anything) is an empty Record."""
    try:
        data = json.loads(journal_file(git_dir).read_text(encoding="utf-8"))
        files = {str(p): (v["previous"], str(v["sha256"])) for p, v in data["files"].items()}
        return Record(data.get("head"), files, [str(d) for d in data["drafts"]])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return Record()


def before(git_dir: Path | None) -> dict[str, bytes | None]:
    """{path: its bytes before the submit (None: it did not exist)} for each repo file
    an unsettled submit wrote; {} when nothing is pending (one stat: the common case)."""
    if git_dir is None:
        return {}
    record = load(git_dir)
    if record is None:
        return {}
    import base64  # only while a submit is unsettled: every read imports this module
    import binascii

    out: dict[str, bytes | None] = {}
    for path, (previous, _) in record.files.items():
        try:
            out[path] = None if previous is None else base64.b64decode(previous)
        except (binascii.Error, ValueError):
            continue  # an entry no read can trust: the file is read as it is
    return out
