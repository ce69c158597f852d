"""`pr-status`: map the branch's pull request onto its memories.

merged -> published, approved -> approved, changes requested (or closed unmerged) ->
a suggestion only. The PR comes from a host provider (memex.workflows.hosts); "merged" is also
seen from git alone: the branch tip reachable from the remote default branch, or,
for squash and rebase merges, the memory file's content present on that branch.
A report by default; `apply` makes the moves in the working tree.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memex.core import clock, lifecycle, model
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.storage import gitio, store, usage
from memex.storage.homes import Workspace
from memex.workflows import freshness, hosts, pull, team

PENDING = ("proposed", "approved")


@dataclass
class Action:
    item: store.Loaded
    kind: str  # publish | approve | suggest | none
    to: str | None
    reason: str
    approved_by: str | None = None

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
                "host_error": error, "tip_merged": self.tip_merged,
                "last_fetch": self.last_fetch, "could_not_see": self.could_not_see,
                "memories": [a.as_json() for a in self.actions], "applied": self.applied,
                "commit": self.commit, "hint": self.hint}


def host_timeout(ws: Workspace) -> float:
    seconds: float = ws.typed("memex.hostTimeout")
    return seconds


def provider(ws: Workspace, env: Mapping[str, str]
             ) -> tuple[hosts.Provider | None, str | None]:
    """The PR host of this clone (`hosts.provider_for` with memex.host / memex.hostUrl)."""
    return hosts.provider_for(gitio.origin_url(ws.config), env, host_timeout(ws),
                              host=ws.setting("memex.host"), host_url=ws.setting("memex.hostUrl"))


def _content_on(top: Path, ref: str, rel: str, memory: model.Memory) -> bool:
    """Whether `ref` holds this memory's content (same id, title and body)."""
    there = pull.parse_memory(gitio.show_blob(top, ref, rel))
    return there is not None and there.id == memory.id and model.same_content(there, memory)


def pr_status(ws: Workspace, apply: bool = False, commit: bool = False,
              env: Mapping[str, str] | None = None) -> PrReport:
    """The report (and with `apply`, the moves; with `commit`, one memory-only commit)."""
    if commit and not apply:
        raise UsageError("--commit needs --apply")
    if ws.repo is None or ws.memory_dir is None:
        raise MemexError("not inside a git repository: pr-status maps a branch's PR")
    top = ws.repo.toplevel
    branch = gitio.current_branch(top)
    if branch is None:
        raise MemexError("HEAD is detached: check out the branch whose PR to look at")
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
    on_branch: set[str] | None = None
    if default_ref is not None:
        report.tip_merged = gitio.is_ancestor(top, "HEAD", default_ref)
        diff = gitio.run(["diff", "--name-only", "--no-renames", "-z", f"{default_ref}...HEAD",
                          "--", folder], cwd=top, check=False)
        on_branch = {p for p in diff.stdout.split("\0") if p}
    for item in _candidates(ws, on_branch if not report.tip_merged else None):
        if item.memory.review_state in PENDING:
            report.actions.append(_decide(report, item, top,
                                          item.path.relative_to(top).as_posix()))

    if apply:
        _apply(ws, report, commit)
    usage.record_in(ws, "read", [a.item.id for a in report.actions])
    if report.applied and not report.commit:
        moved = [a.item for a in report.actions if a.item.id in report.applied]
        report.hint = team.commit_hint(moved, "memex: record review state", top)
    return report


def _candidates(ws: Workspace, changed: set[str] | None) -> list[store.Loaded]:
    """The repo's memories, or only those among `changed` (repo-relative paths the
    branch touched): reads just those files instead of the whole folder."""
    assert ws.repo is not None and ws.memory_dir is not None
    home = store.Home("repo", ws.memory_dir)
    if changed is None:
        return store.scan(home)[0]
    out: list[store.Loaded] = []
    for rel in sorted(changed):
        if store.in_memory_folder(ws.memory_dir_name, rel):
            with contextlib.suppress(InvalidMemory, OSError):
                out.append(store.read(ws.repo.toplevel / rel, home))
    return out


def _decide(report: PrReport, item: store.Loaded, top: Path, rel: str) -> Action:
    memory, pr, ref = item.memory, report.pr, report.default_ref
    if pr is not None and pr.merged:
        return Action(item, "publish", "published", f"PR #{pr.number} merged")
    if ref is not None and report.tip_merged:
        return Action(item, "publish", "published", f"the branch tip is on {ref} (merged)")
    if ref is not None and _content_on(top, ref, rel, memory):
        return Action(item, "publish", "published",
                      f"its content is on {ref} (a squash or rebase merge)")
    if pr is None:
        why = "no PR found for this branch" if report.provider and not report.host_error \
            else "PR state unknown"
        return Action(item, "none", None, f"{why}; not merged into {ref or 'the default'}")
    if pr.state == "closed":
        return Action(item, "suggest", None,
                      f"PR #{pr.number} was closed without merging; to record that: "
                      f"git memex promote {memory.id[:10]} --reject --note 'PR closed'")
    if pr.review == "changes_requested":
        who = ", ".join(f"@{u}" for u in pr.requesters)
        return Action(item, "suggest", None,
                      f"changes requested on PR #{pr.number} by {who}: edit the file and "
                      f"push, or git memex promote {memory.id[:10]} --reject --note TEXT")
    if pr.review == "approved":
        who = ", ".join(f"@{u}" for u in pr.approvers)
        if memory.review_state == "proposed":
            return Action(item, "approve", "approved", f"PR #{pr.number} approved by {who}",
                          approved_by=f"{report.host_name}:{pr.approvers[0]}"
                          if pr.approvers else None)
        return Action(item, "none", None, f"PR #{pr.number} approved by {who}; "
                      "waits for the merge")
    return Action(item, "none", None, f"PR #{pr.number} is open; review pending")


def _apply(ws: Workspace, report: PrReport, commit: bool) -> None:
    at, me = clock.now_str(), ws.identity()
    moves: list[tuple[Action, store.Loaded]] = []
    for action in report.actions:
        if action.to is None:
            continue
        memory = action.item.memory
        if action.approved_by and not memory.approved_by:
            memory = memory.copy(approved_by=action.approved_by)
        new = lifecycle.review_transition(memory, action.to, at, me, action.reason)
        moves.append((action, store.Loaded(new, action.item.path, action.item.home,
                                           action.item.parsed)))
    previous = {loaded.path: loaded.path.read_bytes() for _, loaded in moves}
    try:
        for _, loaded in moves:
            store.save(loaded)
    except BaseException:
        team.restore_files(dict(previous))
        raise
    for action, loaded in moves:
        action.item = loaded
        report.applied.append(loaded.id)
    if commit and moves and ws.repo is not None:
        what = f" (PR #{report.pr.number})" if report.pr else ""
        n = len(moves)
        message = f"memex: record review state of {n} memor{'y' if n == 1 else 'ies'}{what}\n"
        try:
            report.commit = gitio.commit_only(ws.repo, [m.path for _, m in moves], message)
        except gitio.GitError as exc:
            raise MemexError(f"the moves are in the working tree, but the commit failed:\n"
                             f"{exc}") from None
