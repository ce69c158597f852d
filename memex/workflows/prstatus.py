"""`pr-status`: map the branch's pull request onto its memories.

Review needs evidence: a merged PR with an approving review on the host's record
publishes (approved_by = `github:login`); a merge seen by git alone (the branch's own
memory commits on the remote default branch, or, after a squash or rebase merge, the
same blob ids there) publishes only what was already approved and notes the rest.
The branch's own commits start at `branch.<name>.memexBase` (`submit --branch`) or
`git merge-base --fork-point`. Host approved -> approved; changes requested (or closed
unmerged) -> a suggestion only. A report by default; `apply` makes the moves in the
working tree, all or nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memex.core import clock, lifecycle
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.storage import gitio, rollback, store, usage, writelock
from memex.storage.homes import Workspace
from memex.workflows import freshness, hosts, team

PENDING = ("proposed", "approved")


@dataclass
class Action:
    item: store.Loaded
    kind: str  # publish | approve | note | suggest | none
    to: str | None
    reason: str
    approved_by: str | None = None
    note: str | None = None  # kind "note": the review_history note --apply records

    def as_json(self) -> dict[str, object]:
        m = self.item.memory
        return {"id": m.id, "title": m.title, "review_state": m.review_state,
                "action": self.kind, "to": self.to, "reason": self.reason,
                "path": str(self.item.path)}


@dataclass
class PrReport:
    branch: str
    default_ref: str | None
    provider: str | None
    pr: hosts.PullRequest | None
    host_error: hosts.HostError | None
    tip_merged: bool
    last_fetch: str | None
    could_not_see: list[str] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    commit: str | None = None
    hint: str | None = None
    base: str | None = None  # where the branch started (memexBase or the fork point)
    default_sha: str | None = None

    @property
    def host_name(self) -> str:
        """The provider's name (github, gitlab, gitea): approvers are `name:login`."""
        return (self.provider or "github").split(" ", 1)[0]

    def as_json(self) -> dict[str, object]:
        error = None
        if self.host_error is not None:
            error = {"kind": self.host_error.kind, "message": str(self.host_error)}
        return {"branch": self.branch, "default_branch": self.default_ref,
                "provider": self.provider, "pr": self.pr.as_json() if self.pr else None,
                "host_error": error, "tip_merged": self.tip_merged, "base": self.base,
                "last_fetch": self.last_fetch, "could_not_see": self.could_not_see,
                "memories": [a.as_json() for a in self.actions], "applied": self.applied,
                "commit": self.commit, "hint": self.hint}


def host_timeout(ws: Workspace) -> float:
    seconds: float = ws.typed("memex.hostTimeout")
    return seconds


NO_APPROVAL = "no approval recorded"


def provider(ws: Workspace, env: Mapping[str, str]
             ) -> tuple[hosts.Provider | None, str | None]:
    """The PR host of this clone (`hosts.provider_for` with memex.host / memex.hostUrl)."""
    return hosts.provider_for(gitio.origin_url(ws.config), env, host_timeout(ws),
                              host=ws.setting("memex.host"), host_url=ws.setting("memex.hostUrl"))


def pr_status(ws: Workspace, apply: bool = False, commit: bool = False,
              env: Mapping[str, str] | None = None) -> PrReport:
    """The report (and with `apply`, the moves; with `commit`, one memory-only commit).

    Review needs evidence (DESIGN.md, issue 12): git alone may move `approved` ->
    `published` (the approver is on record) but never `proposed`; the host's record of
    an approving review names the approver. Only the memories the branch's own commits
    changed are looked at. With the host unreachable, --apply changes nothing.
    """
    if commit and not apply:
        raise UsageError("--commit needs --apply")
    if ws.repo is None or ws.memory_dir is None:
        raise MemexError("not inside a git repository: pr-status maps a branch's PR")
    top = ws.repo.toplevel
    branch = gitio.current_branch(top)
    if branch is None:
        busy = gitio.sequencer_state(ws.repo)
        raise MemexError(f"a {busy} is in progress: finish it first" if busy else
                         "HEAD is detached: check out the branch whose PR to look at")
    default_ref = gitio.remote_default_branch(top)
    last, _ = freshness.staleness(ws)
    report = PrReport(branch, default_ref, None, None, None, False,
                      clock.format_time(last) if last else None)

    is_default = default_ref is not None and default_ref.split("/", 1)[-1] == branch
    if is_default:
        report.could_not_see.append(f"a PR: {branch} is the default branch; merged state "
                                    "comes from git alone")
    else:
        host, why_not = provider(ws, os.environ if env is None else env)
        if host is None:
            report.could_not_see.append(f"the PR: {why_not}")
        else:
            report.provider = f"{host.name} {host.slug}"
            try:
                report.pr = host.pull_request(branch)
            except hosts.HostError as exc:
                report.host_error = exc
                report.could_not_see.append(f"the PR: {exc}")
    if default_ref is None and report.pr and report.pr.base_ref:
        guess = f"origin/{report.pr.base_ref}"
        default_ref = report.default_ref = guess if gitio.rev_parse(top, guess) else None
    if default_ref is None:
        report.could_not_see.append("the remote default branch (no origin/HEAD, main or "
                                    "master; try `git remote set-head origin --auto`)")

    folder = ws.memory_dir_name
    changed, merged = _branch_memories(report, top, folder, is_default)
    for item in _candidates(ws, changed):
        if item.memory.review_state in PENDING:
            rel = item.path.relative_to(top).as_posix()
            report.actions.append(_decide(report, item, rel in merged))

    if apply:
        if report.host_error is not None:
            report.could_not_see.append("permission to apply: the host could not be asked, "
                                        "so nothing was changed")
        else:
            _apply(ws, report, commit)
    usage.record_in(ws, usage.Op.READ, [a.item.id for a in report.actions])
    if report.applied and not report.commit:
        moved = [a.item for a in report.actions if a.item.id in report.applied]
        report.hint = team.commit_hint(moved, "memex: record review state", top)
    return report


def _branch_memories(report: PrReport, top: Path, folder: str, is_default: bool
                     ) -> tuple[set[str] | None, set[str]]:
    """(the memory files the branch's own commits changed, None for "every one" on the
    default branch; those of them git sees merged into the remote default branch)."""
    ref = report.default_ref
    report.default_sha = gitio.rev_parse(top, ref) if ref else None
    if is_default and ref is not None:
        report.tip_merged = gitio.is_ancestor(top, "HEAD", ref)
        if report.tip_merged:
            return None, _all_paths(top, folder)
        return None, gitio.same_content(top, "HEAD", ref, sorted(_all_paths(top, folder)))
    base = gitio.branch_base(top, report.branch, ref)
    report.base = base
    if base is None:
        report.could_not_see.append(
            f"where {report.branch} started (no branch.{report.branch}.memexBase, no fork "
            f"point from {ref or 'the default branch'}), so git gives no merged verdict")
        if ref is None:
            return set(), set()
        return _changed(top, f"{ref}...HEAD", folder), set()
    changed = _changed(top, f"{base}..HEAD", folder)
    if not changed or ref is None:
        return changed, set()
    commits = gitio.run(["rev-list", "-1", f"{base}..HEAD", "--", folder], cwd=top,
                        check=False).stdout.split()
    report.tip_merged = bool(commits) and gitio.is_ancestor(top, commits[0], ref)
    if report.tip_merged:
        return changed, set(changed)
    return changed, gitio.same_content(top, "HEAD", ref, sorted(changed))


def _changed(top: Path, span: str, folder: str) -> set[str]:
    diff = gitio.run(["diff", "--name-only", "--no-renames", "-z", span, "--", folder],
                     cwd=top, check=False)
    return {p for p in diff.stdout.split("\0") if p and store.in_memory_folder(folder, p)}


def _all_paths(top: Path, folder: str) -> set[str]:
    files = gitio.run(["ls-files", "-z", "--", folder], cwd=top, check=False).stdout
    return {p for p in files.split("\0") if p and store.in_memory_folder(folder, p)}


def _candidates(ws: Workspace, changed: set[str] | None) -> list[store.Loaded]:
    """The repo's memories, or only those among `changed` (repo-relative paths the
    branch touched): reads just those files instead of the whole folder."""
    assert ws.repo is not None and ws.memory_dir is not None
    home = store.Home("repo", ws.memory_dir)
    if changed is None:
        return store.read_home(home)[0]
    out: list[store.Loaded] = []
    for rel in sorted(changed):
        if store.in_memory_folder(ws.memory_dir_name, rel):
            with contextlib.suppress(InvalidMemory, OSError):
                out.append(store.read(ws.repo.toplevel / rel, home))
    return out


def _decide(report: PrReport, item: store.Loaded, merged_by_git: bool) -> Action:
    memory, pr, ref = item.memory, report.pr, report.default_ref
    short = memory.id[:10]
    approvers = pr.approvers if pr is not None else ()
    approver = f"{report.host_name}:{approvers[0]}" if approvers and report.provider \
        else None
    if pr is not None and pr.merged and approver is not None:
        who = ", ".join(f"@{u}" for u in approvers)
        return Action(item, "publish", "published", f"PR #{pr.number} merged, approved by "
                      f"{who}", approved_by=approver)
    if (pr is not None and pr.merged) or merged_by_git:
        where = f"PR #{pr.number}" if pr is not None and pr.merged else f"the branch, into {ref}"
        if memory.review_state == "approved":
            return Action(item, "publish", "published", f"{where} merged; approved by "
                          f"{memory.approved_by or 'a promote'} before")
        into = f"merged into {ref or 'the default branch'}"
        note = f"{into} at {(report.default_sha or '?')[:10]}; {NO_APPROVAL}"
        suggest = f"approve it on the record: git memex promote {short}"
        if any(str(e.get("note", "")).startswith(into)
               and str(e.get("note", "")).endswith(NO_APPROVAL)
               for e in memory.review_history):
            return Action(item, "none", None, f"merged; {NO_APPROVAL}, so it stays proposed; "
                          + suggest)
        return Action(item, "note", None, f"{where} merged, but {NO_APPROVAL}: it stays "
                      f"proposed; {suggest}", note=note)
    if pr is None:
        why = "no PR found for this branch" if report.provider and not report.host_error \
            else "PR state unknown"
        return Action(item, "none", None, f"{why}; not merged into {ref or 'the default'}")
    if pr.state == "closed":
        return Action(item, "suggest", None,
                      f"PR #{pr.number} was closed without merging; to record that: "
                      f"git memex promote {short} --reject --note 'PR closed'")
    if pr.review == "changes_requested":
        who = ", ".join(f"@{u}" for u in pr.requesters)
        return Action(item, "suggest", None,
                      f"changes requested on PR #{pr.number} by {who}: edit the file and "
                      f"push, or git memex promote {short} --reject --note TEXT")
    if pr.review == "approved":
        who = ", ".join(f"@{u}" for u in pr.approvers)
        if memory.review_state == "proposed":
            return Action(item, "approve", "approved", f"PR #{pr.number} approved by {who}",
                          approved_by=approver)
        return Action(item, "none", None, f"PR #{pr.number} approved by {who}; "
                      "waits for the merge")
    return Action(item, "none", None, f"PR #{pr.number} is open; review pending")


@writelock.holds_write_lock
def _apply(ws: Workspace, report: PrReport, commit: bool) -> None:
    """All or nothing: every file gets its old bytes back when a write or the commit fails."""
    at, me = clock.now_str(), ws.identity()
    moves: list[tuple[Action, store.Loaded]] = []
    for action in report.actions:
        memory = action.item.memory
        if action.kind == "note" and action.note:
            new = memory.copy(updated_at=at, revision=memory.revision + 1)
            new.review_history.append(lifecycle.history_entry(
                at, me, memory.review_state, memory.review_state or "none", action.note))
        elif action.to is not None:
            if action.approved_by and memory.review_state == "proposed":
                memory = memory.copy(approved_by=action.approved_by)
            new = lifecycle.review_transition(memory, action.to, at, me, action.reason)
        else:
            continue
        moves.append((action, store.Loaded(new, action.item.path, action.item.home,
                                           action.item.parsed)))
    with rollback.restoring() as keep:
        for _, loaded in moves:
            keep(loaded.path)
            store.save(loaded)
        if commit and moves and ws.repo is not None:
            what = f" (PR #{report.pr.number})" if report.pr else ""
            n = len(moves)
            message = (f"memex: record review state of {n} memor{'y' if n == 1 else 'ies'}"
                       f"{what}\n")
            try:
                report.commit = gitio.commit_only(ws.repo, [m.path for _, m in moves], message)
            except gitio.GitError as exc:
                raise MemexError(f"the commit failed, so nothing changed:\n{exc}") from None
    for action, loaded in moves:
        action.item = loaded
        report.applied.append(loaded.id)
