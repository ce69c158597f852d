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
    if as_of is not None:
        return visible_as_of(memory, as_of)
    if memory.status not in model.LIVE_STATUSES:
        return False
    if memory.review_state in HIDDEN_REVIEW:
        return False
    if lifecycle.is_expired(memory, at):
        return False
    if memory.valid_until and memory.valid_until <= at:
        return False
    return not (memory.valid_from and memory.valid_from > at)


def visible_as_of(memory: model.Memory, moment: str) -> bool:
    """Created by T, not retired by T, and T inside valid_from..valid_until."""
    if memory.created_at and memory.created_at > moment:
        return False
    if memory.retired_at and memory.retired_at <= moment:
        return False
    if memory.valid_from and memory.valid_from > moment:
        return False
    if memory.valid_until and memory.valid_until <= moment:
        return False
    return not (memory.expires_at and memory.expires_at <= moment)
