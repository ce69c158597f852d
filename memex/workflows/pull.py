"""`pull`: fetch + fast-forward only, with a receipt of the memories that came in.
How stale the last fetch is lives in `memex.workflows.freshness`. Nothing here runs on its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memex.core import frontmatter, model
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.storage import gitio, store
from memex.storage.homes import Workspace
from memex.workflows import team

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


# ---------------------------------------------------------------- pull


@dataclass(frozen=True)
class Change:
    id: str
    title: str
    review_state: str | None
    status: str | None
    path: str

    def as_json(self) -> dict[str, object]:
        return {"id": self.id, "title": self.title, "review_state": self.review_state,
                "status": self.status, "path": self.path}


@dataclass
class PullReceipt:
    remote: str
    ref: str
    before: str | None
    after: str | None
    commits: int = 0
    new: list[Change] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    retired: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    ahead: int = 0
    dropped: list[str] = field(default_factory=list)  # commits --drop-merged let go
    indexed: int | None = None  # files the index (re)read after the fast-forward
    index_memories: int | None = None  # memories the index holds afterwards
    notices: list[str] = field(default_factory=list)

    @property
    def up_to_date(self) -> bool:
        return self.before == self.after

    def as_json(self) -> dict[str, object]:
        return {"remote": self.remote, "ref": self.ref, "before": self.before,
                "after": self.after, "commits": self.commits,
                "up_to_date": self.up_to_date, "ahead": self.ahead,
                "dropped": self.dropped,
                "new": [c.as_json() for c in self.new],
                "changed": [c.as_json() for c in self.changed],
                "retired": [c.as_json() for c in self.retired],
                "removed": [c.as_json() for c in self.removed],
                "indexed": self.indexed, "index_memories": self.index_memories,
                "notices": self.notices}


def _tracking(top: Path, branch: str, remote: str | None) -> tuple[str, str]:
    """(remote, remote-tracking ref) to fast-forward to."""
    config = gitio.config_map(top)  # keys lower-cased
    up_remote = config.get(f"branch.{branch.lower()}.remote")
    merge = config.get(f"branch.{branch.lower()}.merge")
    remotes = gitio.remotes(top)
    if remote is not None:
        if remote not in remotes:
            known = ", ".join(remotes) or "none"
            from memex.core import redact  # only for a refusal

            raise UsageError(f"no remote named {redact.quoted(remote)} (remotes: {known})")
        name = merge.removeprefix("refs/heads/") if merge and up_remote == remote else branch
        return remote, f"{remote}/{name}"
    if not up_remote or not merge or up_remote == ".":
        hint = f"git branch --set-upstream-to {remotes[0]}/{branch}" if remotes else \
            "git remote add origin URL"
        raise MemexError(f"branch {branch} has no upstream to pull from ({hint}, or name a "
                         "REMOTE); nothing changed")
    return up_remote, f"{up_remote}/{merge.removeprefix('refs/heads/')}"


def pull(ws: Workspace, remote: str | None = None, scope: str = "project",
         prompt: bool = False, drop_merged: bool = False) -> PullReceipt:
    """Fetch, then fast-forward the current branch only; never merge, rebase or commit.

    Anything in the way (diverged history, local changes git would overwrite, no
    upstream, a failed fetch) is a MemexError and the branch and working tree are
    unchanged. `prompt` False keeps git from asking for credentials.

    Diverged only because a squash or rebase merge took the branch's memory commits
    upstream (`merged_upstream`): said so, and with `drop_merged` the branch moves to
    upstream as `git reset --keep` does (refused when uncommitted work is in the way).
    """
    if scope == "project" and ws.repo is None:
        raise MemexError("not inside a git repository: pull fetches and fast-forwards the "
                         "repository you run it in; cd into a clone (or pull the org memory "
                         "repo with --org)")
    tgt = team.target(ws, scope)
    top = tgt.toplevel
    team.mid_operation(tgt.repo, "what the pull brings in", forceable=False)
    branch = gitio.current_branch(top)
    if branch is None:
        raise MemexError("HEAD is detached: check out a branch to pull; nothing changed")
    busy = gitio.operation_in_progress(tgt.repo)
    if busy:
        raise MemexError(f"{busy} is in progress; finish or abort it first; nothing changed")
    remote_name, ref = _tracking(top, branch, remote)
    env = None if prompt else {"GIT_TERMINAL_PROMPT": "0"}
    fetched = gitio.run(["fetch", "--quiet", remote_name], cwd=top, check=False, env=env)
    if fetched.returncode != 0:
        message = (fetched.stderr or fetched.stdout).strip()
        raise MemexError(f"fetch from {remote_name} failed; nothing changed:\n{message}")
    target_sha = gitio.rev_parse(top, ref)
    if target_sha is None:
        raise MemexError(f"{ref} does not exist after the fetch (has the branch been pushed "
                         "there?); nothing changed")
    before = gitio.rev_parse(top, "HEAD")
    receipt = PullReceipt(remote_name, ref, before, before)
    if before == target_sha:
        return receipt
    if before is not None and gitio.is_ancestor(top, target_sha, before):
        count = gitio.run(["rev-list", "--count", f"{target_sha}..{before}"], cwd=top).stdout
        receipt.ahead = int(count.strip() or 0)
        return receipt
    if before is not None and not gitio.is_ancestor(top, before, target_sha):
        check = merged_upstream(top, ref, ws.memory_dir_name if scope == "project"
                                else tgt.home.path.name)
        if check.differs or not check.commits:
            shown = "".join(f"\n  {d}" for d in check.differs[:8])
            raise MemexError(
                f"cannot fast-forward {branch} to {ref}: the two have diverged. pull never "
                f"merges or rebases; do it yourself (git rebase {ref}, or git merge {ref}); "
                f"nothing changed{shown}")
        listed = "".join(f"\n  {c}" for c in check.describe())
        if not drop_merged:
            raise MemexError(
                f"{branch} has diverged from {ref} only by {len(check.commits)} memory "
                f"commit(s) that {ref} already holds (a squash or rebase merge):{listed}\n"
                f"git memex pull --drop-merged moves {branch} to {ref} (as git reset --keep); "
                "nothing changed")
        reset = gitio.run(["reset", "--quiet", "--keep", target_sha], cwd=top, check=False)
        if reset.returncode != 0:
            message = (reset.stderr or reset.stdout).strip()
            raise MemexError(f"cannot move {branch} to {ref}: uncommitted work would be "
                             f"lost; nothing changed:\n{message}")
        receipt.dropped = check.describe()
        _finish(ws, receipt, top, before)
        return receipt
    merged = gitio.run(["merge", "--ff-only", "--quiet", ref], cwd=top, check=False, env=env)
    if merged.returncode != 0:
        message = (merged.stderr or merged.stdout).strip()
        raise MemexError(f"cannot fast-forward {branch} to {ref}; nothing changed:\n{message}")
    _finish(ws, receipt, top, before)
    return receipt


def _finish(ws: Workspace, receipt: PullReceipt, top: Path, before: str | None) -> None:
    receipt.after = gitio.rev_parse(top, "HEAD")
    receipt.commits = int(gitio.run(
        ["rev-list", "--count", f"{before}..HEAD" if before else "HEAD"], cwd=top
    ).stdout.strip() or 0)
    _fill_receipt(receipt, top, ws.memory_dir_name)
    _refresh_index(ws, receipt)


REVIEW_FIELDS = frozenset({"review_state", "review_history", "approved_by", "revision",
                           "updated_at"})


@dataclass
class MergedCheck:
    """The local commits missing upstream, as `pull` sees them after a squash or rebase
    merge: merged (their files upstream with the same blob ids), review-only (they only
    record review fields, e.g. `pr-status --commit`), and what differs otherwise."""

    commits: list[tuple[str, str, str]] = field(default_factory=list)  # sha, subject, kind
    differs: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        return [f"{sha[:10]} {subject} ({kind})" for sha, subject, kind in self.commits]


def merged_upstream(top: Path, upstream: str, folder: str) -> MergedCheck:
    """Whether every commit in `upstream..HEAD` is a memory-only commit whose files
    `upstream` holds (gitio.same_content), or one that changes review fields only."""
    out = MergedCheck()
    log = gitio.run(["log", "--format=%x00%H %P%x09%s", "--name-only", "--no-renames",
                     f"{upstream}..HEAD"], cwd=top, check=False).stdout
    for chunk in log.split("\0")[1:]:
        head, _, names = chunk.partition("\n")
        ids, _, subject = head.partition("\t")
        sha, *parents = ids.split()
        paths = [p for p in names.splitlines() if p]
        if len(parents) != 1:
            out.differs.append(f"{sha[:10]} {subject}: a merge commit")
            continue
        others = [p for p in paths if not store.in_memory_folder(folder, p)]
        if others:
            out.differs.append(f"{sha[:10]} {subject}: changes {', '.join(others[:3])}, not "
                               "only memory files")
            continue
        held = gitio.same_content(top, sha, upstream, paths)
        rest = [p for p in paths if p not in held and _present(top, sha, p, upstream)]
        if not rest:
            out.commits.append((sha, subject, "merged"))
            continue
        changed = {p: _fields_changed(top, parents[0], sha, p) for p in rest}
        if all(f <= REVIEW_FIELDS for f in changed.values()):
            out.commits.append((sha, subject, "review fields only"))
            continue
        for path, fields in changed.items():
            if not fields <= REVIEW_FIELDS:
                what = ", ".join(sorted(fields - REVIEW_FIELDS)) or "the file"
                out.differs.append(f"{sha[:10]} {subject}: {path} ({what}) is not on "
                                   f"{upstream}")
    return out


def _present(top: Path, sha: str, path: str, upstream: str) -> bool:
    """False when the commit deleted `path` and upstream has no such file either."""
    found = gitio.blob_ids(top, sha, [path]) or gitio.blob_ids(top, upstream, [path])
    return bool(found)


def _fields_changed(top: Path, parent: str, sha: str, path: str) -> set[str]:
    """The front matter fields (and `body`) that differ between the two versions."""
    texts = gitio.read_blobs(top, [f"{parent}:{path}", f"{sha}:{path}"])
    old, new = parse_memory(texts[f"{parent}:{path}"]), parse_memory(texts[f"{sha}:{path}"])
    if old is None or new is None:
        return {"the whole file"}
    a, b = old.front_matter(), new.front_matter()
    changed = {k for k in set(a) | set(b) if a.get(k) != b.get(k)}
    if old.body != new.body:
        changed.add("body")
    return changed


def _refresh_index(ws: Workspace, receipt: PullReceipt) -> None:
    """DESIGN.md: pull = fetch + fast-forward, then reindex. Incremental (only files
    whose stat moved are read); the fast-forward has happened, so an index
    problem is a notice, never a failed pull (the next read rebuilds it anyway)."""
    import sqlite3

    from memex import index

    try:
        report = index.refresh(ws)
    except (sqlite3.Error, OSError) as exc:
        receipt.notices.append(f"the search index was not refreshed ({exc}); the next "
                               "search rebuilds it")
        return
    receipt.indexed = report.new + report.changed + report.moved
    receipt.index_memories = report.memories
    receipt.notices.extend(report.warnings)
    if receipt.indexed:
        from memex.workflows import embedding

        receipt.notices.extend(embedding.start_background(ws))


def parse_memory(text: str | None) -> model.Memory | None:
    """The memory in a file's text (a blob read from git), or None: absent or invalid."""
    if text is None:
        return None
    try:
        memory, _ = frontmatter.load(text)
    except InvalidMemory:
        return None
    return memory


def _fill_receipt(receipt: PullReceipt, top: Path, folder: str) -> None:
    """What came in, from the memory folder before/after (the index is rebuilt elsewhere)."""
    old = receipt.before or EMPTY_TREE
    new = receipt.after or "HEAD"
    proc = gitio.run(["diff", "--name-status", "--no-renames", "-z", old, new, "--", folder],
                     cwd=top, check=False)
    fields = proc.stdout.split("\0")
    entries = [(status, path) for status, path in zip(fields[0::2], fields[1::2], strict=False)
               if path and store.is_memory_name(PurePosixPath(path).name)]
    specs = [f"{new}:{p}" for _, p in entries]
    if receipt.before:
        specs += [f"{old}:{p}" for status, p in entries if status != "A"]
    texts = gitio.read_blobs(top, specs)
    for status, path in entries:
        stem = PurePosixPath(path).stem
        after = parse_memory(texts.get(f"{new}:{path}"))
        before = parse_memory(texts.get(f"{old}:{path}")) if receipt.before else None
        shown = after or before
        change = Change(stem, shown.title if shown else "(unreadable)",
                        shown.review_state if shown else None,
                        shown.status if shown else None, path)
        if status == "A":
            receipt.new.append(change)
        elif status == "D":
            receipt.removed.append(change)
        elif (before is not None and after is not None and before.is_live
              and not after.is_live):
            receipt.retired.append(change)
        else:
            receipt.changed.append(change)
