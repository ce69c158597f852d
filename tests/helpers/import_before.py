"""Import as main's code did it before the import work of stop 26 (a785f48), kept
as the reference the new import is compared with byte for byte (tests/test_import_same.py):
every file written, every message, in the same order. Copied verbatim but for the names
(`portable.` for the module's helpers, `_mask_text` for the store's masking of a whole
text as it was). Not used by git-memex itself."""

# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memex.core import clock, frontmatter, model, redact
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.storage import store, usage
from memex.storage.homes import Workspace
from memex.workflows import writes
from memex.workflows.portable import (
    Entry, ImportReport, _archive_entries, _as_imported_before, _check_sha256,
    _folder_entries, _foreign_memory, _home_path, _in_this_repo, _own_export, _safe_name,
    _shared_landing, export_key, untrusted_draft)


def _mask_text(text: str) -> str:
    return redact.redact(text).text if redact.find_secrets(text) else text


def _clean_text(memory: model.Memory, parsed: frontmatter.Parsed | None,
                kept: str | None) -> str | None:
    """The text an entry is stored as (KEPT, an own export's text kept byte for byte,
    else the memory written out) when it is valid and the secret detector finds nothing
    in it: one detector pass over what is stored, title, body, aliases and every other
    field and comment in it. None: the caller masks fields then text, as a write does."""
    try:
        model.validate(memory)
    except InvalidMemory:
        return None
    text = kept if kept is not None else frontmatter.rewrite(memory, parsed)
    return None if redact.find_secrets(text) else text


def _find_existing(run: _Run, memory_id: str) -> Path | None:
    name = f"{memory_id}.md"
    for folder in run.folders:
        if run.listed_in(folder, name) and (folder / name).is_file():
            return folder / name
    return None


# Files an import writes at once (one flush to disk for each batch of them).
IMPORT_BATCH = 2000


@dataclass
class _Run:
    """What one import looks up once, and the files it has still to write."""

    folders: list[Path]
    key: bytes | None
    # (where in the input, id, path, text)
    pending: list[tuple[str, str, Path, str]] = field(default_factory=list)
    listed: dict[Path, frozenset[str]] = field(default_factory=dict)

    def listed_in(self, folder: Path, name: str) -> bool:
        """Whether FOLDER held NAME when first asked (one listing per folder: the
        import holds the write lock, and the names it adds itself are each refused a
        second time by `seen`); the caller stats only a name found."""
        names = self.listed.get(folder)
        if names is None:
            try:
                names = frozenset(os.listdir(folder))
            except OSError:
                names = frozenset()
            self.listed[folder] = names
        return name in names

    def flush(self, report: ImportReport) -> None:
        """Write the pending files; one that cannot be written is refused, not imported."""
        if not self.pending:
            return
        failed = dict(store.write_new_files([(path, text)
                                             for _, _, path, text in self.pending]))
        for where, memory_id, path, _ in self.pending:
            problem = failed.get(path)
            if problem is None:
                report.imported.append((memory_id, str(path)))
            else:
                report.rejected.append((where, str(problem)))
        self.pending.clear()


def import_path(ws: Workspace, source: Path, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import an archive file or an open-memex folder into this workspace; PROGRESS (done,
    total) after each entry."""
    report = ImportReport(dry_run=dry_run)
    limit = writes.max_bytes(ws)
    if source.is_dir():
        entries: Iterable[Entry] = _folder_entries(source, report)
        origin = f"folder {source.name}"
    elif source.is_file():
        entries = _archive_entries(source, limit, report)
        origin = f"archive {source.name}"
    else:
        raise UsageError(f"no such file or folder: {source}")
    seen: set[str] = set()
    todo = list(entries)
    run = _Run([home.path for home in store.homes(ws)], export_key(ws))
    for done, entry in enumerate(todo, start=1):
        try:
            _import_one(ws, entry, limit, report, seen, dry_run, origin, run)
        except MemexError as exc:
            report.rejected.append((entry.where, str(exc)))
        if len(run.pending) >= IMPORT_BATCH or done == len(todo):
            run.flush(report)
        if progress is not None:
            progress(done, len(todo))
    if report.imported and not dry_run:
        usage.record_in(ws, usage.Op.IMPORT, [i for i, _ in report.imported])
    return report


def _import_one(ws: Workspace, entry: Entry, limit: int, report: ImportReport,
                seen: set[str], dry_run: bool, origin: str, run: _Run) -> None:
    notes: list[str] = []
    parsed: frontmatter.Parsed | None = None
    restored = False
    if entry.foreign:
        memory = _foreign_memory(ws, entry, notes)
    else:
        name = _safe_name(entry.name or "")
        if name is None:
            raise MemexError(f"refused file name {entry.name!r}: only <ULID>.md, no folders")
        if entry.home not in store.HOME_KINDS:
            raise MemexError(f"unknown home {entry.home!r}")
        kind = entry.home
        assert entry.text is not None
        _check_sha256(entry)
        if "\0" in entry.text:
            raise MemexError("entry holds NUL bytes")
        parsed = frontmatter.parse(entry.text)
        if model.legacy_version(parsed.data) is not None:
            raise MemexError(store.LEGACY_REASON + " (before exporting)")
        memory = model.from_front_matter(parsed.data, parsed.body)
        if name != f"{memory.id}.md":
            raise MemexError(f"file name {name} does not match its id {memory.id}")
        if memory.scope != store.SCOPE_OF_HOME[kind]:
            raise MemexError(f"scope {memory.scope!r} does not belong in the {kind} folder")
        restored = _own_export(ws, entry, memory, run.key)
        if restored:
            kind = _shared_landing(kind, memory, notes)
    if not restored:
        if problem := model.title_problem(memory.title):
            raise MemexError(f"{memory.id}: {problem}; not imported")
        kind = _in_this_repo(ws, memory)
        note = untrusted_draft(memory, clock.now_str(), ws.identity(), origin)
        if "; " in note:
            notes.append(f"kept as an untrusted draft ({note})")
    size = model.content_bytes(memory.body, memory.aliases)
    if size > limit:
        raise MemexError(f"{memory.id}: body of {size} bytes is over the {limit}-byte limit "
                         "(memex.maxBytes, aliases included); not imported")
    if memory.id in seen:
        raise MemexError(f"{memory.id} appears twice in the input")
    seen.add(memory.id)
    text = _clean_text(memory, parsed, None if not restored else entry.text)
    if text is None:  # a secret somewhere: the fields masked, then the whole text
        (title, body, *aliases), joined = redact.redact_parts(
            [memory.title, memory.body, *memory.aliases])
        if joined.changed:
            memory.title, memory.body, memory.aliases = title, body, aliases
            report.notices.append(f"{memory.id}: {joined.notice()}")
        model.validate(memory)
        if not restored or joined.changed or entry.text is None:
            text = frontmatter.rewrite(memory, parsed)
        else:
            text = entry.text
        text = _mask_text(text)  # what the write stores: compare that with the disk
    target = _home_path(ws, kind) / f"{memory.id}.md"
    existing = _find_existing(run, memory.id)
    if existing is None and run.listed_in(target.parent, target.name) and target.is_file():
        existing = target
    if existing is not None:
        try:
            current = existing.read_bytes()
        except OSError as exc:
            raise MemexError(f"cannot read {existing}: {exc.strerror or exc}") from None
        if not restored and current != text.encode("utf-8"):
            text = _mask_text(_as_imported_before(current, memory, parsed) or text)
        if current == text.encode("utf-8"):
            report.unchanged.append(memory.id)
        else:
            report.conflicts.append((memory.id, f"{existing} exists with other content; "
                                                "left as it is (compare, then supersede "
                                                "or delete one by hand)"))
        return
    report.notices.extend(f"{memory.id}: {n}" for n in notes)
    if dry_run:
        report.imported.append((memory.id, str(target)))
    else:
        run.pending.append((entry.where, memory.id, target, text))  # masked above
