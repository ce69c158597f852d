"""The field rules of the 3-way merge of one memory (pure): DESIGN.md rule 4.

`merge_memories` merges field by field and hands the body to the text merge its caller
passes in (git's `merge-file` in `memex.workflows.file_merge`). What needs judgement is
reported as a `FieldConflict`, never decided: the same scalar changed differently on both
sides, two different successors in a supersede chain (a lifecycle conflict), or a body
conflict. `conflict_text` renders a conflicted result; `redact_memory` and
`redact_conflict` mask secrets in what is written and printed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memex.core import frontmatter, masking, model

LABELS = ("ours", "base", "theirs")
LIFECYCLE_FIELDS = ("supersedes", "superseded_by")
_MISSING: Any = object()  # the value of a field in an absent ancestor (add/add)

# body merger: (ours, base, theirs) -> (merged text, conflicted)
BodyMerger = Callable[[str, str, str], tuple[str, bool]]


@dataclass(frozen=True)
class FieldConflict:
    """One thing a human must decide: `field` with the three values (None when absent)."""

    field: str
    ours: Any
    theirs: Any
    base: Any
    kind: str = "field"  # field | lifecycle | body | invalid | parse

    def describe(self, ours: str = "ours", theirs: str = "theirs") -> str:
        """One line; `ours` / `theirs` name the sides for people (a rebase swaps them)."""
        if self.kind == "body":
            return "body: both sides changed the same lines (conflict markers in the body)"
        if self.kind == "lifecycle":
            return (f"{self.field}: {ours} says {self.ours or 'nothing'}, {theirs} says "
                    f"{self.theirs or 'nothing'} (base {self.base or 'nothing'}): two different "
                    "supersede chains; decide which successor is the real one")
        if self.kind in ("parse", "invalid"):
            return f"{self.field}: {self.ours}"
        return (f"{self.field}: {ours} {_show(self.ours)}, {theirs} {_show(self.theirs)} "
                f"(base {_show(self.base)})")

    def as_json(self) -> dict[str, Any]:
        return {"field": self.field, "kind": self.kind, "ours": self.ours,
                "theirs": self.theirs, "base": self.base, "message": self.describe()}


def _show(value: Any) -> str:
    if value is None or value is _MISSING:
        return "unset"
    text = str(value)
    return repr(text if len(text) <= 60 else text[:59] + "\u2026")


@dataclass
class MergeResult:
    """The merged file text (clean, or the conflict form) and what is in conflict."""

    text: str
    memory: model.Memory | None
    conflicts: list[FieldConflict] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    fallback: bool = False  # an input did not parse: plain text merge of the whole file

    @property
    def clean(self) -> bool:
        return not self.conflicts


def _pick(name: str, base: Any, ours: Any, theirs: Any, conflicts: list[FieldConflict],
          kind: str = "field") -> Any:
    """A scalar changed on one side takes that side; changed differently is a conflict."""
    if ours == theirs:
        return ours
    if ours == base:
        return theirs
    if theirs == base:
        return ours
    conflicts.append(FieldConflict(name, _plain(ours), _plain(theirs), _plain(base), kind))
    return ours


def _plain(value: Any) -> Any:
    return None if value is _MISSING else value


def merge_set(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    """Union of both sides' additions; an item one side removed from the base stays out."""
    removed = (set(base) - set(ours)) | (set(base) - set(theirs))
    return [x for x in dict.fromkeys(ours + theirs) if x not in removed]


def merge_history(ours: list[dict[str, str]], theirs: list[dict[str, str]]
                  ) -> list[dict[str, str]]:
    """Both histories in time order, each entry once (append-only: nothing is dropped)."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    out: list[dict[str, str]] = []
    for entry in ours + theirs:
        key = tuple(sorted(entry.items()))
        if key not in seen:
            seen.add(key)
            out.append(dict(entry))
    return sorted(out, key=lambda e: e.get("at", ""))  # stable: same instant keeps order


def _field_names() -> list[str]:
    return [f.name for f in dataclasses.fields(model.Memory) if f.name not in ("extra", "body")]


def merge_memories(base: model.Memory | None, ours: model.Memory, theirs: model.Memory,
                   merge_body: BodyMerger) -> tuple[model.Memory, list[FieldConflict]]:
    """The field-level merge; conflicting fields keep ours' value in the returned memory."""
    if ours == theirs or (base is not None and theirs == base):
        return ours.copy(), []
    if base is not None and ours == base:
        return theirs.copy(), []
    conflicts: list[FieldConflict] = []
    values: dict[str, Any] = {}

    def base_of(name: str) -> Any:
        return getattr(base, name) if base is not None else _MISSING

    for name in _field_names():
        o, t, b = getattr(ours, name), getattr(theirs, name), base_of(name)
        if name == "revision":
            values[name] = max(o, t) + 1
        elif name == "created_at":
            values[name] = min((v for v in (o, t) if v), default="")
        elif name == "updated_at":
            values[name] = max(o, t)
        elif name == "retired_at":
            continue  # follows the merged status, below
        elif name in model.LIST_FIELDS:
            values[name] = merge_set(b if b is not _MISSING else [], o, t)
            if name == "aliases":  # search hints: the union, ours first, up to the cap
                values[name] = values[name][: model.MAX_ALIASES]
        elif name in model.HISTORY_FIELDS:
            values[name] = merge_history(o, t)
        elif name in LIFECYCLE_FIELDS:
            values[name] = _pick(name, b, o, t, conflicts, kind="lifecycle")
        else:
            values[name] = _pick(name, b, o, t, conflicts)
    if values["status"] in model.LIVE_STATUSES:
        values["retired_at"] = None
    else:
        scratch: list[FieldConflict] = []
        picked = _pick("retired_at", base_of("retired_at"), ours.retired_at, theirs.retired_at,
                       scratch)
        # two retirement stamps of the same status: the earlier one is when it left active
        values["retired_at"] = picked if not scratch else min(
            v for v in (ours.retired_at, theirs.retired_at) if v)

    extra: dict[str, Any] = {}
    base_extra = base.extra if base is not None else {}
    for key in dict.fromkeys([*ours.extra, *theirs.extra, *base_extra]):
        value = _pick(key, base_extra.get(key, _MISSING if base is None else None),
                      ours.extra.get(key), theirs.extra.get(key), conflicts)
        if value is not None and value is not _MISSING:
            extra[key] = value

    o_body, t_body = ours.body, theirs.body
    b_body = base.body if base is not None else ""
    if o_body == t_body or t_body == b_body:
        body = o_body
    elif o_body == b_body:
        body = t_body
    else:
        body, conflicted = merge_body(o_body, b_body, t_body)
        if conflicted:
            conflicts.append(FieldConflict("body", o_body, t_body, b_body if base else None,
                                           "body"))
    merged = model.Memory(body=body, extra=extra, **values)
    return merged, conflicts


def redact_memory(memory: model.Memory) -> tuple[model.Memory, list[str]]:
    """The merged memory masked as a write stores it (`masking.mask_memory`), and one
    notice per field it changed."""
    notices: list[str] = []
    return masking.mask_memory(memory, notices), notices


def redact_conflict(conflict: FieldConflict) -> FieldConflict:
    def clean(value: Any) -> Any:
        return masking.mask_field(conflict.field, value)

    return dataclasses.replace(conflict, ours=clean(conflict.ours),
                               theirs=clean(conflict.theirs), base=clean(conflict.base))


def conflict_text(merged: model.Memory, conflicts: list[FieldConflict],
                  sides: dict[str, model.Memory | None],
                  labels: tuple[str, str, str] = LABELS, marker_size: int = 7) -> str:
    """The conflict form: the merged header, each conflicting key inside a marker block

        <<<<<<< ours / ||||||| base / ======= / >>>>>>> theirs

    holding that key's line(s) from each side (nothing when the side lacks it), then the
    body with merge-file's markers. Keeping one key per block leaves every decided field
    as merged and makes the file fixable by deleting lines.
    """
    wanted = merged.front_matter()
    conflicted = {c.field for c in conflicts if c.kind != "body"}
    keys: list[str] = list(model.FIELD_ORDER)
    for side in (sides.get("ours"), sides.get("theirs"), sides.get("base")):
        if side is not None:
            keys += [k for k in side.extra if k not in keys]
    fm = {name: (s.front_matter() if s is not None else {}) for name, s in sides.items()}
    marks = ("<" * marker_size, "|" * marker_size, "=" * marker_size, ">" * marker_size)
    lines: list[str] = []
    for key in keys:
        if key in conflicted:
            for mark, side_name in ((marks[0], "ours"), (marks[1], "base"), (marks[2], "theirs")):
                label = labels[("ours", "base", "theirs").index(side_name)]
                lines.append(mark if mark == marks[2] else f"{mark} {label}")
                # a side's raw value is written too, masked as a write stores it
                value = masking.mask_field(key, fm.get(side_name, {}).get(key))
                if value is not None:
                    lines.append(frontmatter.emit_header({key: value}).rstrip("\n"))
            lines.append(f"{marks[3]} {labels[2]}")
        elif key in wanted:
            lines.append(frontmatter.emit_header({key: wanted[key]}).rstrip("\n"))
    body = merged.body.strip("\n").rstrip()
    return "---\n" + "\n".join(lines) + "\n---\n" + (f"\n{body}\n" if body else "")
