"""The gate for CI and hooks (`git memex verify`): rules over the repo's memory folder.

Every failure names its file and its rule. Files are read, never rewritten, except by
`--fix`, which repairs only what is safe: half-written supersede chains, completed
through `store.save` (so a hand-edited file keeps its comments and key order).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, cast

from memex.core import clock, fingerprint, frontmatter, lifecycle, model, redact
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.storage import homes, journalfile, settings, store, usage, writelock
from memex.storage.homes import Workspace
from memex.storage.sources import of_sources
from memex.workflows.scan import SecretFinding

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
    """One rule a memory file breaks, and where."""

    rule: str
    file: str
    message: str
    line: int | None = None
    blob: str | None = None  # set when the name is shown masked: names the file

    def describe(self) -> str:
        file = redact.shown(self.file)  # a secret in a file name is not echoed either
        if self.blob:  # a masked name may be shared by several files
            file += f" (blob {self.blob[:12]}; git hash-object names it)"
        where = f"{file}:{self.line}" if self.line else file
        return f"{where}: {self.rule}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        data = {"rule": self.rule, "file": redact.shown(self.file), "line": self.line,
                "message": self.message}
        if self.blob:
            data["blob"] = self.blob
        return data


@dataclass
class Report:
    """What verify checked, what failed and what it fixed."""

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


class _Facts(NamedTuple):
    """The fields of a memory the rules read (a cached verdict holds only these)."""

    id: str
    scope: str
    visibility: str
    status: str
    supersedes: str | None
    superseded_by: str | None
    related: tuple[str, ...]
    extends: tuple[str, ...]
    contradicts: tuple[str, ...]

    @property
    def is_live(self) -> bool:
        return self.status in model.LIVE_STATUSES

    @property
    def chained(self) -> bool:
        """Whether the chain and link rules have anything to check on this one's side."""
        return bool(self.supersedes or self.superseded_by or self.related or self.extends
                    or self.contradicts or self.status == "superseded")

    def as_memory(self) -> model.Memory:
        return model.Memory(id=self.id, scope=cast(model.Scope, self.scope),
                            status=cast(model.Status, self.status),
                            supersedes=self.supersedes, superseded_by=self.superseded_by,
                            related=list(self.related))


class _Judged(NamedTuple):
    """A file's verdict: a parse problem, the secret findings (line, kind), the facts
    (None when it did not parse) and the body's size."""

    error: str | None
    secrets: list[tuple[int, str]]
    facts: _Facts | None
    body_bytes: int


@dataclass
class _File:
    """A memory file as verify checks it."""

    path: str
    rel: str
    memory: _Facts
    body_bytes: int


def _rel(path: Path, top: Path) -> str:
    try:
        return path.relative_to(top).as_posix()
    except ValueError:
        return str(path)


# What a file's verdict depends on besides its bytes: the code of the rules, the
# secret detector, the parser and the model. Any change to them, to git-memex's version
# or to Python's makes every cached verdict a miss (verdicts.sqlite, below).
_RULE_MODULES = ("memex.core.redact", "memex.core.secret_rules", "memex.core.bare_secrets",
                 "memex.core.frontmatter", "memex.core.model", "memex.core.clock",
                 "memex.core.ulid", "memex.storage.store", __name__)
VERDICTS_NAME = "verdicts.sqlite"


def rules_version() -> str | None:
    """A digest of everything a verdict depends on but the file itself; None when a
    source cannot be read (then nothing is cached)."""
    import importlib.metadata

    from memex import __version__

    try:
        yaml_version = importlib.metadata.version("ruamel.yaml")
    except importlib.metadata.PackageNotFoundError:
        yaml_version = "-"
    # every module named is imported above
    return of_sources(_RULE_MODULES, f"{__version__} {sys.version} {yaml_version}")


def _verdict(data: bytes) -> tuple[_Judged, tuple[model.Memory, frontmatter.Parsed] | None]:
    """Everything the per-file rules need from a file's bytes, with the parse itself
    when the file parsed."""
    try:
        text = store.decode(data)
    except InvalidMemory as exc:
        return _Judged(str(exc) or type(exc).__name__, [], None, 0), None
    secrets = [(f.line, f.kind) for f in redact.find_secrets(text)]
    if _CONFLICT_MARKER.search(text):
        return _Judged("unresolved merge conflict markers (git memex resolve explains what "
                       "to decide)", secrets, None, 0), None
    try:
        memory, parsed = frontmatter.load(text)
    except InvalidMemory as exc:
        return _Judged(str(exc), secrets, None, 0), None
    facts = _Facts(memory.id, memory.scope, memory.visibility, memory.status,
                   memory.supersedes, memory.superseded_by, tuple(memory.related),
                   tuple(memory.extends), tuple(memory.contradicts))
    return _Judged(None, secrets, facts, len(memory.body.encode("utf-8"))), (memory, parsed)


_NO_LINKS: tuple[str, ...] = ()


class _Verdicts:
    """Cached verdicts keyed by (content hash, rules version), in a cache file beside
    the index: an entry is only ever found for the exact bytes and rules it was made
    from, so a stale one cannot be read. Unusable cache: every file is checked. A plain
    verdict (parsed, no secret, no chain or link) is a row of columns; only the others
    carry a JSON `detail`."""

    _COLUMNS = "hash, version, id, scope, visibility, status, body_bytes, detail"

    def __init__(self, ws: Workspace) -> None:
        import sqlite3

        self.version = rules_version()
        self.conn: sqlite3.Connection | None = None
        self.new: list[tuple[object, ...]] = []
        if self.version is None:
            return
        try:
            ws.index_dir.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(str(ws.index_dir / VERDICTS_NAME), timeout=0.5,
                                   isolation_level=None)
            conn.execute("DROP TABLE IF EXISTS verdicts")  # one JSON column (before 0.19)
            conn.execute("CREATE TABLE IF NOT EXISTS file_verdicts (hash TEXT NOT NULL, "
                         "version TEXT NOT NULL, id TEXT, scope TEXT, visibility TEXT, "
                         "status TEXT, body_bytes INTEGER NOT NULL, detail TEXT, "
                         "PRIMARY KEY (hash, version)) WITHOUT ROWID")
            self.conn = conn
        except (sqlite3.Error, OSError):
            self.conn = None

    def known(self, hashes: list[str]) -> dict[str, _Judged]:
        import sqlite3

        if self.conn is None or not hashes:
            return {}
        out: dict[str, _Judged] = {}
        try:
            for i in range(0, len(hashes), 500):
                chunk = hashes[i:i + 500]
                for digest, mid, scope, visibility, status, size, detail in self.conn.execute(
                        "SELECT hash, id, scope, visibility, status, body_bytes, detail "
                        "FROM file_verdicts WHERE version = ? AND hash IN "
                        f"({', '.join('?' * len(chunk))})", (self.version, *chunk)):
                    if detail is None:
                        out[digest] = _Judged(None, [], _Facts(
                            mid, scope, visibility, status, None, None, _NO_LINKS,
                            _NO_LINKS, _NO_LINKS), size)
                        continue
                    more = json.loads(detail)
                    facts = None if mid is None else _Facts(
                        mid, scope, visibility, status, more["supersedes"],
                        more["superseded_by"], *(tuple(more[n]) for n in LINK_FIELDS))
                    out[digest] = _Judged(more["error"], [tuple(x) for x in more["secrets"]],
                                          facts, size)
        except (sqlite3.Error, ValueError, KeyError, TypeError):
            return {}
        return out

    def add(self, digest: str, verdict: _Judged) -> None:
        if self.conn is None or self.version is None:
            return
        facts = verdict.facts
        detail = None
        if verdict.error is not None or verdict.secrets or facts is None or facts.chained:
            detail = json.dumps({
                "error": verdict.error, "secrets": verdict.secrets,
                "supersedes": facts and facts.supersedes,
                "superseded_by": facts and facts.superseded_by,
                **{n: list(getattr(facts, n)) if facts else [] for n in LINK_FIELDS}})
        self.new.append((digest, self.version, facts and facts.id, facts and facts.scope,
                         facts and facts.visibility, facts and facts.status,
                         verdict.body_bytes, detail))

    def close(self) -> None:
        """Store the new verdicts (dropping those of other rules versions) and close."""
        import sqlite3

        if self.conn is None:
            return
        try:
            if self.new:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.execute("DELETE FROM file_verdicts WHERE version != ?",
                                  (self.version,))
                self.conn.executemany(
                    f"INSERT OR REPLACE INTO file_verdicts ({self._COLUMNS}) "
                    f"VALUES ({', '.join('?' * 8)})", self.new)
                self.conn.execute("COMMIT")
        except sqlite3.Error:
            pass  # a cache: the next run checks these files again
        finally:
            self.conn.close()


def _from_verdict(path: str, rel: str, stem: str, verdict: _Judged, report: Report,
                  secrets: list[Failure]) -> _File | None:
    """The per-file rules of one verdict; the file when it parsed."""
    for line, kind in verdict.secrets:
        secrets.append(Failure("secret", rel, SecretFinding(rel, line, kind).what, line))
    memory = verdict.facts
    if verdict.error is not None or memory is None:
        report.failures.append(Failure("parse", rel, verdict.error or "unreadable"))
        return None
    if stem != memory.id:
        report.failures.append(Failure(
            "file-name", rel, f"the file is named {stem} but holds id {memory.id}"))
    if memory.scope == "personal":
        report.failures.append(Failure(
            "personal", rel, "a personal memory is in the repo: personal memories never "
            "leave the machine; remove it from git (it may still be in your history)"))
    if memory.visibility == "private":
        report.failures.append(Failure(
            "private", rel, "a visibility: private memory is in the repo; remove it"))
    return _File(path, rel, memory, verdict.body_bytes)


def _read_all(ws: Workspace, folder: Path, stems: list[str], top: Path, report: Report
              ) -> tuple[list[_File], set[str] | None]:
    """Every file through the per-file rules (parse, file-name, scope, visibility,
    secret), from the cached verdict of its exact bytes when there is one: the index
    refresh (a stat per file) names each file's content hash, and only files whose
    hash has no verdict yet are read, parsed and scanned. A cold index (a fresh clone)
    is built after, from the parses made here, so no file is parsed twice. Returns the
    files that parsed and the repo paths the refreshed index holds (None: another
    process held the index)."""
    from memex.index import build

    verdicts = _Verdicts(ws)
    try:
        with build.open_index(ws, refresh=False) as index:
            cold = build.memory_count(index.conn) == 0
        hashes: dict[str, str] = {}
        covered: set[str] | None = None
        if not cold:
            hashes, covered = _refreshed(ws)
        cached = verdicts.known(sorted(set(hashes.values())))
        known: dict[str, build.Known] = {}
        good: list[_File] = []
        secrets: list[Failure] = []
        prefix, rel_prefix = str(folder) + os.sep, _rel(folder, top) + "/"
        for stem in stems:  # paths as strings: no Path object per file
            report.checked += 1
            path, rel = f"{prefix}{stem}.md", f"{rel_prefix}{stem}.md"
            verdict = cached.get(hashes.get(path, ""))
            if verdict is None:
                try:
                    data = store.read_bytes(Path(path))
                except (InvalidMemory, OSError) as exc:
                    report.failures.append(Failure("parse", rel,
                                                   str(exc) or type(exc).__name__))
                    continue
                verdict, parsed = _verdict(data)
                verdicts.add(build.content_hash(data), verdict)
                if cold and parsed is not None:  # the build below reads it
                    known[path] = build.Known(data, *parsed)
            found = _from_verdict(path, rel, stem, verdict, report, secrets)
            if found is not None:
                good.append(found)
        if cold:
            _, covered = _refreshed(ws, known)
    finally:
        verdicts.close()
    report.failures += secrets
    return good, covered


def _refreshed(ws: Workspace, known: dict[str, Any] | None = None
               ) -> tuple[dict[str, str], set[str] | None]:
    """Refresh the index: {path: content hash} of the repo folder's files it holds and
    the paths of the repo memories it holds; ({}, None) while another process holds
    it (every file is then read, and the index rule is not checked)."""
    from memex.index import build

    with build.open_index(ws, known=known) as index:
        if index.report.stale:
            return {}, None
        return build.file_hashes(index.conn, "repo"), build.memory_paths(index.conn, "repo")


def _check_graph(files: list[_File], existing: set[str], report: Report
                 ) -> list[tuple[str, _File, str]]:
    """Chain and link rules; returns the safe repairs as (kind, file, other id)."""
    by_id = {f.memory.id: f for f in files}
    repairs: list[tuple[str, _File, str]] = []
    for f in files:
        m = f.memory
        if not m.chained:  # nothing on its side; as another's target it is read below
            continue
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
                and not lifecycle.kept_over(m.as_memory(), successor.memory.as_memory()):
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


def _check_index(ws: Workspace, files: list[_File], covered: set[str] | None,
                 report: Report) -> None:
    """The refreshed index (incremental: a stat per file when nothing changed) holds
    every file the store would read: one that a search could never find is a bug or a
    damaged cache. Skipped while another process holds the index's lock (COVERED None).
    A file the submit in flight created is not required (reads leave it out)."""
    if covered is None:
        return
    submitting = _submitting(ws)
    created = {p for p, (previous, _) in submitting.files.items()
               if previous is None} if submitting is not None else set()
    for f in files:
        if f.memory.scope == "project" and f.rel.endswith(f"/{f.memory.id}.md") \
                and f.path not in covered and f.path not in created:
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
        try:  # the whole file, read now: a repair keeps its comments and key order
            loaded = store.read(Path(target.path), home)
        except (InvalidMemory, OSError) as exc:
            raise MemexError(f"{target.rel}: cannot be repaired ({exc})") from None
        m = loaded.memory
        if kind == "old":
            fixed = m.copy(status="superseded", superseded_by=other, retired_at=at,
                           updated_at=at, revision=m.revision + 1)
            fixed.status_history.append(lifecycle.history_entry(
                at, ws.identity(), m.status, "superseded", f"superseded by {other} "
                "(chain completed by verify --fix)"))
        else:
            fixed = m.copy(supersedes=other, updated_at=at, revision=m.revision + 1)
        store.save(store.Loaded(fixed, Path(target.path), home, loaded.parsed))
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
    ids, specials = store.ids_and_special_files(memory_dir)  # one listing for both
    stems = sorted(ids, key=lambda stem: f"{stem}.md")
    files, covered = _read_all(ws, memory_dir, stems, top, report)
    for special in specials:
        report.checked += 1
        report.failures.append(Failure("parse", _rel(special.path, top), special.reason))
    _check_limits(ws, files, report)
    existing = set(stems)
    repairs = _check_graph(files, existing, report)
    if fix and repairs:
        _apply_repairs(ws, repairs, report)
        return _rerun(ws, since, require_recall, require_write, report.fixed)
    _check_index(ws, files, covered, report)
    if since is not None:
        _usage_rules(ws, since, require_recall, require_write, report)
    _name_masked_files(ws, top, report)
    return report


def _name_masked_files(ws: Workspace, top: Path, report: Report) -> None:
    """Each failure of a file whose name is shown masked names the file's blob id
    (`git hash-object`): two such files would otherwise read as one."""
    object_format = ws.config.get("extensions.objectformat", "sha1")
    blobs: dict[str, str | None] = {}
    for n, failure in enumerate(report.failures):
        if failure.blob or redact.shown(failure.file) == failure.file:
            continue
        if failure.file not in blobs:
            try:
                blobs[failure.file] = fingerprint.blob_id(
                    store.read_bytes(top / failure.file), object_format)
            except (OSError, InvalidMemory):  # a link or FIFO is never followed or opened
                blobs[failure.file] = None
        if blobs[failure.file]:
            report.failures[n] = dataclasses.replace(failure, blob=blobs[failure.file])


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
        size = f.body_bytes
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
