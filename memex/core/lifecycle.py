"""Status, supersede chains and review transitions (pure: memories in, memories out)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memex.core import model
from memex.core.errors import MemexError, UsageError

RETIRED = ("superseded", "retracted", "archived")

# status -> the statuses a person may move it to with `status` / `forget`
STATUS_MOVES: dict[str, tuple[str, ...]] = {
    "active": ("deprecated", "archived", "retracted"),
    "deprecated": ("active", "archived", "retracted"),
    "archived": ("active", "retracted"),
    "retracted": ("active",),
    "superseded": (),
}

# review_state -> {target: command that makes the move}
REVIEW_MOVES: dict[str | None, dict[str, str]] = {
    "draft": {"proposed": "submit"},
    "proposed": {"approved": "promote", "published": "merge", "rejected": "reject"},
    "approved": {"published": "promote", "rejected": "reject"},
    "rejected": {"proposed": "resubmit"},
    "published": {},
}


class TransitionError(MemexError):
    """A move the state machine does not allow."""


# instruction_state -> the states `promote --instruction` / `--revoke` may move it to
INSTRUCTION_MOVES: dict[str, tuple[str, ...]] = {
    "draft": ("approved", "revoked"),
    "approved": ("revoked",),
    "revoked": ("approved",),
}


def review_command(memory: model.Memory, to: str) -> str | None:
    """The command that makes this review move (REVIEW_MOVES), or None if none does."""
    return REVIEW_MOVES.get(memory.review_state, {}).get(to)


def check_note(note: str | None) -> None:
    """A review or status note a person or an agent gives (promote, status, forget, MCP
    memory_forget) holds no control character, as a title (`model.line_problem`): it is
    kept in the memory's history and shown in `log`."""
    if note and (problem := model.line_problem("note", note)):
        raise UsageError(f"{problem}; nothing was saved")


def history_entry(at: str, by: str, frm: str | None, to: str, note: str | None = None
                  ) -> dict[str, str]:
    entry = {"at": at, "by": by, "from": frm or "none", "to": to}
    if note:
        entry["note"] = note
    return entry


def set_status(memory: model.Memory, status: str, at: str, by: str,
               note: str | None = None) -> model.Memory:
    model.check_enum("status", status)
    if status == memory.status:
        raise TransitionError(f"{memory.id} is already {status}")
    if status == "superseded":
        raise TransitionError("use `git memex supersede` to supersede a memory")
    allowed = STATUS_MOVES.get(memory.status, ())
    if status not in allowed:
        hint = " (a superseded memory stays in its chain; supersede its successor instead)" \
            if memory.status == "superseded" else ""
        raise TransitionError(f"cannot move {memory.id} from {memory.status} to {status}{hint}")
    out = memory.copy(status=status, updated_at=at, revision=memory.revision + 1)
    out.status_history.append(history_entry(at, by, memory.status, status, note))
    out.retired_at = at if status in RETIRED else None
    return out


def supersede(old: model.Memory, new: model.Memory, at: str, by: str
              ) -> tuple[model.Memory, model.Memory]:
    """Mark `old` superseded by `new`; returns (old', new')."""
    if old.id == new.id:
        raise TransitionError("a memory cannot supersede itself")
    if old.status == "superseded":
        raise TransitionError(
            f"{old.id} is already superseded by {old.superseded_by}; supersede that one instead"
        )
    if not old.is_live:
        raise TransitionError(f"{old.id} is {old.status}; restore it first with `status active`")
    retired = old.copy(status="superseded", superseded_by=new.id, retired_at=at,
                       updated_at=at, revision=old.revision + 1)
    retired.status_history.append(history_entry(at, by, old.status, "superseded",
                                                f"superseded by {new.id}"))
    return retired, new.copy(supersedes=old.id)


def review_transition(memory: model.Memory, to: str, at: str, by: str,
                      note: str | None = None) -> model.Memory:
    """Move review_state along DESIGN.md's state machine; stamps approved_by."""
    model.check_enum("review_state", to)
    moves = REVIEW_MOVES.get(memory.review_state, {})
    if to not in moves:
        allowed = ", ".join(moves) or "nothing (final)"
        raise TransitionError(
            f"cannot move {memory.id} from {memory.review_state} to {to}; allowed: {allowed}"
        )
    if to == "rejected" and not note:
        raise TransitionError("a rejection needs a reason: --note TEXT")
    out = memory.copy(review_state=to, updated_at=at, revision=memory.revision + 1)
    out.review_history.append(history_entry(at, by, memory.review_state, to, note))
    if to in ("approved", "published") and not out.approved_by:
        out.approved_by = by
    if to == "approved" and out.trust_level == "untrusted":
        out.trust_level = "reviewed"
    if to == "proposed":
        out.approved_by = None if memory.review_state == "rejected" else out.approved_by
    return out


def instruction_transition(memory: model.Memory, to: str, at: str, by: str,
                           note: str | None = None) -> model.Memory:
    """Approve or revoke an instruction memory (DESIGN.md rule 1): only a reviewed one."""
    model.check_enum("instruction_state", to)
    if memory.role != "instruction":
        raise TransitionError(f"{memory.id} is not an instruction (role: {memory.role})")
    if to == "approved" and not memory.is_reviewed:
        raise TransitionError(
            f"{memory.id} is {memory.review_state}: only an approved or published memory's "
            "instruction can be approved; promote it first")
    current = memory.instruction_state or "draft"
    if to not in INSTRUCTION_MOVES.get(current, ()):
        raise TransitionError(f"{memory.id}'s instruction is already {current}")
    out = memory.copy(instruction_state=to, updated_at=at, revision=memory.revision + 1)
    if to == "approved" and out.trust_level == "untrusted":
        out.trust_level = "reviewed"
    what = f"instruction {current} -> {to}" + (f": {note}" if note else "")
    out.review_history.append(history_entry(at, by, memory.review_state, memory.review_state
                                            or "none", what))
    return out


def kept_over(rival: model.Memory, kept: model.Memory) -> bool:
    """The shape `resolve OLD --keep KEPT` leaves: two successors of OLD, and `rival`,
    the one not kept, is superseded by `kept` while `kept` supersedes OLD; the rival's
    own `supersedes` moved to `related`. The one rule verify and reads accept for it."""
    old = kept.supersedes
    return (rival.superseded_by == kept.id and rival.supersedes is None
            and old is not None and old in rival.related)


def pick_earlier(a: model.Memory, b: model.Memory) -> tuple[model.Memory, model.Memory]:
    """(earlier, later) of two memories: by created_at, then id (`resolve --both`)."""
    return (a, b) if (a.created_at or "", a.id) <= (b.created_at or "", b.id) else (b, a)


def settle_successors(old: model.Memory, kept: model.Memory, rival: model.Memory,
                      both: bool, at: str, by: str
                      ) -> tuple[model.Memory, model.Memory, model.Memory]:
    """Two memories supersede `old` (two branches); a person decided. Returns (old',
    kept', rival'). `both` False (`--keep`): the rival is superseded by the kept one and
    its `supersedes` moves to `related`. `both` True: `kept` must be the earlier; the
    rival's `supersedes` moves to `related` and the two are linked `contradicts` both
    ways for a human. Each change is recorded in review_history."""
    how = "both kept, linked contradicts" if both else f"kept {kept.id}"
    note = f"two successors of {old.id}: {how} (resolve)"

    def stamp(m: model.Memory, **changes: object) -> model.Memory:
        out = m.copy(**changes, updated_at=at, revision=m.revision + 1)
        out.review_history.append(history_entry(at, by, m.review_state,
                                                m.review_state or "none", note))
        return out

    new_old = stamp(old, status="superseded", superseded_by=kept.id,
                    retired_at=old.retired_at or at)
    related = [*rival.related, *([old.id] if old.id not in rival.related else [])]
    if both:
        new_kept = stamp(kept, supersedes=old.id,
                         contradicts=list(dict.fromkeys([*kept.contradicts, rival.id])))
        new_rival = stamp(rival, supersedes=None, related=related,
                          contradicts=list(dict.fromkeys([*rival.contradicts, kept.id])))
        return new_old, new_kept, new_rival
    new_kept = stamp(kept, supersedes=old.id)
    new_rival = stamp(rival, supersedes=None, related=related, status="superseded",
                      superseded_by=kept.id, retired_at=rival.retired_at or at)
    new_rival.status_history.append(history_entry(at, by, rival.status, "superseded",
                                                  f"superseded by {kept.id} ({note})"))
    return new_old, new_kept, new_rival


@dataclass(frozen=True)
class ChainWarning:
    """A supersede chain's problem, on the memory it concerns."""

    id: str
    message: str


def complete_chains(memories: Iterable[model.Memory], pending: frozenset[str] = frozenset()
                    ) -> tuple[dict[str, model.Memory], list[ChainWarning]]:
    """Views of memories with half-written supersede chains completed (files untouched).

    `pending` holds the ids of outbox drafts. A draft that supersedes a memory outside
    the outbox (a shared one) is a proposal: the shared memory stays live until the
    commit that submits the draft retires it, so drafts never hide vetted knowledge.
    """
    by_id = {m.id: m for m in memories}
    out = dict(by_id)
    warnings: list[ChainWarning] = []
    for memory in by_id.values():
        target = memory.supersedes
        if not target or target not in by_id:
            continue
        old = out[target]
        if old.superseded_by == memory.id and old.status == "superseded":
            continue
        if memory.status not in model.LIVE_STATUSES:
            continue
        if old.superseded_by and old.superseded_by != memory.id and old.superseded_by in by_id:
            warnings.append(ChainWarning(
                old.id, f"{old.id} is superseded by both {old.superseded_by} and {memory.id}"))
            continue
        if memory.id in pending and target not in pending:
            continue  # a proposed successor: retired at submit, not before
        if memory.id not in pending:
            warnings.append(ChainWarning(
                old.id, f"{old.id}: chain half-written ({memory.id} supersedes it but it does "
                "not say so); treated as superseded; `git memex verify --fix` repairs the file"))
        out[target] = old.copy(status="superseded", superseded_by=memory.id,
                               retired_at=old.retired_at or memory.created_at)
    for memory in by_id.values():
        successor = memory.superseded_by
        if successor and successor in by_id and by_id[successor].supersedes != memory.id \
                and not kept_over(memory, by_id[successor]):
            warnings.append(ChainWarning(
                successor, f"{successor}: chain half-written ({memory.id} says it is superseded "
                f"by {successor}, which does not say so)"))
    return out, warnings


def is_expired(memory: model.Memory, at: str) -> bool:
    return expired(memory.expires_at, at)


def expired(expires_at: str | None, at: str) -> bool:
    """An expiry time reached at AT."""
    return bool(expires_at and expires_at <= at)


def newest_in_chain(memory_id: str, by_id: dict[str, model.Memory]) -> str:
    seen = {memory_id}
    current = memory_id
    while True:
        nxt = by_id[current].superseded_by if current in by_id else None
        if not nxt or nxt in seen or nxt not in by_id:
            return current
        seen.add(nxt)
        current = nxt
