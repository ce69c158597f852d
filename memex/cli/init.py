"""git-memex-init: set up git-memex in this repository."""

from __future__ import annotations

import click

from memex.cli import _common


@click.command("init")
@click.option("--dir", "dir_name", help="The memory folder (default .memex, or what "
              ".memexconfig already says).")
@click.option("--yes", "-y", is_flag=True, help="Take the defaults without asking.")
@click.option("--git-hooks", is_flag=True, help="Also install git-memex's plain git hooks: "
              "pre-commit secret scan, post-merge / post-checkout index refresh.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(dir_name: str | None, yes: bool, git_hooks: bool, as_json: bool) -> None:
    """Set up this repository: the shared memory folder and the committed
    .memexconfig that names it for the team. Asks on a terminal (never when stdin
    is not one); --yes takes the defaults. Running it again changes nothing.

    It also adds `<folder>/*.md merge=memex` to .gitattributes (commit it) and sets
    merge.memex.name and merge.memex.driver in this clone's git config, so that git
    merges memory files field by field (git config is per clone: each teammate runs
    init once; `git memex doctor` warns when it is missing). --git-hooks installs the
    plain git hooks from hooks/ (a hook that is not git-memex's is left alone).
    """
    from memex import setup

    ws = _common.workspace()
    if dir_name is None and not yes and _common.stdin_is_tty() and ws.repo is not None:
        dir_name = click.prompt("Memory folder", default=ws.memory_dir_name)
    result = setup.init_repo(ws, dir_name, git_hooks=git_hooks)
    if as_json:
        _common.emit_json({"changed": result.changed, "unchanged": result.unchanged,
                           "warnings": result.warnings})
        return
    for line in result.warnings:
        _common.warn(line)
    for line in result.changed:
        click.echo(line)
    if not result.changed:
        click.echo("already set up; nothing changed")
    else:
        click.echo("commit .memexconfig, .gitattributes and the folder when ready")


def main() -> None:
    _common.run_step(cli, "init")
