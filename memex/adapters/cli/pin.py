"""git-memex-pin: keep a memory (pinned: true), whatever its decay."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


def run(memory_id: str, pinned: bool, as_json: bool) -> None:
    from memex.workflows import relations

    result = relations.set_pinned(_common.workspace(), memory_id, pinned)
    for message in result.notices:
        _common.note(f"git-memex: {message}")
    if as_json:
        data = result.as_json()
        data["pinned"] = result.memory.pinned
        _common.emit_json(data)
    else:
        click.echo(f"{'pinned' if pinned else 'unpinned'} {_render.one_line(result.memory)}")


@click.command("pin")
@click.argument("memory_id", metavar="ID")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, as_json: bool) -> None:
    """Mark memory ID as one to keep: `pinned: true` in its front matter.

    A pinned memory decays slowly (its retention never falls below one half) and
    `git memex clean` never offers it. The mark is a person's decision, so it lives
    in the file (for a shared memory: in the working tree, for you to commit);
    access statistics never do. `git memex unpin ID` clears it.
    """
    run(memory_id, True, as_json)


def main() -> None:
    _common.run_step(cli, "pin")
