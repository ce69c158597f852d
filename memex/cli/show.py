"""git-memex-show: show one memory."""

from __future__ import annotations

import click

from memex.cli import _common, _render


@click.command("show")
@click.argument("memory_id", metavar="ID")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, as_json: bool) -> None:
    """Show the memory ID (a unique prefix is enough, as with git hashes).

    With --json: every front-matter field, plus body, path and summary.
    """
    from memex import reads, usage

    ws = _common.read_workspace()
    item, warnings = reads.show(ws, memory_id)
    usage.record(ws.home, ws.repo_id, "read", [item.id])
    for warning in warnings:
        _common.warn(warning)
    if as_json:
        _common.emit_json(reads.as_json(item))
    else:
        click.echo(_render.show_text(item))


def main() -> None:
    _common.run_step(cli, "show")
