"""git-memex-forget: retract a memory, or delete its file with --hard."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("forget")
@click.argument("memory_id", metavar="ID")
@click.option("--hard", is_flag=True, help="Delete the file instead of retracting it.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask before --hard deletes.")
@click.option("--note", help="Why (kept in the memory's history).")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, hard: bool, yes: bool, note: str | None, as_json: bool) -> None:
    """Retract memory ID: the file stays, its status becomes `retracted` and it
    drops out of results (`git memex status ID active` restores it).

    --hard deletes the file after confirmation (--yes when stdin is not a terminal).
    """
    from memex.storage import store
    from memex.workflows import writes

    ws = _common.workspace()
    if hard:
        target = store.find(ws, memory_id)
        if not _common.confirm(f"delete {target.path}?", yes):
            _common.note("nothing deleted")
            raise SystemExit(1)
        writes.delete(ws, target.id)
        if as_json:
            _common.emit_json({"id": target.id, "deleted": True, "path": str(target.path)})
        else:
            click.echo(f"deleted {_render.short(target.id)} {target.path}")
        return
    result = writes.set_status(ws, memory_id, "retracted", note)
    for message in result.notices:
        _common.note(f"git-memex: {message}")
    if as_json:
        _common.emit_json(result.as_json())
    else:
        click.echo(f"retracted {_render.one_line(result.memory)}")


def main() -> None:
    _common.run_step(cli, "forget")
