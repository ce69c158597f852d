"""git-memex-unpin: clear a memory's keep mark."""

from __future__ import annotations

import click

from memex.adapters.cli import _common
from memex.adapters.cli.pin import run


@click.command("unpin")
@click.argument("memory_id", metavar="ID")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, as_json: bool) -> None:
    """Clear memory ID's `pinned` mark, so it decays and may be offered by
    `git memex clean` like any other memory.
    """
    run(memory_id, False, as_json)


def main() -> None:
    _common.run_step(cli, "unpin")
