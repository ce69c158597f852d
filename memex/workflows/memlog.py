"""`log ID`: one memory's history across commits, from git (the file followed).

Each commit that touched the memory's file (followed when its folder moved; a memory's
file name is its id, so a "rename" from another name is git's guess, never taken)
becomes one entry: the commit's author and
date, the fields that changed (old -> new), the review, instruction and status moves
with the review_history `by` that recorded them, and supersede links. One `git log
--follow` and one `git cat-file --batch` for all versions, whatever the count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memex.core.errors import MemexError, UsageError
from memex.core.ulid import is_ulid
from memex.storage import gitio, store
from memex.storage.homes import Workspace
from memex.workflows import memdiff

_SEP, _REC = "\x1f", "\x1e"


@dataclass
class Entry:
    commit: str
    author: str
    email: str
    date: str
    subject: str
    path: str
    change: memdiff.Change | None

    def as_json(self) -> dict[str, object]:
        change = self.change
        return {"commit": self.commit, "author": self.author, "email": self.email,
                "date": self.date, "subject": self.subject, "path": self.path,
                "kind": change.kind if change else "unchanged",
                "events": change.events if change else [],
                "fields": [f.as_json() for f in change.fields] if change else [],
                "history": change.history if change else [],
                "body_changed": bool(change and change.body_diff)}


@dataclass
class MemoryLog:
    id: str
    path: str
    entries: list[Entry] = field(default_factory=list)  # newest first, like git log

    def as_json(self) -> dict[str, object]:
        return {"id": self.id, "path": self.path,
                "entries": [e.as_json() for e in self.entries]}


def _resolve(ws: Workspace, id_or_prefix: str) -> str:
    """The repo-relative path of the memory file named by an id or unique prefix, as
    it is now or was last in history."""
    assert ws.repo is not None
    folder, top = ws.memory_dir_name, ws.repo.toplevel
    wanted = store.normalise_id(id_or_prefix)
    if is_ulid(wanted):
        return f"{folder}/{wanted}.md"
    if len(wanted) < 4:
        raise UsageError(f"{id_or_prefix!r}: give at least 4 characters of the id")
    listing = gitio.run(["log", "--all", "--format=", "--name-only", "--diff-filter=A",
                         "--", f"{folder}/{wanted}*.md"], cwd=top, check=False).stdout
    names = {p for p in listing.splitlines() if store.in_memory_folder(folder, p)}
    if ws.memory_dir is not None:
        names.update(f"{folder}/{p.name}" for p in ws.memory_dir.glob(f"{wanted}*.md"))
    if not names:
        raise MemexError(f"no memory {id_or_prefix} in {folder}/ or its git history")
    if len(names) > 1:
        raise UsageError(f"{id_or_prefix!r} is ambiguous: "
                         + ", ".join(sorted(n.rsplit('/', 1)[-1][:-3] for n in names)))
    return names.pop()


def memory_log(ws: Workspace, id_or_prefix: str, rev: str = "HEAD") -> MemoryLog:
    if ws.repo is None:
        raise MemexError("not inside a git repository: log reads a memory's git history")
    top = ws.repo.toplevel
    path = _resolve(ws, id_or_prefix)
    rev = memdiff.commit_of(top, rev)
    fmt = f"{_REC}%H{_SEP}%an{_SEP}%ae{_SEP}%cI{_SEP}%s"
    proc = gitio.run(["log", "--follow", "--no-ext-diff", "--no-textconv", f"--format={fmt}",
                      "--name-only", rev, "--", path], cwd=top, check=False)
    if proc.returncode != 0:
        raise MemexError(f"git log failed: {proc.stderr.strip()}")
    rows: list[tuple[list[str], str]] = []
    for record in proc.stdout.split(_REC):
        if not record.strip():
            continue
        head, _, names = record.partition("\n")
        parts = head.split(_SEP)
        if len(parts) != 5:
            continue
        touched = [n for n in names.splitlines() if n.strip()]
        name = touched[-1] if touched else path
        if name.rsplit("/", 1)[-1] != path.rsplit("/", 1)[-1]:
            # --follow guessed a "rename" from another memory (their front matter looks
            # alike): a memory's file name is its id, only its folder may move
            break
        rows.append((parts, name))
    if not rows:
        raise MemexError(f"{path} has no history in git (is it committed?)")
    texts = gitio.read_blobs(top, [f"{parts[0]}:{name}" for parts, name in rows])
    out = MemoryLog(id=path.rsplit("/", 1)[-1][:-3], path=path)
    previous: str | None = None
    for parts, name in reversed(rows):  # oldest first, each against the one before
        text = texts.get(f"{parts[0]}:{name}")
        change = memdiff.compare(name, previous, text)
        out.entries.append(Entry(parts[0], parts[1], parts[2], parts[3], parts[4], name,
                                 change))
        previous = text
    out.entries.reverse()
    return out
