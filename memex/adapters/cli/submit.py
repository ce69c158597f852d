"""git-memex-submit: move outbox drafts into the repo in one local commit."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("submit")
@click.argument("ids", nargs=-1, metavar="ID...")
@click.option("--all", "all_drafts", is_flag=True, help="Every draft in the outbox.")
@click.option("--org", is_flag=True, help="Submit org drafts to the org memory repo "
              "(memex.orgRepo) instead.")
@click.option("-m", "--message", help="The commit message (default: one line per memory).")
@click.option("--yes", "retire_approved", is_flag=True, help="Let an unreviewed draft (an "
              "agent's) retire the person-approved memory it supersedes.")
@click.option("--branch", "new_branch", is_flag=True,
              help="Make a new branch for the PR first (named by memex.branchPattern, "
                   "default memex/{user}/{date}) and stay on it.")
@click.option("--branch-name", metavar="NAME", help="Make the new branch NAME first.")
@click.option("--force", is_flag=True, help="Commit even while a rebase, merge, cherry-pick, "
              "revert or am is in progress.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(ids: tuple[str, ...], all_drafts: bool, org: bool, message: str | None,
        new_branch: bool, branch_name: str | None, force: bool, retire_approved: bool,
        as_json: bool) -> None:
    """Move the outbox drafts ID... (or --all) into the repo's memory folder as
    `proposed`, stamping `proposed_by` and a `review_history` entry, then make one
    local commit on the current branch holding only those memory files (and any
    shared memory they supersede, now retired). The commit runs through git, so your
    hooks, signing and identity apply, and whatever else you have staged stays staged
    and out of the commit.

    It never pushes: it prints the push and PR commands.

    A pull request needs a branch: --branch makes one first, as `git switch -c` does,
    commits there and stays on it; its name comes from the committed .memexconfig key
    memex.branchPattern (default memex/{user}/{date}: {user} is your identity without
    its namespace, made ref-safe, {date} today in UTC; a taken name gets -2, -3), or
    give it with --branch-name NAME. The branch records where it started
    (git config branch.<name>.memexBase), which pr-status uses to find the branch's own
    commits. Nothing makes a branch without these flags; submitting onto the remote's
    default branch goes ahead with a notice showing the --branch form.

    All or nothing: if an id already exists in the repo with other content, or the
    commit fails (a hook refuses, detached HEAD), every file is put back, a branch made
    for it is deleted (you are back where you were) and the outbox is untouched. While a
    rebase, merge, cherry-pick, revert or am is in progress it refuses, naming the state
    (their --abort would silently drop the commit); --force insists. Drafts made with
    `propose --local-approve` land approved. Personal memories can never be submitted. A
    supersede chain travels whole: a draft that supersedes (or is superseded by) another
    outbox draft is refused unless both are named, and the message prints the command
    that names the chain. --all takes every live draft (active or deprecated) with the
    superseded drafts behind it and reports what it left in the outbox. A draft nobody
    reviewed (trust_level untrusted, such as an agent's memory_supersede) that would retire
    a memory a person approved stops the submit, naming both, until you give --yes.
    """
    from memex.workflows import team

    result = team.submit(_common.workspace(), list(ids), all_drafts=all_drafts,
                         scope="org" if org else "project", message=message,
                         new_branch=new_branch, new_branch_name=branch_name, force=force,
                         retire_approved=retire_approved)
    for notice in result.notices:
        _common.note(f"git-memex: {notice}")
    if as_json:
        _common.emit_json(result.as_json())
        return
    for item in result.submitted:
        _common.say(f"submitted {_render.one_line(item.memory)}")
    for item in result.retired:
        click.echo(f"retired {_render.short(item.id)} (superseded by "
                   f"{_render.short(item.memory.superseded_by or '')})")
    if result.commit:
        click.echo(f"commit {result.commit[:10]} on {result.branch}")
    for hint in result.hints:
        _common.note(f"next: {hint}")


def main() -> None:
    _common.run_step(cli, "submit")
