"""Links between memories (extends, contradicts, related) and a person's keep mark (pin).

A link is written on the first memory only (A extends B lives in A's file); `links`
shows both directions. A shared memory links only to memories of its own folder
(repo or org): a personal memory or an outbox draft would be an id pointing at
nothing on a teammate's machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memex.core import clock, model
from memex.core.errors import MemexError, UsageError
from memex.storage import store, usage, writelock
from memex.storage.homes import Workspace

if TYPE_CHECKING:  # the writer (and redaction's patterns) only when pin/unpin writes
    from memex.workflows import writes

RELATIONS = model.RELATIONS


@dataclass
class LinkResult:
    """What a link or unlink did to its source memory."""

    source: store.Loaded
    relation: str
    target: str
    changed: bool
    notices: list[str]

    def as_json(self) -> dict[str, object]:
        return {"id": self.source.id, "relation": self.relation, "target": self.target,
                "changed": self.changed, "path": str(self.source.path),
                self.relation: list(getattr(self.source.memory, self.relation))}


def _touch(ws: Workspace, loaded: store.Loaded, new: model.Memory) -> list[str]:
    at = clock.now_str()
    new.revision = loaded.memory.revision + 1
    new.updated_at = at
    loaded.memory = new
    store.save(loaded)
    usage.record_in(ws, usage.Op.WRITE, [new.id])
    if loaded.home.in_git:
        return [f"changed {loaded.path} in the working tree; commit it when ready"]
    return []


_WHERE = {"personal": "a personal memory", "outbox": "an outbox draft",
          "org-outbox": "an org outbox draft", "repo": "in the repo's memory folder",
          "org": "in the org repo's memory folder"}


def _cross_home_reason(source: store.Loaded, target: store.Loaded) -> str:
    """Why a shared memory may not point at this target: its teammates could not see it."""
    hint = (f"; submit it first (git memex submit {target.id[:10]}), then link"
            if target.home.is_outbox else "")
    return (f"{source.id} is shared ({_WHERE[source.home.kind]}) and {target.id} is "
            f"{_WHERE[target.home.kind]}: a shared memory links only to memories in its "
            f"own folder, or the link points at nothing for teammates and verify fails{hint}; "
            "nothing changed")


@writelock.holds_write_lock
def link(ws: Workspace, source_id: str, relation: str, target_id: str,
         remove: bool = False) -> LinkResult:
    """Add (or with remove, drop) `relation` from SOURCE to TARGET."""
    if relation not in RELATIONS:
        raise UsageError(f"unknown relation {relation!r}; expected one of: {', '.join(RELATIONS)}")
    source = store.find(ws, source_id)
    if source.memory.status == "superseded":
        raise MemexError(f"{source.id} is superseded by {source.memory.superseded_by}; "
                         "link the newest memory of the chain")
    current = list(getattr(source.memory, relation))
    if remove:
        prefix = store.normalise_id(target_id)
        matches = [x for x in current if x.startswith(prefix)]
        if not matches:
            raise MemexError(f"{source.id} has no {relation} link to {target_id!r}")
        if len(matches) > 1:
            raise UsageError(f"{target_id!r} matches {len(matches)} {relation} links; "
                             "give more of the id")
        new = source.memory.copy()
        setattr(new, relation, [x for x in current if x != matches[0]])
        notices = _touch(ws, source, new)
        return LinkResult(source, relation, matches[0], True, notices)
    target = store.find(ws, target_id)
    if target.id == source.id:
        raise UsageError("a memory cannot link to itself")
    if source.home.in_git and target.home != source.home:
        raise MemexError(_cross_home_reason(source, target))
    if target.id in current:
        return LinkResult(source, relation, target.id, False,
                          [f"{source.id} already {relation} {target.id}; nothing changed"])
    new = source.memory.copy()
    setattr(new, relation, [*current, target.id])
    notices = _touch(ws, source, new)
    return LinkResult(source, relation, target.id, True, notices)


@dataclass(frozen=True)
class Link:
    """One relation of a memory, as show lists it."""

    relation: str
    direction: str  # out: this memory says it; in: the other memory says it
    other: str
    title: str | None  # None: the other memory is not found here


def links(ws: Workspace, memory: model.Memory) -> list[Link]:
    """Every link of a memory, both ways, with the other memory's title, from the index
    as the caller's read refreshed it (`show` parses no other memory file and
    materialises only the memories that name this one)."""
    from memex.index import views

    outgoing = [(relation, other) for relation in RELATIONS
                for other in getattr(memory, relation)]
    titles = {item.id: item.memory.title
              for item in views.by_ids(ws, list(dict.fromkeys(o for _, o in outgoing)))}
    out = [Link(relation, "out", other, titles.get(other)) for relation, other in outgoing]
    for other in views.linking(ws, memory.id):
        if other.id == memory.id:
            continue
        for relation in RELATIONS:
            if memory.id in getattr(other.memory, relation):
                out.append(Link(relation, "in", other.id, other.memory.title))
    return out


@writelock.holds_write_lock
def set_pinned(ws: Workspace, id_or_prefix: str, pinned: bool) -> writes.WriteResult:
    """pin / unpin: a person's keep mark, which clean and decay respect."""
    from memex.workflows import writes

    loaded = store.find(ws, id_or_prefix)
    if loaded.memory.pinned == pinned:
        state = "pinned" if pinned else "not pinned"
        return writes.WriteResult(loaded.memory, loaded.path, created=False,
                                  notices=[f"{loaded.id} is already {state}; nothing changed"])
    new = loaded.memory.copy(pinned=pinned)
    notices = _touch(ws, loaded, new)
    return writes.WriteResult(new, loaded.path, created=False, notices=notices)


def problems(items: list[store.Loaded]) -> list[tuple[str, str]]:
    """(id, message) for links `verify` should report: to an unknown memory, to
    itself, or from a shared memory to a personal one. Pure over what was scanned."""
    by_id = {i.id: i for i in items}
    out: list[tuple[str, str]] = []
    for item in items:
        for relation in RELATIONS:
            for other in getattr(item.memory, relation):
                target = by_id.get(other)
                if other == item.id:
                    out.append((item.id, f"{item.id} {relation} itself"))
                elif target is None:
                    out.append((item.id, f"{item.id} {relation} {other}, which is not here"))
                elif item.home.in_git and target.memory.scope == "personal":
                    out.append((item.id, f"{item.id} is shared but {relation} the personal "
                                         f"memory {other}"))
    return out
