"""DESIGN.md's rules that hold everywhere, as pure functions: eligibility for a read."""

from __future__ import annotations

from memex.core import lifecycle, model

HIDDEN_REVIEW = ("rejected",)
PERSON_APPROVED_STATES = ("approved", "published")


def approved_by_person(memory: model.Memory) -> bool:
    """Did a person approve this memory (issue 14.8)? review_state approved or
    published, instruction_state approved, or approved_by set. `trust_level: reviewed`
    alone is not approval: it is what a person's own typing gets, and agents may still
    edit those personal memories."""
    return (memory.review_state in PERSON_APPROVED_STATES
            or memory.instruction_state == "approved" or bool(memory.approved_by))


def eligible(memory: model.Memory, at: str, as_of: str | None = None) -> bool:
    """DESIGN.md "Eligibility" for a default read."""
    return eligible_fields(memory.status, memory.review_state, memory.created_at,
                           memory.retired_at, memory.valid_from, memory.valid_until,
                           memory.expires_at, at, as_of)


def eligible_fields(status: str, review_state: str | None, created_at: str | None,
                    retired_at: str | None, valid_from: str | None, valid_until: str | None,
                    expires_at: str | None, at: str, as_of: str | None = None) -> bool:
    """`eligible` on the few fields it reads: what a caller holding an index row (not a
    Memory) passes."""
    if as_of is not None:
        return _visible_as_of(created_at, retired_at, valid_from, valid_until, expires_at,
                              as_of)
    if status not in model.LIVE_STATUSES:
        return False
    if review_state in HIDDEN_REVIEW:
        return False
    if lifecycle.expired(expires_at, at):
        return False
    if valid_until and valid_until <= at:
        return False
    return not (valid_from and valid_from > at)


def _visible_as_of(created_at: str | None, retired_at: str | None, valid_from: str | None,
                   valid_until: str | None, expires_at: str | None, moment: str) -> bool:
    """Created by T, not retired by T, and T inside valid_from..valid_until."""
    if created_at and created_at > moment:
        return False
    if retired_at and retired_at <= moment:
        return False
    if valid_from and valid_from > moment:
        return False
    if valid_until and valid_until <= moment:
        return False
    return not lifecycle.expired(expires_at, moment)
