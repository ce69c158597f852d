"""What an index refresh must do, decided from two maps of file states (pure).

`old` is what the index recorded, `new` is what is on disk now; both map a path to
(size, mtime_ns, ctime_ns, inode, hash | None). The caller hashes only the files
`needs_hash` names (new ones, and ones whose stat differs), so an unchanged tree costs
a stat per file and no reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple


class FileState(NamedTuple):
    """A file's stat as git's index keeps it (size, mtime, ctime, inode), and its
    content hash once read. The ctime and inode catch a rewrite that keeps the size
    and puts the old mtime back (`cp -p`, `rsync -a`, `tar x`, a write then utime):
    no program sets a ctime, and a file put in another's place is another inode."""

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    hash: str | None = None


@dataclass
class Plan:
    """What a refresh has to do: the files new, changed, deleted, moved or only touched."""

    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path)
    touched: list[str] = field(default_factory=list)  # stat differs, content the same

    @property
    def empty(self) -> bool:
        return not (self.new or self.changed or self.deleted or self.moved or self.touched)

    @property
    def to_read(self) -> list[str]:
        """Files whose content must be parsed and indexed."""
        return self.new + self.changed


def same_stat(old: FileState, new: FileState) -> bool:
    return (old.size == new.size and old.mtime_ns == new.mtime_ns
            and old.ctime_ns == new.ctime_ns and old.ino == new.ino)


def needs_hash(old: Mapping[str, FileState], new: Mapping[str, FileState]) -> list[str]:
    """Paths on disk whose content hash the plan needs: new, or stat changed."""
    return sorted(p for p, state in new.items() if p not in old or not same_stat(old[p], state))


def plan_changes(old: Mapping[str, FileState], new: Mapping[str, FileState]) -> Plan:
    """Compare the index's record with the disk; a new file whose content equals a
    deleted file's is a move (re-pointed, not re-parsed).

    A path in `new` that needs a hash but has none counts as changed.
    """
    plan = Plan()
    created: list[str] = []
    # Most refreshes find nothing: look closer only at paths whose stat differs.
    suspects = sorted(p for p, state in new.items()
                      if (before := old.get(p)) is None or not same_stat(before, state))
    for path in suspects:
        state = new[path]
        before = old.get(path)
        if before is None:
            created.append(path)
        elif state.hash is not None and state.hash == before.hash:
            plan.touched.append(path)
        else:
            plan.changed.append(path)
    gone = sorted(old.keys() - new.keys())
    by_hash: dict[str, list[str]] = {}
    for path in gone:
        digest = old[path].hash
        if digest is not None:
            by_hash.setdefault(digest, []).append(path)
    for path in created:
        digest = new[path].hash
        candidates = by_hash.get(digest, []) if digest is not None else []
        if candidates:
            source = candidates.pop(0)
            plan.moved.append((source, path))
        else:
            plan.new.append(path)
    moved_from = {src for src, _ in plan.moved}
    plan.deleted = [p for p in gone if p not in moved_from]
    return plan
