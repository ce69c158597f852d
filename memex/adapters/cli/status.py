"""git-memex-status: deprecate, archive or restore a memory."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("status")
@click.argument("memory_id", metavar="ID")
@click.argument("status", type=click.Choice(["active", "deprecated", "archived", "retracted"]))
@click.option("--note", help="Why (kept in the memory's history).")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, status: str, note: str | None, as_json: bool) -> None:
    """Set memory ID's status.

    deprecated: still found, flagged and ranked low. archived / retracted: out of
    results. active: restores a deprecated, archived or retracted memory. Every
    change is appended to the file's status_history.
    """
    from memex.workflows import writes

    result = writes.set_status(_common.workspace(), memory_id, status, note)
    for message in result.notices:
        _common.note(f"git-memex: {message}")
    if as_json:
        _common.emit_json(result.as_json())
    else:
        click.echo(f"{status} {_render.one_line(result.memory)}")


def main() -> None:
    _common.run_step(cli, "status")
