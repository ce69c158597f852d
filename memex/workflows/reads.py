"""Reading memories as people see them: chains completed, retired ones hidden by default.

Reads never write files; what a read had to repair is returned as warnings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from memex.core import clock, lifecycle, model
from memex.storage import store
from memex.storage.homes import Workspace

HIDDEN_REVIEW = ("rejected",)


@dataclass
class View:
    """What a read returns: eligible memories, plus what it skipped or repaired."""

    items: list[store.Loaded] = field(default_factory=list)
    quarantined: list[store.Quarantined] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


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


def load_view(ws: Workspace, scopes: Iterable[str] | None = None, include_all: bool = False,
              as_of: str | None = None) -> View:
    """Eligible memories of the scopes asked, newest first, from the refreshed index."""
    from memex.index import views

    snap = views.snapshot(ws)
    wanted = set(scopes) if scopes is not None else None
    view = View(quarantined=snap.quarantined, warnings=snap.warnings)
    at = clock.now_str()
    for item in snap.items:
        if wanted is not None and item.memory.scope not in wanted:
            continue
        if not include_all and not eligible(item.memory, at, as_of):
            continue
        view.items.append(item)
    view.items.sort(key=lambda x: (x.memory.updated_at, x.id), reverse=True)
    return view


def show(ws: Workspace, id_or_prefix: str) -> tuple[store.Loaded, list[str]]:
    """One memory by id (its file, read now), with its chain completed as reads see it."""
    from memex.index import views

    item = store.find(ws, id_or_prefix)
    indexed, warnings = views.completed(ws, item.id)
    memory = item.memory
    if indexed is not None and (indexed.status, indexed.superseded_by) != (
            memory.status, memory.superseded_by):
        memory = memory.copy(status=indexed.status, superseded_by=indexed.superseded_by,
                             retired_at=indexed.retired_at)
    return store.Loaded(memory, item.path, item.home, item.parsed), warnings


def as_json(item: store.Loaded) -> dict[str, object]:
    data: dict[str, object] = dict(item.memory.front_matter())
    for name in model.FIELD_ORDER:
        data.setdefault(name, getattr(item.memory, name, None))
    data["body"] = item.memory.body
    data["path"] = str(item.path)
    data["home"] = item.home.kind
    data["summary"] = item.memory.summary
    return data
