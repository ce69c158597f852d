"""git-memex-sync-status: the outbox and every in-repo memory by review state."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("sync-status")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(as_json: bool) -> None:
    """Show where this project's memories stand in the team flow: the drafts waiting
    in your outbox (project and org), every memory in the repo's memory folder
    grouped by review state (proposed, approved, published, rejected), memory files
    with uncommitted changes, how far the branch is ahead of or behind its upstream
    (as of the last fetch), and when the last pull was. It reads only; nothing is
    fetched.
    """
    from memex.workflows import team

    status = team.sync_status(_common.workspace())
    _common.report_quarantine(status.quarantined)
    if as_json:
        _common.emit_json(status.as_json())
        return
    click.echo(f"outbox: {len(status.outbox)} draft(s)")
    if status.outbox:
        click.echo(_render.table(_render.memory_rows(status.outbox), _render.LIST_HEADERS))
    for state, items in status.by_state.items():
        if not items and state == "none":
            continue
        click.echo(f"\n{state}: {len(items)}")
        if items:
            click.echo(_render.table(_render.memory_rows(items), _render.LIST_HEADERS))
    if status.uncommitted:
        click.echo("\nuncommitted memory files:")
        for path in status.uncommitted:
            click.echo(f"  {path}")
    click.echo("")
    if status.branch:
        line = f"branch {status.branch}"
        if status.upstream:
            line += f" -> {status.upstream}: {status.ahead} ahead, {status.behind} behind"
        else:
            line += " (no upstream)"
        click.echo(line)
    click.echo(f"last pull: {status.last_fetch or 'never (or not recorded)'}"
               + ("  (stale: git memex pull)" if status.stale else ""))


def main() -> None:
    _common.run_step(cli, "sync-status")
