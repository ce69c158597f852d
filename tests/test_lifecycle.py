"""core/lifecycle as pure functions: status moves, supersede, review and instruction moves,
chain completion (the CLI tests cover the same rules through commands)."""

from __future__ import annotations

import pytest

from memex.core import lifecycle
from memex.core.errors import InvalidMemory
from memex.core.lifecycle import TransitionError
from tests.helpers.memfiles import memory

AT = "2026-12-01T10:00:00Z"
ME = "Test User <test@example.com>"


# ---------------------------------------------------------------- status


@pytest.mark.parametrize(("start", "to"), [
    (start, to) for start, moves in lifecycle.STATUS_MOVES.items() for to in moves])
def test_every_allowed_status_move(start: str, to: str) -> None:
    old = memory(status=start)
    new = lifecycle.set_status(old, to, AT, ME, note="why")
    assert new.status == to and new.updated_at == AT and new.revision == old.revision + 1
    assert new.status_history[-1] == {"at": AT, "by": ME, "from": start, "to": to,
                                      "note": "why"}
    assert new.retired_at == (AT if to in lifecycle.RETIRED else None)
    assert old.status == start and not old.status_history  # the input is untouched


def test_status_moves_that_are_refused() -> None:
    active = memory(status="active")
    with pytest.raises(TransitionError, match="already active"):
        lifecycle.set_status(active, "active", AT, ME)
    with pytest.raises(TransitionError, match="git memex supersede"):
        lifecycle.set_status(active, "superseded", AT, ME)
    with pytest.raises(TransitionError, match="from retracted to archived"):
        lifecycle.set_status(memory(status="retracted"), "archived", AT, ME)
    with pytest.raises(TransitionError, match="supersede its successor instead"):
        lifecycle.set_status(memory(status="superseded"), "active", AT, ME)
    with pytest.raises(InvalidMemory):
        lifecycle.set_status(active, "gone", AT, ME)


def test_history_entry_without_a_note_or_a_from() -> None:
    assert lifecycle.history_entry(AT, ME, None, "draft") == {
        "at": AT, "by": ME, "from": "none", "to": "draft"}


# ---------------------------------------------------------------- supersede


def test_supersede_retires_the_old_and_links_both() -> None:
    old, new = memory(), memory(title="Use pnpm 9")
    retired, successor = lifecycle.supersede(old, new, AT, ME)
    assert retired.status == "superseded" and retired.superseded_by == new.id
    assert retired.retired_at == AT and retired.revision == old.revision + 1
    assert retired.status_history[-1]["note"] == f"superseded by {new.id}"
    assert successor.supersedes == old.id and successor.id == new.id
    assert old.status == "active" and new.supersedes is None


def test_supersede_refusals() -> None:
    old = memory()
    with pytest.raises(TransitionError, match="cannot supersede itself"):
        lifecycle.supersede(old, old, AT, ME)
    done = memory(status="superseded", superseded_by="01ARZ3NDEKTSV4RRFFQ69G5FAV",
                  retired_at=AT)
    with pytest.raises(TransitionError, match="supersede that one instead"):
        lifecycle.supersede(done, memory(), AT, ME)
    with pytest.raises(TransitionError, match="restore it first"):
        lifecycle.supersede(memory(status="archived", retired_at=AT), memory(), AT, ME)


# ---------------------------------------------------------------- review


@pytest.mark.parametrize(("start", "to", "command"), [
    (start, to, command) for start, moves in lifecycle.REVIEW_MOVES.items()
    for to, command in moves.items()])
def test_every_review_move(start: str, to: str, command: str) -> None:
    old = memory(review_state=start)
    assert lifecycle.review_command(old, to) == command
    new = lifecycle.review_transition(old, to, AT, ME, note="reason")
    assert new.review_state == to and new.revision == old.revision + 1
    assert new.review_history[-1]["from"] == start and new.review_history[-1]["to"] == to
    if to in ("approved", "published"):
        assert new.approved_by == ME


def test_review_moves_refused_and_their_side_effects() -> None:
    published = memory(review_state="published")
    assert lifecycle.review_command(published, "approved") is None
    with pytest.raises(TransitionError, match="allowed: nothing \\(final\\)"):
        lifecycle.review_transition(published, "approved", AT, ME)
    with pytest.raises(TransitionError, match="allowed: approved, published, rejected"):
        lifecycle.review_transition(memory(review_state="proposed"), "draft", AT, ME)
    with pytest.raises(TransitionError, match="needs a reason"):
        lifecycle.review_transition(memory(review_state="proposed"), "rejected", AT, ME)
    untrusted = memory(review_state="proposed", trust_level="untrusted")
    assert lifecycle.review_transition(untrusted, "approved", AT, ME).trust_level == "reviewed"
    earlier = memory(review_state="approved", approved_by="Someone Else <s@example.com>")
    assert lifecycle.review_transition(earlier, "published", AT, ME).approved_by == \
        "Someone Else <s@example.com>"  # the first approver stays
    rejected = memory(review_state="rejected", approved_by=ME)
    assert lifecycle.review_transition(rejected, "proposed", AT, ME).approved_by is None
    submitted = lifecycle.review_transition(memory(review_state="draft", approved_by=ME),
                                            "proposed", AT, ME)
    assert submitted.approved_by == ME  # only a resubmission clears it


# ---------------------------------------------------------------- instructions


def test_instruction_moves() -> None:
    inst = memory(role="instruction", review_state="approved", trust_level="untrusted")
    approved = lifecycle.instruction_transition(inst, "approved", AT, ME, note="ok")
    assert approved.instruction_state == "approved" and approved.trust_level == "reviewed"
    assert approved.review_history[-1]["note"] == "instruction draft -> approved: ok"
    assert approved.review_state == "approved"  # the review state does not move
    revoked = lifecycle.instruction_transition(approved, "revoked", AT, ME)
    assert revoked.instruction_state == "revoked"
    assert revoked.review_history[-1]["note"] == "instruction approved -> revoked"
    again = lifecycle.instruction_transition(revoked, "approved", AT, ME)
    assert again.instruction_state == "approved"


def test_instruction_refusals() -> None:
    with pytest.raises(TransitionError, match="not an instruction"):
        lifecycle.instruction_transition(memory(review_state="approved"), "approved", AT, ME)
    with pytest.raises(TransitionError, match="promote it first"):
        lifecycle.instruction_transition(memory(role="instruction", review_state="proposed"),
                                         "approved", AT, ME)
    approved = memory(role="instruction", review_state="published",
                      instruction_state="approved")
    with pytest.raises(TransitionError, match="already approved"):
        lifecycle.instruction_transition(approved, "approved", AT, ME)
    with pytest.raises(InvalidMemory):
        lifecycle.instruction_transition(approved, "maybe", AT, ME)


# ---------------------------------------------------------------- chains


def test_complete_chains_fills_a_half_written_chain() -> None:
    old, new = memory(), memory(title="new")
    new.supersedes = old.id
    views, warnings = lifecycle.complete_chains([old, new])
    assert views[old.id].status == "superseded" and views[old.id].superseded_by == new.id
    assert views[old.id].retired_at == new.created_at
    assert [w.id for w in warnings] == [old.id] and "verify --fix" in warnings[0].message
    assert old.status == "active"  # the file's memory is untouched


def test_complete_chains_leaves_whole_chains_and_retired_successors() -> None:
    old, new = memory(), memory(title="new")
    retired, linked = lifecycle.supersede(old, new, AT, ME)
    views, warnings = lifecycle.complete_chains([retired, linked])
    assert views == {retired.id: retired, linked.id: linked} and warnings == []
    dead = memory(title="dead", status="retracted", retired_at=AT, supersedes=old.id)
    views, warnings = lifecycle.complete_chains([old, dead])
    assert views[old.id].status == "active" and warnings == []


def test_complete_chains_two_successors_is_a_warning_not_a_choice() -> None:
    old, first, second = memory(), memory(title="a"), memory(title="b")
    retired, first = lifecycle.supersede(old, first, AT, ME)
    second.supersedes = old.id
    views, warnings = lifecycle.complete_chains([retired, first, second])
    assert views[old.id].superseded_by == first.id
    assert any("superseded by both" in w.message for w in warnings)


def test_a_pending_draft_does_not_retire_a_shared_memory() -> None:
    shared, draft = memory(), memory(title="draft successor")
    draft.supersedes = shared.id
    views, warnings = lifecycle.complete_chains([shared, draft], frozenset({draft.id}))
    assert views[shared.id].status == "active" and warnings == []
    older = memory(title="older draft")
    draft.supersedes = older.id
    views, warnings = lifecycle.complete_chains([older, draft],
                                                frozenset({draft.id, older.id}))
    assert views[older.id].status == "superseded" and warnings == []  # both drafts: silent


def test_a_successor_that_does_not_point_back() -> None:
    old, new = memory(), memory(title="new")
    old = old.copy(status="superseded", superseded_by=new.id, retired_at=AT)
    _, warnings = lifecycle.complete_chains([old, new])
    assert [w.id for w in warnings] == [new.id] and "does not say so" in warnings[0].message


def test_expiry_and_newest_in_chain() -> None:
    assert lifecycle.is_expired(memory(expires_at="2026-01-01T00:00:00Z"), AT)
    assert not lifecycle.is_expired(memory(expires_at="2027-01-01T00:00:00Z"), AT)
    assert not lifecycle.is_expired(memory(), AT)
    a, b, c = memory(), memory(), memory()
    a.superseded_by, b.superseded_by = b.id, c.id
    by_id = {m.id: m for m in (a, b, c)}
    assert lifecycle.newest_in_chain(a.id, by_id) == c.id
    assert lifecycle.newest_in_chain("unknown", by_id) == "unknown"
    c.superseded_by = a.id  # a loop ends where it would repeat
    assert lifecycle.newest_in_chain(a.id, by_id) == c.id
