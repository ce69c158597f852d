"""git-memex-init: set up git-memex in this repository."""

from __future__ import annotations

import click

from memex.cli import _common


@click.command("init")
@click.option("--dir", "dir_name", help="The memory folder (default .memex, or what "
              ".memexconfig already says).")
@click.option("--yes", "-y", is_flag=True, help="Take the defaults without asking.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(dir_name: str | None, yes: bool, as_json: bool) -> None:
    """Set up this repository: the shared memory folder and the committed
    .memexconfig that names it for the team. Asks on a terminal (never when stdin
    is not one); --yes takes the defaults. Running it again changes nothing.
    """
    from memex import setup

    ws = _common.workspace()
    if dir_name is None and not yes and _common.stdin_is_tty() and ws.repo is not None:
        dir_name = click.prompt("Memory folder", default=ws.memory_dir_name)
    result = setup.init_repo(ws, dir_name)
    if as_json:
        _common.emit_json({"changed": result.changed, "unchanged": result.unchanged})
        return
    for line in result.changed:
        click.echo(line)
    if not result.changed:
        click.echo("already set up; nothing changed")
    else:
        click.echo("commit .memexconfig and the folder when ready")


def main() -> None:
    _common.run_step(cli, "init")
