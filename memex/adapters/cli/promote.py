"""git-memex-promote: move a shared memory along the review state machine."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("promote")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("--to", "to", type=click.Choice(["approved", "published"]),
              help="The state to move to (default: the next one).")
@click.option("--reject", is_flag=True, help="Reject (from proposed or approved); needs --note.")
@click.option("--resubmit", is_flag=True, help="Put a rejected memory up for review again.")
@click.option("--instruction", is_flag=True,
              help="Approve an approved memory's instruction (role: instruction).")
@click.option("--revoke", is_flag=True, help="Revoke an approved instruction.")
@click.option("--note", help="Why (kept in review_history).")
@click.option("--force", is_flag=True, help="Write even while a rebase, merge, cherry-pick, "
              "revert or am is in progress.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(ids: tuple[str, ...], to: str | None, reject: bool, resubmit: bool, instruction: bool,
        revoke: bool, note: str | None, force: bool, as_json: bool) -> None:
    """Flip the review state of the in-repo memories ID... in place: proposed ->
    approved -> published, --reject (with --note) from proposed or approved, and
    --resubmit from rejected back to proposed. Each move stamps `approved_by` when it
    approves and appends to `review_history` who (your git user.email, or
    memex.identity), when, from, to and why. A move the state machine does not allow
    is an error and nothing changes; a rejection never deletes anything.

    --instruction sets `instruction_state: approved` on an approved memory with
    `role: instruction`, so agents may take it as an instruction; --revoke takes that
    back. A personal instruction binds only its owner, so you approve or revoke your
    own with the same flags (no review state; `approved_by` is you). The files change
    in the working tree: commit the shared ones yourself (the command to do so is
    printed). While a rebase, merge, cherry-pick, revert or am is in progress it
    refuses to change tracked memory files, naming the state (their --abort would
    silently throw the change away); --force insists.
    """
    from memex.workflows import team

    ws = _common.workspace()
    notices: list[str] = []
    steps = team.promote(ws, list(ids), to=to, reject=reject, resubmit=resubmit,
                         instruction=instruction, revoke=revoke, note=note, force=force,
                         notices=notices)
    for notice in notices:
        _common.notice(f"git-memex: {notice}")
    if as_json:
        _common.emit_json([s.as_json() for s in steps])
        return
    for step in steps:
        what = "instruction " if step.what == "instruction" else ""
        click.echo(f"{what}{step.before} -> {step.after}  {_render.one_line(step.item.memory)}")
    shared = [s.item for s in steps if s.item.home.in_git]
    if not shared:
        return
    top = ws.repo.toplevel if ws.repo is not None else None
    _common.note("commit it when ready: " + team.commit_hint(
        shared, "memex: review memories", top))


def main() -> None:
    _common.run_step(cli, "promote")
