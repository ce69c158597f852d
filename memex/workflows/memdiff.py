"""Memory-level diffs: what a range of commits (or the working tree) did to memories.

Two sides are compared file by file, but only the memory files git says changed
(`git diff --name-only`), read in one `git cat-file --batch` per side: a PR of 20
memories over a folder of 10,000 reads 40 blobs. Each change says what a reviewer asks:
added, retired (with the successor of its chain), fields old -> new, review and
instruction moves (with who made them, from the appended review_history), and the body
as a unified text diff. Read-only: nothing here writes.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.core import frontmatter, model
from memex.core.errors import InvalidMemory, UsageError
from memex.storage import gitio, store

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
WORKTREE = ":worktree"
STAGED = ":staged"
# fields a diff reports as events, not as "old -> new" values
_EVENT_FIELDS = frozenset({"review_history", "status_history"})
_NOISE = frozenset({"revision", "updated_at"})


@dataclass(frozen=True)
class Range:
    """old and new side: a commit id, EMPTY_TREE, WORKTREE or STAGED."""

    old: str
    new: str
    label: str

    @property
    def new_is_commit(self) -> bool:
        return self.new not in (WORKTREE, STAGED)


@dataclass
class FieldChange:
    name: str
    old: Any
    new: Any

    def as_json(self) -> dict[str, object]:
        return {"field": self.name, "old": self.old, "new": self.new}


@dataclass
class Change:
    """One memory file that differs between the sides."""

    path: str
    kind: str  # added | removed | modified
    old: model.Memory | None = None
    new: model.Memory | None = None
    old_text: str | None = None
    new_text: str | None = None
    fields: list[FieldChange] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    history: list[dict[str, str]] = field(default_factory=list)  # entries this change added
    body_diff: list[str] = field(default_factory=list)
    unreadable: str | None = None

    @property
    def id(self) -> str:
        memory = self.new or self.old
        return memory.id if memory is not None else Path(self.path).stem

    @property
    def memory(self) -> model.Memory | None:
        return self.new or self.old

    @property
    def title(self) -> str:
        """One display line: control characters escaped (a title arrives by git)."""
        memory = self.memory
        if memory is None:
            return ""
        return model.escape_controls(memory.title) if memory.title else memory.summary

    @property
    def category(self) -> str:
        """new | changed | superseded | retired | deleted | unreadable."""
        if self.unreadable:
            return "unreadable"
        if self.kind == "added":
            return "new"
        if self.kind == "removed":
            return "deleted"
        old, new = self.old, self.new
        if old is not None and new is not None and old.status != new.status:
            if new.status == "superseded":
                return "superseded"
            if new.status not in model.LIVE_STATUSES:
                return "retired"
        return "changed"

    def as_json(self) -> dict[str, object]:
        memory = self.memory
        return {"id": self.id, "path": self.path, "kind": self.kind,
                "category": self.category, "title": self.title,
                "review_state": memory.review_state if memory else None,
                "status": memory.status if memory else None,
                "fields": [f.as_json() for f in self.fields], "events": self.events,
                "history": self.history, "body_diff": self.body_diff,
                "unreadable": self.unreadable}


@dataclass
class MemoryDiff:
    range: Range
    folder: str
    changes: list[Change] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"range": self.range.label, "old": self.range.old, "new": self.range.new,
                "folder": self.folder, "changes": [c.as_json() for c in self.changes]}


# ---------------------------------------------------------------- ranges


def commit_of(top: Path, rev: str) -> str:
    found = gitio.rev_parse(top, f"{rev}^{{commit}}")
    if found is None:
        from memex.core import redact  # only for a refusal

        raise UsageError(f"not a commit here: {redact.quoted(rev)}")
    return found


def head_or_empty(top: Path) -> str:
    return gitio.rev_parse(top, "HEAD^{commit}") or EMPTY_TREE


def parse_range(top: Path, spec: str | None, staged: bool = False) -> Range:
    """`A..B`, `A...B` (from their merge base, as `git diff A...B`), `A` (against the
    working tree), or nothing: the working tree (with `staged`, the index) against HEAD."""
    if staged:
        if spec:
            return Range(commit_of(top, spec), STAGED, f"{spec} (staged)")
        return Range(head_or_empty(top), STAGED, "HEAD (staged)")
    if not spec:
        return Range(head_or_empty(top), WORKTREE, "HEAD (working tree)")
    if "..." in spec:
        left, right = spec.split("...", 1)
        new = commit_of(top, right or "HEAD")
        old = commit_of(top, left or "HEAD")
        base = gitio.run(["merge-base", old, new], cwd=top, check=False).stdout.strip()
        if not base:
            raise UsageError(f"{spec}: the two sides have no common ancestor")
        return Range(base, new, spec)
    if ".." in spec:
        left, right = spec.split("..", 1)
        return Range(commit_of(top, left or "HEAD"), commit_of(top, right or "HEAD"), spec)
    return Range(commit_of(top, spec), WORKTREE, f"{spec} (working tree)")


def changed_paths(top: Path, rng: Range, folder: str) -> list[str]:
    """Memory files of `folder` that differ between the sides (repo-relative)."""
    args = ["diff", "--name-only", "--no-renames", "-z", "--no-ext-diff", "--no-textconv"]
    if rng.new == STAGED:
        args += ["--cached", rng.old]
    elif rng.new == WORKTREE:
        args += [rng.old]
    else:
        args += [rng.old, rng.new]
    proc = gitio.run([*args, "--", folder], cwd=top)
    paths = {p for p in proc.stdout.split("\0") if p}
    if rng.new == WORKTREE:  # new files not yet added are part of the working tree
        others = gitio.run(["ls-files", "--others", "--exclude-standard", "-z", "--", folder],
                           cwd=top)
        paths.update(p for p in others.stdout.split("\0") if p)
    return sorted(p for p in paths if store.in_memory_folder(folder, p))


def read_side(top: Path, side: str, paths: list[str]) -> dict[str, str | None]:
    """Each path's text on one side (None: not there)."""
    if side == EMPTY_TREE:
        return dict.fromkeys(paths)
    if side == WORKTREE:
        out: dict[str, str | None] = {}
        for rel in paths:
            try:
                out[rel] = store.decode(store.read_bytes(top / rel))  # a link never followed
            except (OSError, InvalidMemory):
                out[rel] = None
        return out
    prefix = ":" if side == STAGED else f"{side}:"
    blobs = gitio.read_blobs(top, [f"{prefix}{p}" for p in paths])
    return {p: blobs.get(f"{prefix}{p}") for p in paths}


# ---------------------------------------------------------------- comparing


def _parse(text: str | None) -> tuple[model.Memory | None, str | None]:
    if text is None:
        return None, None
    try:
        return frontmatter.load(text)[0], None
    except InvalidMemory as exc:
        return None, str(exc)


def compare(path: str, old_text: str | None, new_text: str | None) -> Change | None:
    """The change between two versions of one file (None when they are the same)."""
    if old_text == new_text:
        return None
    kind = "added" if old_text is None else "removed" if new_text is None else "modified"
    old, old_bad = _parse(old_text)
    new, new_bad = _parse(new_text)
    change = Change(path, kind, old, new, old_text, new_text)
    if new_text is not None and new_bad:
        change.unreadable = new_bad
    elif new_text is None and old_bad:
        change.unreadable = old_bad
    if old is not None and new is not None:
        _fields(change, old, new)
    elif new is not None:
        change.history = list(new.review_history)
    old_body = old.body if old is not None else (old_text or "") if old_bad else ""
    new_body = new.body if new is not None else (new_text or "") if new_bad else ""
    if old_body != new_body:
        change.body_diff = list(difflib.unified_diff(
            model.text_lines(old_body), model.text_lines(new_body), "old", "new", lineterm="",
            n=2))[2:]
    _events(change)
    return change


def _fields(change: Change, old: model.Memory, new: model.Memory) -> None:
    before, after = old.front_matter(), new.front_matter()
    for name in list(dict.fromkeys([*before, *after])):
        if name in _EVENT_FIELDS:
            continue
        if before.get(name) != after.get(name):
            change.fields.append(FieldChange(name, before.get(name), after.get(name)))
    # history is append-only: what this change added is the tail past the old entries
    kept = len(old.review_history)
    if new.review_history[:kept] == old.review_history:
        change.history = list(new.review_history[kept:])
    else:
        change.history = [h for h in new.review_history if h not in old.review_history]
        change.events.append("review_history rewritten (entries removed or edited)")


def _who(change: Change, review_to: str | None = None, instruction_to: str | None = None
         ) -> str:
    """" by X" from the history entry this change added for the move, else ""."""
    for entry in reversed(change.history):
        note = entry.get("note", "")
        if instruction_to is not None:
            hit = note.startswith("instruction ") and f"-> {instruction_to}" in note
        else:
            hit = entry.get("to") == review_to and not note.startswith("instruction ")
        if hit:
            return f" by {entry.get('by', '?')}"
    return ""


def _events(change: Change) -> None:
    old, new = change.old, change.new
    if new is not None and old is None:
        change.events.append(f"added as {new.review_state or new.scope}"
                             + (f", supersedes {new.supersedes}" if new.supersedes else ""))
    if new is None and old is not None:
        change.events.append("file deleted")
    if old is None or new is None:
        return
    if old.review_state != new.review_state:
        to = new.review_state or "none"
        change.events.append(f"review {old.review_state or 'none'} -> {to}"
                             + _who(change, review_to=to))
    if old.instruction_state != new.instruction_state:
        state = new.instruction_state or "none"
        change.events.append(f"instruction {old.instruction_state or 'none'} -> {state}"
                             + _who(change, instruction_to=state))
    if old.status != new.status:
        what = f"status {old.status} -> {new.status}"
        if new.status == "superseded" and new.superseded_by:
            what += f" (superseded by {new.superseded_by})"
        change.events.append(what)
    if new.supersedes and new.supersedes != old.supersedes:
        change.events.append(f"now supersedes {new.supersedes}")


def diff(top: Path, folder: str, rng: Range) -> MemoryDiff:
    """The memory-level diff of `folder` over `rng`."""
    paths = changed_paths(top, rng, folder)
    old_texts = read_side(top, rng.old, paths)
    new_texts = read_side(top, rng.new, paths)
    out = MemoryDiff(rng, folder)
    for rel in paths:
        change = compare(rel, old_texts.get(rel), new_texts.get(rel))
        if change is not None:
            out.changes.append(change)
    _link_chains(out.changes)
    return out


def _link_chains(changes: Iterable[Change]) -> None:
    """A retired memory names the successor this same diff adds (the chain)."""
    by_id = {c.id: c for c in changes}
    for change in by_id.values():
        new = change.new
        if new is not None and new.superseded_by and change.category == "superseded":
            successor = by_id.get(new.superseded_by)
            if successor is not None and successor.title:
                change.events.append(f"successor {new.superseded_by[:10]}: {successor.title}")


# ---------------------------------------------------------------- textconv


def readable(text: str) -> str:
    """A memory file as people read it (git's textconv): one field per line, history
    one entry per line, then the body. An unparseable file comes back as it is."""
    try:
        memory = frontmatter.load(text)[0]
    except InvalidMemory:
        return text
    lines = [f"memory {memory.id}", f"title: {model.escape_controls(memory.title)}"]
    for name, value in memory.front_matter().items():
        if name in ("id", "title") or name in _EVENT_FIELDS:
            continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        lines.append(model.escape_controls(f"{name}: {value}"))
    for name in ("review_history", "status_history"):
        for entry in getattr(memory, name):
            note = f" ({entry['note']})" if entry.get("note") else ""
            lines.append(model.escape_controls(
                f"{name.split('_')[0]}: {entry.get('at', '?')} {entry.get('by', '?')}"
                f" {entry.get('from', '?')} -> {entry.get('to', '?')}{note}"))
    lines.append("")
    return "\n".join(lines) + "\n" + model.escape_text(memory.body.rstrip("\n")) + "\n"
