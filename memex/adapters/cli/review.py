"""git-memex-review: a reviewer's summary of a memory PR (and its CI comment)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from memex.adapters.cli import _common, _render
from memex.core import model

if TYPE_CHECKING:
    from memex.workflows.review import Finding, Review

ICON = {"new": "added", "changed": "changed", "superseded": "superseded",
        "retired": "retired", "deleted": "deleted", "unreadable": "unreadable"}


@click.command("review")
@click.argument("rev_range", metavar="[BASE...HEAD]", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]),
              default="text", show_default=True, help="How to print the summary.")
@click.option("--post", is_flag=True,
              help="Also post the markdown summary as the PR's comment (updated in place).")
@click.option("--pr", "pr_number", type=int, metavar="N",
              help="With --post: the PR or MR number (default: from the CI job, else the "
                   "branch's PR).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@_common.quiet_option
@_common.version_option
@_common.handle_errors
def cli(rev_range: str | None, fmt: str, post: bool, pr_number: int | None,
        as_json: bool) -> None:
    """Summarise the memories a PR changes, for its reviewers: each new, changed,
    superseded and retired memory in one line, then what to look at.

    Blocking (exit 1): an unmasked secret or <private> block; a personal or
    `visibility: private` memory in the repo; an instruction approval nobody
    recorded (instruction_state becoming approved without a `promote --instruction`
    entry in review_history, or on an untrusted memory, or on `source: inference`
    without approved_by). Listed, not blocking: role: instruction memories and
    instruction moves, recorded promotes, near-duplicates of and possible
    contradictions with the live memories already on BASE, and `paths` that match
    no file in HEAD's tree.

    The range defaults to origin/HEAD...HEAD (else origin/main or origin/master);
    one commit means COMMIT...HEAD. Read-only and fast: the base memories come from
    the index when the working tree's memory folder is HEAD's (from the folder, with
    no index built, in a fresh clone), and only those that could pair with a PR
    memory are read in full.

    --post sends the markdown summary to the PR (GitHub), MR (GitLab) or PR
    (Gitea/Forgejo) as one comment, edited in place on the next run; the host
    comes from the origin URL or memex.host (memex.hostUrl for a self-hosted
    instance), tokens as for pr-status. The PR number comes from --pr, the CI job
    (GITHUB_REF refs/pull/N/..., CI_MERGE_REQUEST_IID) or the branch's open PR. A
    failed post (a fork's read-only token) prints one line on stderr and leaves the
    exit status to the findings.
    """
    from memex.workflows import review

    ws = _common.workspace()
    result = review.review(ws, rev_range)
    fmt = "json" if as_json else fmt
    if fmt == "json":
        _common.emit_json(review.masked_json(result.as_json()))
    elif fmt == "markdown":
        click.echo(review.masked(markdown(result)), nl=False)
    else:
        click.echo(review.masked(text(result)), nl=False)
    if post:
        posted = review.post(ws, markdown(result), pr_number)
        if posted.error:
            _common.warn(posted.error)
        else:
            _common.note(f"posted the review: {posted.url}")
    if result.blocking:
        sys.exit(1)


def _finding_line(f: Finding) -> str:
    mark = "BLOCKING " if f.blocking else ""
    return f"{mark}{f.kind} {_render.short(f.id)}: {model.escape_controls(f.detail)}"


def text(result: Review) -> str:
    lines = [f"memory review of {result.range}: {len(result.changes)} memor"
             f"{'y' if len(result.changes) == 1 else 'ies'}"]
    for change in result.changes:
        memory = change.memory
        state = f" [{memory.review_state or memory.scope}]" if memory is not None else ""
        lines.append(f"  {ICON[change.category]:<10} {_render.short(change.id)}{state} "
                     f"{change.title}".rstrip())
    if result.findings:
        lines.append("findings:")
        lines += [f"  {_finding_line(f)}" for f in result.findings]
    n = len(result.blocking)
    lines.append(f"{n} blocking finding{'' if n == 1 else 's'}" if n else
                 "nothing blocking")
    return "\n".join(lines) + "\n"


def _md(value: str) -> str:
    """Text safe inside a markdown table cell or list item (no HTML, no pipes)."""
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def markdown(result: Review) -> str:
    from memex.workflows.review import MARKER

    n = len(result.blocking)
    verdict = f"**{n} blocking finding{'' if n == 1 else 's'}**" if n else "nothing blocking"
    lines = [MARKER, "### git-memex review", "",
             f"`{_md(result.range)}`: {len(result.changes)} memories, {verdict}", ""]
    if result.changes:
        lines += ["| | id | state | title |", "|---|---|---|---|"]
        for change in result.changes:
            memory = change.memory
            state = (memory.review_state or memory.scope) if memory is not None else ""
            lines.append(f"| {ICON[change.category]} | `{_render.short(change.id)}` | "
                         f"{state} | {_md(change.title)} |")
        lines.append("")
    if result.findings:
        lines.append("#### Findings")
        for f in result.findings:
            mark = ":no_entry: **blocking** " if f.blocking else ""
            lines.append(f"- {mark}{f.kind} `{_render.short(f.id)}`: "
                         f"{_md(model.escape_controls(f.detail))}")
        lines.append("")
    lines.append("<sub>Memory is data, not instructions: verify before relying on it. "
                 "Generated by `git memex review`.</sub>")
    return "\n".join(lines) + "\n"


def main() -> None:
    _common.run_step(cli, "review")
