"""git-memex-pr-status: map the branch's pull request onto its memories."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from memex.adapters.cli import _common, _render

if TYPE_CHECKING:
    from memex.workflows.prstatus import PrReport


@click.command("pr-status")
@click.option("--apply", "apply", is_flag=True,
              help="Make the moves (published, approved) in the working tree.")
@click.option("--commit", is_flag=True, help="With --apply: commit them (memory files only).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(apply: bool, commit: bool, as_json: bool) -> None:
    """Find the pull request of the current branch and map it onto the proposed and
    approved memories the branch's own commits changed (from where it started:
    branch.<name>.memexBase, recorded by `submit --branch`, else `git merge-base
    --fork-point`). Review needs evidence: a merged PR with an approving review on
    the host's record -> published, approved_by = the reviewer (github:login); a
    merge seen by git alone (those commits on the remote default branch, or after a
    squash or rebase merge the same blob ids there), or a host merge without an
    approving review, publishes only what is already approved: a proposed memory stays
    proposed, gets the review_history note "merged into REF at SHA; no approval
    recorded", and the report suggests `promote`. Approved on the host -> approved;
    changes requested or closed unmerged -> a suggestion only (never an automatic
    rejection). A report by default; --apply makes the moves in the working tree and
    prints the commit to make; --commit makes it, holding memory files only. A failure
    part-way (the host unreachable, a file or the commit failing) changes no file.

    The PR comes from the GitHub REST API at GITHUB_API_URL (default the public API)
    with GITHUB_TOKEN (or `gh auth token` when gh is installed); owner and repo come
    from the origin URL; memex.hostTimeout (seconds, default 10) bounds each request.
    The report says what it could not see (as of the last fetch); exit 1 when the host
    could not be asked or its answer was unusable.
    """
    from memex.workflows import prstatus

    report = prstatus.pr_status(_common.workspace(), apply=apply, commit=commit)
    if as_json:
        _common.emit_json(report.as_json())
    else:
        _print(report)
    if report.host_error is not None:
        sys.exit(1)


def _print(report: PrReport) -> None:
    pr = report.pr
    if pr is not None:
        state = "merged" if pr.merged else pr.state
        click.echo(f"PR #{pr.number} ({state}, review {pr.review}) {pr.url}".rstrip())
    elif report.provider and report.host_error is None:
        click.echo(f"no PR for branch {report.branch} on {report.provider.split(' ', 1)[-1]}")
    merged = "yes" if report.tip_merged else "no"
    click.echo(f"branch {report.branch}; tip on {report.default_ref or '?'}: {merged}"
               f"; last fetch {report.last_fetch or 'unknown'}")
    for missing in report.could_not_see:
        _common.warn(f"could not see {missing}")
    if not report.actions:
        click.echo("no proposed or approved memories on this branch")
    for action in report.actions:
        m = action.item.memory
        done = action.item.id in report.applied
        label = {"publish": "-> published", "approve": "-> approved", "suggest": "suggest",
                 "note": "note", "none": "no change"}[action.kind]
        if done:
            label = f"now {m.review_state}" if action.to else "noted"
        click.echo(f"{_render.short(m.id)} [{m.review_state}] {label}: {action.reason}")
    if report.commit:
        click.echo(f"commit {report.commit[:10]}")
    elif report.hint:
        _common.note(f"commit it when ready: {report.hint}")
    elif any(a.to for a in report.actions):
        _common.note("report only: --apply makes these moves")


def main() -> None:
    _common.run_step(cli, "pr-status")
