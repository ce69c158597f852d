"""Field-level 3-way merge of one memory file over its common ancestor.

The field rules are pure (`memex.core.merge`); only the body goes through git's own
`git merge-file` (gitio), so body conflicts look exactly like any other git conflict.
What needs judgement is reported as a `FieldConflict`, never decided (DESIGN.md rule 4).
Redaction runs on the merged title and body, as on every write git-memex makes.

A conflicted result is rendered in the form `conflict_text` documents: the merged
front matter with git-style marker blocks around each conflicting key, and the
body with merge-file's markers. It never parses, so it cannot be committed by
accident past `verify`; `resolve` re-derives everything from the index stages.
"""

from __future__ import annotations

from memex.core import frontmatter, model, redact
from memex.core.errors import InvalidMemory
from memex.core.merge import (
    LABELS,
    BodyMerger,
    FieldConflict,
    MergeResult,
    conflict_text,
    merge_history,
    merge_memories,
    merge_set,
    redact_conflict,
    redact_memory,
)
from memex.storage import gitio, store

__all__ = ["LABELS", "BodyMerger", "FieldConflict", "MergeResult", "conflict_text",
           "git_body_merger", "merge_history", "merge_memories", "merge_set", "merge_texts",
           "merge_texts_or_text"]


# ---------------------------------------------------------------- files


def git_body_merger(labels: tuple[str, str, str] = LABELS, marker_size: int = 7) -> BodyMerger:
    def merge(ours: str, base: str, theirs: str) -> tuple[str, bool]:
        result = gitio.merge_file(_line_text(ours), _line_text(base), _line_text(theirs),
                                  labels, marker_size)
        return result.text.strip("\n").rstrip(), result.conflicts > 0

    return merge


def _line_text(text: str) -> str:
    return text + "\n" if text else ""


def _load(text: str) -> tuple[model.Memory, frontmatter.Parsed]:
    if "\0" in text:
        raise frontmatter.FrontMatterError("binary content (NUL bytes)")
    return frontmatter.load(text)


def merge_texts(base_text: str | None, ours_text: str, theirs_text: str,
                labels: tuple[str, str, str] = LABELS, marker_size: int = 7) -> MergeResult:
    """Merge three versions of one memory file (base None or empty: added on both sides).

    An input that does not parse as a memory falls back to git's text merge of the
    whole file, always reported as a conflict so that a human looks at it.
    """
    try:
        base = _load(base_text)[0] if base_text and base_text.strip() else None
        ours, ours_parsed = _load(ours_text)
        theirs = _load(theirs_text)[0]
    except InvalidMemory as exc:
        return _fallback(base_text or "", ours_text, theirs_text,
                         f"not a readable memory ({exc}); merged as plain text", labels,
                         marker_size)
    merged, conflicts = merge_memories(base, ours, theirs, git_body_merger(labels, marker_size))
    merged, notices = redact_memory(merged)
    conflicts = [redact_conflict(c) for c in conflicts]  # they are printed and written
    if not conflicts:
        try:
            model.validate(merged)
        except InvalidMemory as exc:
            conflicts.append(FieldConflict(
                "memory", f"the merged fields are invalid together: {exc}", None, None,
                "invalid"))
    if conflicts:
        text = conflict_text(merged, conflicts, {"ours": ours, "base": base, "theirs": theirs},
                             labels, marker_size)
        return MergeResult(text, merged, conflicts, notices)
    if merged == ours:
        text = ours_text
    elif merged == theirs:
        text = theirs_text
    else:
        text = frontmatter.rewrite(merged, ours_parsed)
    return MergeResult(text, merged, [], notices)


def merge_texts_or_text(base_text: str | None, ours_text: str, theirs_text: str,
                        labels: tuple[str, str, str] = LABELS, marker_size: int = 7
                        ) -> MergeResult:
    """`merge_texts` for git's merge driver, which must not fail a merge: an unexpected
    error in the field merge falls back to the text merge of the whole file (a conflict).
    Only git itself failing (no binary, merge-file refusing) still raises."""
    try:
        return merge_texts(base_text, ours_text, theirs_text, labels, marker_size)
    except Exception as exc:  # a bug in the field rules must not lose either side
        return _fallback(base_text or "", ours_text, theirs_text,
                         f"the field merge failed ({exc}); merged as plain text", labels,
                         marker_size)


def _fallback(base_text: str, ours_text: str, theirs_text: str, message: str,
              labels: tuple[str, str, str], marker_size: int) -> MergeResult:
    result = gitio.merge_file(ours_text, base_text, theirs_text, labels, marker_size)
    redaction = redact.redact(result.text)
    notices = [f"file: {redaction.notice()}"] if redaction.changed else []
    conflict = FieldConflict("file", message, None, None, "parse")
    text = store.mask_text(result.text, redaction)  # scanned once, above
    return MergeResult(text, None, [conflict], notices, fallback=True)
