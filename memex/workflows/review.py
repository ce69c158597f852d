"""`review`: a reviewer's summary of a memory PR, and what in it must block the merge.

The PR is the memory-level diff of BASE...HEAD (`memdiff`). On top of it:

- blocking: an unmasked secret or `<private>` block (`scan.check_texts`, the hook's
  scan), a personal or `visibility: private` memory in the repo, and an instruction
  approval nobody recorded (instruction_state becoming approved with no
  `promote --instruction` entry in review_history, or on an untrusted memory, or on
  `source: inference` without `approved_by`: DESIGN.md rule 1);
- listed: every `role: instruction` memory and instruction move, recorded promotes,
  near-duplicates of and possible contradictions with the live memories already on
  BASE (`hygiene`'s and `conflicts`' heuristics), and `paths` that match no file.

Read-only; the base memories come from the index when the working tree's memory
folder is HEAD's and an index is built, from that folder when none is (a fresh clone:
none is built), else from git in one `cat-file --batch`. Only those that could pair
with a PR memory are read in full (basepairs).
"""

from __future__ import annotations

import bisect
import fnmatch
import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memex.core import jsonout, lifecycle, model
from memex.core.errors import MemexError, UsageError
from memex.storage import gitio, store
from memex.storage.homes import Workspace
from memex.workflows import basepairs, conflicts, hosts, memdiff, pairs, prstatus, pull, scan

MARKER = "<!-- git-memex review -->"
DEFAULT_RANGE = "origin/HEAD...HEAD"


@dataclass(frozen=True)
class Finding:
    kind: str
    id: str
    detail: str
    blocking: bool = False
    other: str | None = None

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "id": self.id, "detail": self.detail,
                "blocking": self.blocking, "other": self.other}


@dataclass
class Review:
    range: str
    base: str
    head: str
    changes: list[memdiff.Change] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.blocking]

    def as_json(self) -> dict[str, object]:
        return {"range": self.range, "base": self.base, "head": self.head,
                "memories": [{"id": c.id, "category": c.category, "title": c.title,
                              "path": c.path, "events": c.events,
                              "review_state": c.memory.review_state if c.memory else None}
                             for c in self.changes],
                "findings": [f.as_json() for f in self.findings],
                "blocking": len(self.blocking)}


def _range(top: Path, spec: str | None) -> memdiff.Range:
    if spec is None:
        if gitio.rev_parse(top, "origin/HEAD") is not None:
            spec = DEFAULT_RANGE
        else:
            default = gitio.remote_default_branch(top)
            if default is None:
                raise UsageError("no origin/HEAD, origin/main or origin/master: name the "
                                 "base, e.g. git memex review origin/main...HEAD")
            spec = f"{default}...HEAD"
    elif ".." not in spec:
        spec = f"{spec}...HEAD"
    return memdiff.parse_range(top, spec)


def review(ws: Workspace, spec: str | None = None) -> Review:
    if ws.repo is None:
        raise MemexError("not inside a git repository: review reads a range of commits")
    top, folder = ws.repo.toplevel, ws.memory_dir_name
    rng = _range(top, spec)
    result = memdiff.diff(top, folder, rng)
    out = Review(rng.label, rng.old, rng.new, result.changes)
    _scan(out)
    _instructions(out)
    _against_base(ws, out, rng)
    _paths(top, out, rng.new)
    return out


def _scan(out: Review) -> None:
    texts = [(c.path, c.new_text) for c in out.changes if c.new_text is not None]
    ids = {c.path: c.id for c in out.changes}
    for hit in scan.check_texts(texts):
        kind = "secret" if hit.is_secret else "personal-or-private"
        detail = f"{hit.what} at line {hit.line}" if hit.is_secret else \
            scan.SHARING_KINDS[hit.kind]
        out.findings.append(Finding(kind, ids[hit.path], detail, blocking=True))
    for change in out.changes:
        if change.unreadable:
            out.findings.append(Finding("unreadable", change.id, change.unreadable))


def recorded_instruction_approval(memory: model.Memory) -> bool:
    """Whether review_history holds `promote --instruction`'s entry for the approval."""
    return any(str(h.get("note", "")).startswith("instruction ")
               and "-> approved" in str(h.get("note", "")) for h in memory.review_history)


def _instructions(out: Review) -> None:
    for change in out.changes:
        new, old = change.new, change.old
        if new is None:
            continue
        before = old.instruction_state if old is not None else None
        if new.instruction_state == "approved" and before != "approved":
            why = []
            if not recorded_instruction_approval(new):
                why.append("no `promote --instruction` entry in its review_history")
            if new.trust_level == "untrusted":
                why.append("the memory is untrusted")
            if new.source == "inference" and not new.approved_by:
                why.append("source: inference without approved_by")
            if why:
                out.findings.append(Finding(
                    "instruction-approval", change.id,
                    "instruction approved without review: " + "; ".join(why), blocking=True))
            else:
                by = next((h.get("by", "?") for h in reversed(new.review_history)
                           if str(h.get("note", "")).startswith("instruction ")), "?")
                out.findings.append(Finding("instruction-promote", change.id,
                                            f"instruction approved by {by} (recorded promote)"))
        elif before != new.instruction_state and new.role == "instruction":
            out.findings.append(Finding("instruction-change", change.id,
                                        f"instruction {before or 'none'} -> "
                                        f"{new.instruction_state or 'none'}"))
        elif new.role == "instruction" and change.kind == "added":
            out.findings.append(Finding("instruction", change.id,
                                        "role: instruction: would enter agents' instruction "
                                        "context once approved"))


def _worktree_is_head(ws: Workspace, rng: memdiff.Range) -> bool:
    """Whether the index (the working tree's folder) holds HEAD's side of the range."""
    assert ws.repo is not None
    top = ws.repo.toplevel
    head = memdiff.head_or_empty(top)
    return rng.new == head and not memdiff.changed_paths(
        top, memdiff.Range(head, memdiff.WORKTREE, ""), ws.memory_dir_name)


def _base_from_index(ws: Workspace, out: Review, fresh: list[model.Memory],
                     touched: set[str]) -> None:
    """The findings against BASE's live memories read from the index (HEAD's folder
    minus the PR): one row pass without front matter; entries and memories made only
    of the rows that could pair with a PR memory (basepairs)."""
    from memex.index import build, views

    with build.open_index(ws) as index:
        rows = [row for row in views.pair_rows(index.conn, "repo") if row[1] not in touched]

        def entry(i: int) -> conflicts.Entry:
            _, mid, title, body, tags, paths = rows[i]
            return conflicts.Entry(mid, pairs.paired_text(title, body),
                                   frozenset(t.lower() for t in json.loads(tags)),
                                   tuple(json.loads(paths)))

        def load(i: int) -> model.Memory:
            rowid = rows[i][0]
            return views.read_rows(index.conn, [rowid])[rowid]

        texts = [pairs.paired_text(title, body) for _, _, title, body, _, _ in rows]
        _findings(out, fresh, basepairs.Base(texts, entry, load))


def _base_from_files(ws: Workspace, touched: set[str]) -> list[model.Memory]:
    """No index yet (a fresh clone): BASE's live memories as the index would hold
    them (HEAD's folder minus the PR), read from the repo folder without building
    one: files in path order, an id to its first file, chains completed."""
    home = next((h for h in store.homes(ws) if h.kind == "repo"), None)
    if home is None:
        return []
    items, _ = store.read_home(home)
    items.sort(key=lambda item: str(item.path))
    first: dict[str, model.Memory] = {}
    for item in items:
        first.setdefault(item.memory.id, item.memory)
    completed, _ = lifecycle.complete_chains(first.values())
    return [m for m in (completed[mid] for mid in first)
            if m.id not in touched and m.status in model.LIVE_STATUSES]


def _base_from_git(ws: Workspace, rng: memdiff.Range, touched: set[str]
                   ) -> list[model.Memory]:
    """Every live memory of BASE's folder, read from git in one `cat-file --batch` by
    blob id (a `REF:PATH` per file makes git read the folder's tree once per file)."""
    assert ws.repo is not None
    top, folder = ws.repo.toplevel, ws.memory_dir_name
    listing = gitio.run(["ls-tree", "-z", rng.old, "--", f"{folder}/"],
                        cwd=top, check=False).stdout
    blobs = []
    for line in listing.split("\0"):
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and store.in_memory_folder(folder, path):
            blobs.append(parts[2])
    texts = gitio.read_blobs(top, blobs)
    items = [m for m in (_parsed(texts[b]) for b in blobs) if m is not None]
    return [m for m in items if m.id not in touched and m.status in model.LIVE_STATUSES]


def _parsed(text: str | None) -> model.Memory | None:
    return pull.parse_memory(text)


def _against_base(ws: Workspace, out: Review, rng: memdiff.Range) -> None:
    fresh = [c.new for c in out.changes
             if c.new is not None and c.new.status in model.LIVE_STATUSES
             and c.category in ("new", "changed")]
    if not fresh:
        return
    from memex.index import build

    touched = {c.id for c in out.changes}
    if not _worktree_is_head(ws, rng):
        base = _base_from_git(ws, rng, touched)
    elif build.db_path(ws).exists():  # the index holds HEAD: BASE is it minus the PR
        _base_from_index(ws, out, fresh, touched)
        return
    else:
        base = _base_from_files(ws, touched)
    entries = [conflicts.Entry.of(m) for m in base]
    _findings(out, fresh, basepairs.Base([e.text for e in entries], entries.__getitem__,
                                         base.__getitem__))


def _findings(out: Review, fresh: list[model.Memory], base: basepairs.Base) -> None:
    """Near-duplicates of and contradictions with BASE's live memories: the same rules
    as `health`, the rarity of a word counted over BASE and the PR together, reading
    only the base memories that could pair with a PR memory (basepairs)."""
    found = basepairs.against(fresh, base)
    memory_of = functools.cache(base.load)  # a memory made once, for each finding
    against: dict[str, list[conflicts.Contradiction]] = {}
    for conflict in found.contradictions:
        against.setdefault(conflict.a, []).append(conflict)
    for memory, duplicates in zip(fresh, found.near, strict=True):
        for i, score in duplicates:
            other = memory_of(i)
            out.findings.append(Finding(
                "near-duplicate", memory.id,
                f"{score:.0%} same words as {other.id[:10]} ({other.title or other.summary}): "
                "supersede it instead?", other=other.id))
        for conflict in against.get(memory.id, ()):
            other = memory_of(found.index_of[conflict.b])
            reasons = "; ".join(f"{r.rule}: {r.detail}" for r in conflict.reasons)
            state = " (acknowledged)" if conflict.acknowledged else ""
            out.findings.append(Finding(
                "contradiction", memory.id,
                f"may contradict {other.id[:10]} ({other.title or other.summary}){state}: "
                f"{reasons}", other=other.id))


def _tree_files(top: Path, side: str) -> list[str]:
    if side in (memdiff.WORKTREE, memdiff.STAGED):
        listing = gitio.run(["ls-files", "-z"], cwd=top).stdout
    else:
        listing = gitio.run(["ls-tree", "-r", "-z", "--name-only", side], cwd=top).stdout
    return sorted(p for p in listing.split("\0") if p)


def glob_matches(glob: str, files: list[str]) -> bool:
    """Whether a `paths` glob names a file of the tree (a folder names what is in it).
    `files` is sorted: only those under the glob's fixed prefix are matched."""
    pattern = model.glob_pattern(glob)
    if not pattern:
        return True
    prefix = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    folder = pattern + "/"
    for f in files[bisect.bisect_left(files, prefix):]:
        if not f.startswith(prefix):
            break
        if fnmatch.fnmatchcase(f, pattern) or f.startswith(folder):
            return True
    return False


def _paths(top: Path, out: Review, side: str) -> None:
    pending = [c for c in out.changes if c.new is not None and c.new.paths
               and c.category in ("new", "changed")]
    if not pending:
        return
    files = _tree_files(top, side)
    for change in pending:
        assert change.new is not None
        missing = [g for g in change.new.paths if not glob_matches(g, files)]
        if missing:
            out.findings.append(Finding("paths", change.id,
                                        "paths match no file in the tree: "
                                        + ", ".join(missing)))


# ---------------------------------------------------------------- posting


@dataclass
class Posted:
    url: str | None = None
    error: str | None = None


def pr_number_from_env(env: Mapping[str, str]) -> int | None:
    """The PR a CI job runs for: GitLab's CI_MERGE_REQUEST_IID, GitHub's and Gitea's
    `refs/pull/N/...` GITHUB_REF, or MEMEX_PR."""
    for key in ("MEMEX_PR", "CI_MERGE_REQUEST_IID"):
        value = env.get(key, "").strip()
        if value.isdigit():
            return int(value)
    ref = env.get("GITHUB_REF", "")
    parts = ref.split("/")
    if len(parts) >= 3 and parts[:2] == ["refs", "pull"] and parts[2].isdigit():
        return int(parts[2])
    return None


def masked(text: str) -> str:
    """A review as CI prints and posts it: every secret masked, as the scan reports one
    (file and line, never the secret): a token in a teammate's title went whole into the
    CI log and the PR comment."""
    from memex.core import redact  # only for a review that shows one

    return redact.redact(text).text


def masked_json(data: dict[str, object]) -> object:
    """`masked` for the review's JSON data: the same data with every string (and key)
    masked on its own (`jsonout.redacted`)."""
    return jsonout.redacted(data)


def post(ws: Workspace, body: str, number: int | None = None,
         env: Mapping[str, str] | None = None) -> Posted:
    """Post `body` as the PR's one review comment (updated in place on a later run).
    Never raises for the host: a refusal comes back as `error`, one line."""
    environ = os.environ if env is None else env
    provider, why_not = prstatus.provider(ws, environ)
    if provider is None:
        return Posted(error=f"cannot post the review: {why_not}")
    try:
        if number is None:
            number = pr_number_from_env(environ)
        if number is None and ws.repo is not None:
            branch = environ.get("GITHUB_HEAD_REF") or environ.get(
                "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") or gitio.current_branch(
                ws.repo.toplevel)
            pr = provider.pull_request(branch) if branch else None
            number = pr.number if pr is not None else None
        if number is None:
            return Posted(error=f"cannot post the review: no PR found on {provider.name} "
                          f"{provider.slug} for this branch (pass --pr N)")
        return Posted(url=provider.post_comment(number, masked(body), MARKER))
    except hosts.HostError as exc:
        return Posted(error=f"cannot post the review: {exc}")
