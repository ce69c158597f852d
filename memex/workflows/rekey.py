"""Outbox drafts left under an old repo_id, and `rekey`, which moves them.

Drafts live in `$GIT_MEMEX_HOME/outbox/<repo_id>/`, and repo_id comes from the origin
URL (or the path, without an origin). When origin changes, or a repo gets its first
origin, the drafts stay under the old id and vanish from every command. Each clone
keeps the ids it has had (`homes.seen_repo_ids`); the path id is always a candidate.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from memex.core.errors import MemexError, UsageError
from memex.storage import homes, store, usage, writelock
from memex.storage.homes import Workspace

_ID_RE = re.compile(r"^(git-origin-sha256|path-sha256)[:-]([0-9a-f]{64})$")


@dataclass(frozen=True)
class OldOutbox:
    repo_id: str
    source: str  # what the id was derived from ("origin host/path", "path /x"), or ""
    path: Path
    drafts: int

    def describe(self) -> str:
        since = f" ({self.source})" if self.source else ""
        return f"{self.repo_id}{since}"


def _count(path: Path) -> int:
    return sum(1 for _ in store.memory_files(path))


def old_outboxes(ws: Workspace) -> list[OldOutbox]:
    """Outboxes of ids this clone had before (or its path id), holding drafts."""
    if ws.repo is None:
        return []
    candidates = dict(homes.seen_repo_ids(ws.repo))
    path_id = homes.repo_id_for(None, ws.repo.toplevel)
    candidates.setdefault(path_id, f"path {ws.repo.toplevel.resolve()}")
    out: list[OldOutbox] = []
    for rid, source in candidates.items():
        if rid == ws.repo_id:
            continue
        folder = ws.home / "outbox" / homes.outbox_name(rid)
        count = _count(folder)
        if count:
            out.append(OldOutbox(rid, source, folder, count))
    return out


def parse_id(text: str) -> str:
    """A repo_id as typed (the `:` or the outbox folder's `-` spelling)."""
    match = _ID_RE.match(text.strip())
    if not match:
        from memex.core import redact  # only for a refusal

        raise UsageError(f"not a repo_id: {redact.quoted(text)} (expected "
                         "git-origin-sha256:<hex> or path-sha256:<hex>, as `git memex "
                         "doctor` prints it)")
    return f"{match.group(1)}:{match.group(2)}"


@dataclass
class RekeyPlan:
    source: OldOutbox
    target: Path
    repo_id: str
    moves: list[store.Loaded] = field(default_factory=list)
    duplicates: list[store.Loaded] = field(default_factory=list)  # same file already there
    quarantined: list[store.Quarantined] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"from": self.source.repo_id, "to": self.repo_id, "target": str(self.target),
                "moved": [x.id for x in self.moves],
                "already_there": [x.id for x in self.duplicates],
                "left_unreadable": [str(q.path) for q in self.quarantined]}


def plan(ws: Workspace, from_id: str | None = None) -> RekeyPlan:
    """What `rekey` would move into this repo's outbox; checks everything first."""
    if ws.repo is None:
        raise MemexError("not inside a git repository: the outbox is keyed by the repo")
    if from_id is not None:
        rid = parse_id(from_id)
        if rid == ws.repo_id:
            raise UsageError(f"{rid} is this repo's current id: nothing to re-key")
        folder = ws.home / "outbox" / homes.outbox_name(rid)
        if not folder.is_dir():
            raise MemexError(f"there is no outbox for {rid} ({folder})")
        source = OldOutbox(rid, homes.seen_repo_ids(ws.repo).get(rid, ""), folder,
                           _count(folder))
    else:
        found = old_outboxes(ws)
        if not found:
            raise MemexError("no outbox of an earlier repo_id of this clone holds drafts: "
                             "nothing to re-key (name one with --from ID)")
        if len(found) > 1:
            listed = "; ".join(f"{o.describe()}: {o.drafts} draft(s)" for o in found)
            raise UsageError(f"drafts wait under more than one old id; choose one with "
                             f"--from ID: {listed}")
        source = found[0]
    result = RekeyPlan(source, ws.outbox_dir, ws.repo_id)
    drafts, result.quarantined = store.read_home(store.Home("outbox", source.path))
    target = store.Home("outbox", ws.outbox_dir)
    for draft in drafts:
        there = store.new_path(target, draft.id)
        if there.exists():
            if there.read_bytes() != draft.path.read_bytes():
                raise MemexError(f"{draft.id} is in both outboxes with different content "
                                 f"({draft.path} and {there}); a person decides which to "
                                 "keep; nothing moved")
            result.duplicates.append(draft)
        else:
            result.moves.append(draft)
    return result


@writelock.holds_write_lock
def apply(ws: Workspace, todo: RekeyPlan) -> RekeyPlan:
    """Write each draft under the new id (its `repo_id` rewritten through store.save,
    so a hand-edited file keeps its comments), then remove the old copy; an emptied
    old outbox folder is removed. A failure part way leaves every draft readable in
    one of the two outboxes, never in neither."""
    target = store.Home("outbox", todo.target)
    moved: list[str] = []
    for draft in todo.moves:
        memory = draft.memory.copy(repo_id=todo.repo_id)
        store.save(store.Loaded(memory, store.new_path(target, draft.id), target,
                                draft.parsed))
        store.delete(draft)
        moved.append(draft.id)
    for draft in todo.duplicates:
        store.delete(draft)
    with contextlib.suppress(OSError):
        todo.source.path.rmdir()
    if moved:
        usage.record_in(ws, usage.Op.WRITE, moved)
    return todo
