"""git-memex-conflicts: list live memories that may contradict each other."""

from __future__ import annotations

import sys

import click

from memex.adapters.cli import _common


@click.command("conflicts")
@click.option("--check", is_flag=True, help="Exit 1 when any open contradiction is found.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(check: bool, as_json: bool) -> None:
    """List pairs of live memories (this project's and your personal ones) that share a
    tag or overlapping paths and say opposite things: one negates the other, they
    use opposite words (enable/disable), give different values for one subject
    (node 18 / node 20), or pick different tools for one job (pnpm / npm). Each pair
    says which rule fired and on which words.

    Nothing is changed: both memories stay active and a person decides, with
    `git memex supersede`, `git memex link A contradicts B` (acknowledged: still
    listed, no longer failing --check), or `git memex link A related B` (they
    agree: no longer listed). With --check the exit status is 1 when an open
    (unacknowledged) contradiction exists, for hooks and CI.
    """
    from memex.workflows import conflicts, reads

    ws = _common.workspace()
    view = reads.load_view(ws)
    _common.report_quarantine(view.quarantined)
    found = conflicts.find(i.memory for i in view.items)
    titles = {i.id: i.memory.title or i.memory.summary for i in view.items}
    open_count = sum(1 for c in found if not c.acknowledged)
    if as_json:
        _common.emit_json([dict(c.as_json(), a_title=titles.get(c.a), b_title=titles.get(c.b))
                           for c in found])
    elif not found:
        _common.note("no contradictions found")
    else:
        for c in found:
            state = "acknowledged" if c.acknowledged else "open"
            click.echo(f"{c.a[:10]} <> {c.b[:10]}  [{state}]")
            click.echo(f"  A: {titles.get(c.a, '')}")
            click.echo(f"  B: {titles.get(c.b, '')}")
            for reason in c.reasons:
                click.echo(f"  {reason.rule}: {reason.detail}")
        _common.note(f"{open_count} open, {len(found) - open_count} acknowledged; decide with "
                     "git memex supersede A TEXT, link A contradicts B, or link A related B")
    if check and open_count:
        sys.exit(1)


def main() -> None:
    _common.run_step(cli, "conflicts")
