"""The click group behind `git-memex`: `git memex <step>` runs the step's command.

Steps are imported only when run, so `git-memex --help` stays fast. main.py's `main` is
the executable; it hands a step with a fast path its plain argv before loading click.
"""

from __future__ import annotations

import importlib

import click

from memex.adapters.cli import _common
from memex.adapters.cli.registry import STEPS


class Dispatcher(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(STEPS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = STEPS.get(cmd_name)
        if entry is None:
            return None
        from memex.adapters.cli import examples

        module = importlib.import_module(entry[0])
        command: click.Command = examples.attach(module.cli, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name, (_, summary) in STEPS.items()]
        with formatter.section("Steps"):
            formatter.write_dl(rows)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and name not in STEPS and not name.startswith("-"):
            import difflib

            near = difflib.get_close_matches(name, list(STEPS), n=1, cutoff=0.6)
            hint = (f"did you mean {near[0]}?" if near
                    else "the steps are: " + ", ".join(STEPS))
            from memex.core import redact  # a secret typed as a step is not echoed

            click.echo(f"git-memex: {redact.quoted(name)} is not a git-memex step; {hint}",
                       err=True)
            ctx.exit(2)
        return super().resolve_command(ctx, args)


@click.group(cls=Dispatcher, context_settings={"help_option_names": ["-h", "--help"]})
@_common.version_option
@click.option(_common.DEBUG_FLAG, is_flag=True, expose_value=False,
              help=f"On an internal error (exit 3), print the traceback; also "
                   f"{_common.DEBUG_ENV}=1. Any step takes it.")
def cli() -> None:
    """git-memex: a local-first, git-native memory layer for AI coding agents.

    Memories are Markdown files: personal ones stay on this machine, project ones
    start as drafts and travel through the team by git. Run `git memex <step> --help`
    for a step's manual.
    """
