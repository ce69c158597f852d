"""The gate for CI and hooks (`git memex verify`): rules over the repo's memory folder.

Every failure names its file and its rule. Files are read, never rewritten, except by
`--fix`, which repairs only what is safe: half-written supersede chains, completed
through `store.save` (so a hand-edited file keeps its comments and key order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.core import clock, frontmatter, lifecycle, model
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.storage import homes, journalfile, settings, store, usage, writelock
from memex.storage.homes import Workspace
from memex.workflows.scan import scan_texts

RULES: dict[str, str] = {
    "parse": "every memory file parses and validates",
    "file-name": "the file name is the memory's id",
    "chain": "supersede chains are consistent on both ends",
    "link": "related / supersedes / superseded_by / extends / contradicts point at memories "
            "that exist",
    "personal": "no personal memory inside the repo",
    "private": "no visibility: private memory inside the repo",
    "secret": "no unmasked secret or <private> block",
    "size": "a body is at most the team's memex.maxBytes (.memexconfig; default 64 KiB)",
    "duplicate": "an id is in one place only (not also an outbox draft)",
    "index": "the index, once refreshed, covers every readable memory file",
    "recall": "a memory was read after --since",
    "write": "a memory was written after --since",
}
LINK_FIELDS = ("related", "extends", "contradicts")
_CONFLICT_MARKER = re.compile(r"^<{7}(?: |$)", re.MULTILINE)


@dataclass(frozen=True)
class Failure:
    rule: str
    file: str
    message: str
    line: int | None = None

    def describe(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.rule}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "file": self.file, "line": self.line,
                "message": self.message}


@dataclass
class Report:
    checked: int = 0
    failures: list[Failure] = field(default_factory=list)
    fixed: list[str] = field(default_factory=list)
    folder: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures

    def by_rule(self) -> dict[str, list[Failure]]:
        out: dict[str, list[Failure]] = {}
        for failure in self.failures:
            out.setdefault(failure.rule, []).append(failure)
        return out

    def as_json(self, limit: int) -> dict[str, Any]:
        rules = {rule: {"count": len(items), "first": [f.as_json() for f in items[:limit]]}
                 for rule, items in self.by_rule().items()}
        return {"ok": self.ok, "folder": self.folder, "checked": self.checked,
                "failures": len(self.failures), "rules": rules, "fixed": self.fixed}


@dataclass
class _File:
    path: Path
    rel: str
    memory: model.Memory
    parsed: frontmatter.Parsed
    data: bytes  # the bytes parsed: the index refresh reuses the parse when it reads them


def _rel(path: Path, top: Path) -> str:
    try:
        return path.relative_to(top).as_posix()
    except ValueError:
        return str(path)


def _read_all(paths: list[Path], top: Path, report: Report) -> list[_File]:
    """Parse every file once; parse, file-name, scope, visibility and secret rules."""
    good: list[_File] = []
    texts: list[tuple[str, str]] = []
    for path in paths:
        report.checked += 1
        rel = _rel(path, top)
        try:
            data = store.read_bytes(path)
            text = store.decode(data)
        except (InvalidMemory, OSError) as exc:
            report.failures.append(Failure("parse", rel, str(exc) or type(exc).__name__))
            continue
        texts.append((rel, text))
        if _CONFLICT_MARKER.search(text):
            report.failures.append(Failure(
                "parse", rel, "unresolved merge conflict markers (git memex resolve explains "
                "what to decide)"))
            continue
        try:
            memory, parsed = frontmatter.load(text)
        except InvalidMemory as exc:
            report.failures.append(Failure("parse", rel, str(exc)))
            continue
        if path.stem != memory.id:
            report.failures.append(Failure(
                "file-name", rel, f"the file is named {path.stem} but holds id {memory.id}"))
        if memory.scope == "personal":
            report.failures.append(Failure(
                "personal", rel, "a personal memory is in the repo: personal memories never "
                "leave the machine; remove it from git (it may still be in your history)"))
        if memory.visibility == "private":
            report.failures.append(Failure(
                "private", rel, "a visibility: private memory is in the repo; remove it"))
        good.append(_File(path, rel, memory, parsed, data))
    for finding in scan_texts(texts):
        report.failures.append(Failure("secret", finding.path, finding.what, finding.line))
    return good


def _check_graph(files: list[_File], existing: set[str], report: Report
                 ) -> list[tuple[str, _File, str]]:
    """Chain and link rules; returns the safe repairs as (kind, file, other id)."""
    by_id = {f.memory.id: f for f in files}
    repairs: list[tuple[str, _File, str]] = []
    for f in files:
        m = f.memory
        for name in LINK_FIELDS:
            for target in getattr(m, name):
                if target == m.id:
                    report.failures.append(Failure("link", f.rel, f"{name} points at itself"))
                elif target not in existing:
                    report.failures.append(Failure(
                        "link", f.rel, f"{name} points at {target}, which is not in the repo"))
        for name in ("supersedes", "superseded_by"):
            target = getattr(m, name)
            if target and target not in existing:
                report.failures.append(Failure(
                    "link", f.rel, f"{name} points at {target}, which is not in the repo"))
        if m.status == "superseded" and not m.superseded_by:
            report.failures.append(Failure("chain", f.rel, "status is superseded but "
                                           "superseded_by is missing"))
        if m.superseded_by and m.status != "superseded":
            report.failures.append(Failure(
                "chain", f.rel, f"superseded_by {m.superseded_by} but status is {m.status}"))
        successor = by_id.get(m.superseded_by or "")
        if successor is not None and successor.memory.supersedes != m.id \
                and not lifecycle.kept_over(m, successor.memory):
            s = successor.memory
            if s.supersedes is None:
                report.failures.append(Failure(
                    "chain", f.rel, f"half-written chain: superseded by {s.id}, which does "
                    "not say it supersedes this one (--fix completes it)"))
                repairs.append(("successor", successor, m.id))
            else:
                report.failures.append(Failure(
                    "chain", f.rel, f"superseded by {s.id}, which says it supersedes "
                    f"{s.supersedes}"))
        old = by_id.get(m.supersedes or "")
        if old is not None and (old.memory.superseded_by != m.id
                                or old.memory.status != "superseded"):
            o = old.memory
            if o.superseded_by is None and o.is_live and m.is_live:
                report.failures.append(Failure(
                    "chain", f.rel, f"half-written chain: supersedes {o.id}, which is still "
                    f"{o.status} and does not say so (--fix completes it)"))
                repairs.append(("old", old, m.id))
            elif o.superseded_by not in (None, m.id):
                report.failures.append(Failure(
                    "chain", f.rel, f"supersedes {o.id}, which says it is superseded by "
                    f"{o.superseded_by}: two successors, a human decides"))
    return repairs


def _check_index(ws: Workspace, files: list[_File], report: Report) -> None:
    """Refresh the index (incremental: a stat per file when nothing changed) and check
    it holds every file the store would read: one that a search could never find is a
    bug or a damaged cache. Skipped while another process holds the index's lock.
    The files verify parsed are handed to the refresh, which parses only the others
    (on a fresh clone: every file was parsed twice before)."""
    from memex.index import build

    submitting = _submitting(ws)
    created = {p for p, (previous, _) in submitting.files.items()
               if previous is None} if submitting is not None else set()
    wanted = [f for f in files if f.memory.scope == "project" and f.path.stem == f.memory.id
              and str(f.path) not in created]
    if not wanted:
        return
    known = {str(f.path): build.Known(f.data, f.memory, f.parsed) for f in files}
    with build.open_index(ws, known=known) as index:
        if index.report.stale:
            return
        covered = build.memory_paths(index.conn, "repo")
    for f in wanted:
        if str(f.path) not in covered:
            report.failures.append(Failure(
                "index", f.rel, "not in the search index after a refresh (git memex reindex "
                "--full rebuilds it)"))


def _usage_rules(ws: Workspace, since: str, require_recall: bool, require_write: bool,
                 report: Report) -> None:
    try:
        moment = clock.format_time(clock.parse_time(since))
    except ValueError as exc:
        raise UsageError(f"--since: {exc}") from None
    read = wrote = False
    for entry in usage.entries(ws.home):
        if entry.get("repo_id") != ws.repo_id:
            continue
        try:
            at = clock.format_time(clock.parse_time(str(entry.get("at", ""))))
        except ValueError:
            continue
        if at < moment:
            continue
        op = str(entry.get("op", ""))
        read = read or op in usage.READS
        wrote = wrote or op in usage.WRITES
    log = str(usage.log_path(ws.home))
    if require_recall and not read:
        report.failures.append(Failure("recall", log, f"no memory of this repo was read "
                                       f"since {moment}"))
    if require_write and not wrote:
        report.failures.append(Failure("write", log, f"no memory of this repo was written "
                                       f"since {moment}"))


@writelock.holds_write_lock
def _apply_repairs(ws: Workspace, repairs: list[tuple[str, _File, str]], report: Report
                   ) -> None:
    home = store.Home("repo", ws.memory_dir or Path("."))
    at = clock.now_str()
    done: set[str] = set()
    for kind, target, other in repairs:
        if target.memory.id in done:
            continue
        m = target.memory
        if kind == "old":
            fixed = m.copy(status="superseded", superseded_by=other, retired_at=at,
                           updated_at=at, revision=m.revision + 1)
            fixed.status_history.append(lifecycle.history_entry(
                at, ws.identity(), m.status, "superseded", f"superseded by {other} "
                "(chain completed by verify --fix)"))
        else:
            fixed = m.copy(supersedes=other, updated_at=at, revision=m.revision + 1)
        store.save(store.Loaded(fixed, target.path, home, target.parsed))
        done.add(m.id)
        report.fixed.append(f"{target.rel}: completed the supersede chain with {other}")
    if done:
        usage.record_in(ws, usage.Op.WRITE, sorted(done))


def verify(ws: Workspace, since: str | None = None, require_recall: bool = False,
           require_write: bool = False, fix: bool = False) -> Report:
    if ws.repo is None or ws.memory_dir is None:
        raise MemexError("not inside a git repository: verify checks a repo's memory folder")
    if (require_recall or require_write) and since is None:
        raise UsageError("--require-recall and --require-write need --since TIME")
    top = ws.repo.toplevel
    report = Report(folder=ws.memory_dir_name)
    memory_dir = store.inside_repo(ws.memory_dir, top)
    paths = list(store.memory_files(memory_dir))
    files = _read_all(paths, top, report)
    for special in store.special_files(memory_dir):
        report.checked += 1
        report.failures.append(Failure("parse", _rel(special.path, top), special.reason))
    _check_limits(ws, files, report)
    existing = {p.stem for p in paths}
    repairs = _check_graph(files, existing, report)
    if fix and repairs:
        _apply_repairs(ws, repairs, report)
        return _rerun(ws, since, require_recall, require_write, report.fixed)
    _check_index(ws, files, report)
    if since is not None:
        _usage_rules(ws, since, require_recall, require_write, report)
    return report


def team_max_bytes(ws: Workspace) -> int:
    """The body limit the gate enforces: the team's value (.memexconfig), never a
    person's git config, so a local verify and CI agree."""
    spec = settings.BY_KEY["memex.maxbytes"]
    value = ws.team_config.get(spec.key)
    if value is None:
        return int(settings.default(spec.name))
    parsed = spec.parse(value)
    if parsed is None:
        where = str(ws.repo.toplevel / homes.MEMEXCONFIG) if ws.repo else homes.MEMEXCONFIG
        raise homes.SettingError(settings.bad_value_message(spec.name, value, spec.expected,
                                                            where))
    return int(parsed)


def _submitting(ws: Workspace) -> journalfile.Record | None:
    """The journal of a submit in flight (verify run by its commit's pre-commit hook) or
    killed and not yet settled: its drafts go once it is done, and reads (the index
    among them) leave out the files it created until then."""
    return journalfile.load(ws.repo.git_dir) if ws.repo is not None else None


def _check_limits(ws: Workspace, files: list[_File], report: Report) -> None:
    """The size rule, and ids that are also outbox drafts (the repo copy is read)."""
    limit = team_max_bytes(ws)
    for f in files:
        size = len(f.memory.body.encode("utf-8"))
        if size > limit:
            report.failures.append(Failure(
                "size", f.rel, f"the body is {size} bytes, over the team's limit of {limit} "
                "(memex.maxBytes in .memexconfig)"))
    in_outbox = store.memory_ids(ws.outbox_dir)
    submitting = _submitting(ws)
    for f in files:
        if f.memory.id in in_outbox:
            draft = store.new_path(store.Home("outbox", ws.outbox_dir), f.memory.id)
            if submitting is not None and str(draft) in submitting.drafts:
                continue  # a submit in flight (verify as its pre-commit hook) deletes it
            report.failures.append(Failure(
                "duplicate", f.rel, f"{f.memory.id} is also an outbox draft ({draft}); reads "
                f"show this repo copy. If it was submitted, delete the draft (rm '{draft}'); "
                "if the draft is newer, supersede the repo copy with its text, then delete it"))


def _rerun(ws: Workspace, since: str | None, require_recall: bool, require_write: bool,
           fixed: list[str]) -> Report:
    report = verify(ws, since, require_recall, require_write, fix=False)
    report.fixed = fixed
    return report
