"""The one masking rule of a stored memory (pure): which fields hold free text, how each
is masked, and a private block in a tag or a path stored as REDACTED.

Storage's write masks every memory through `mask_memory` (`store.save`, `store.render`,
`store.mask_text`), and the merge (`core.merge`, which cannot import storage) masks its
merged memory and the sides it writes into a conflicted file through the same functions,
so the field list is written once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memex.core import model

if TYPE_CHECKING:
    from memex.core.redact import Finding

# Fields that hold ids, enum values, times or flags: never free text, so never masked.
STRUCTURAL_FIELDS = frozenset({
    "id", "schema_version", "revision", "repo_id", "scope", "visibility", "type", "role",
    "instruction_state", "trust_level", "importance", "confidence", "status", "supersedes",
    "superseded_by", "related", "extends", "contradicts", "review_state", "derived_from",
    "source", "pinned", "local_approve",
}) | model.TIME_FIELDS
MASKED_FIELDS = tuple(n for n in (*model.FIELD_ORDER, "body") if n not in STRUCTURAL_FIELDS)
# A bracketed placeholder is no tag, and in a path a glob character class.
_TAG_SHAPED = frozenset({"tags", "paths"})


def mask_field(name: str, value: Any, found: list[Finding] | None = None) -> Any:
    """VALUE of field NAME as a write stores it: every secret keeps its first four
    characters, a `<private>` block becomes [REDACTED] (REDACTED in tags and paths,
    `redact.as_tag`). A list of texts is masked as one (`redact.redact_parts`: a block
    opened in one alias and closed in the next is masked too). A structural field is
    returned as it is. What was found is added to FOUND."""
    if name in STRUCTURAL_FIELDS:
        return value
    masked = _masked(value, found)
    if name in _TAG_SHAPED and isinstance(masked, list) and masked != value:
        from memex.core import redact

        return [redact.as_tag(str(t)) for t in masked]
    return masked


def _masked(value: Any, found: list[Finding] | None) -> Any:
    if isinstance(value, str):
        if not value:
            return value
        from memex.core import redact  # its ~100 patterns compile only for a write

        result = redact.redact(value)
        if found is not None:
            found.extend(result.findings)
        return result.text
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            from memex.core import redact

            parts, joined = redact.redact_parts(value)
            if found is not None:
                found.extend(joined.findings)
            return parts if joined.changed else value
        return [_masked(v, found) for v in value]
    if isinstance(value, dict):
        return {k: _masked(v, found) for k, v in value.items()}
    return value


def mask_memory(memory: model.Memory, notices: list[str] | None = None) -> model.Memory:
    """The memory with every free-text field masked by `mask_field` (title, body, tags,
    paths, aliases, language, canonical_ref, the people fields, review and status
    history notes, unknown keys); the memory itself when nothing changes. NOTICES gets
    one line per changed field ("title: masked 1 secret (...)"), never the secret.

    This is the one masking step of every write: storage's `save` and `render` apply
    it, so no path that writes a memory (capture, update, supersede, MCP, hooks, import,
    merge, promote) can store a secret the detectors know."""
    changes: dict[str, object] = {}
    for name in (*MASKED_FIELDS, "extra"):
        value = getattr(memory, name)
        found: list[Finding] | None = [] if notices is not None else None
        masked = mask_field(name, value, found)
        if masked != value:
            changes[name] = masked
            if notices is not None and found:
                notices.append(f"{name}: {_notice(found)}")
    return memory.copy(**changes) if changes else memory


def _notice(found: list[Finding]) -> str:
    from memex.core import redact

    return redact.Redaction(text="", findings=tuple(found)).notice()


def mask_shaped(name: str, values: list[str]) -> tuple[list[str], bool]:
    """VALUES of a tag-shaped field (tags, paths) masked as `mask_memory` masks them,
    and whether a whole-text mask (`redact.redact`) would have left a bracketed
    placeholder there (no tag; in a path a glob character class)."""
    assert name in _TAG_SHAPED
    plain = _masked(values, None)
    if plain == values:
        return values, False
    from memex.core import redact

    masked = [redact.as_tag(str(v)) for v in plain]
    return masked, masked != plain
