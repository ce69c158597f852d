"""git-memex-show: show one memory."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("show")
@click.argument("memory_id", metavar="ID")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, as_json: bool) -> None:
    """Show the memory ID (a unique prefix is enough, as with git hashes).

    With --json: every front-matter field, plus body, path and summary. On a terminal
    the memory goes through git's pager (core.pager), as `git show` does.
    """
    from memex.workflows import reads, relations

    ws = _common.read_workspace()
    item, warnings = reads.show(ws, memory_id)
    links = relations.links(ws, item.memory)
    for warning in warnings:
        _common.warn(warning)
    if as_json:
        data = reads.as_json(item)
        data["links"] = [{"relation": x.relation, "direction": x.direction, "id": x.other,
                          "title": x.title} for x in links]
        _common.emit_json(data)
        return
    with _common.paged():
        click.echo(_render.show_text(item))
        if links:
            click.echo("\nlinks:")
            for x in links:
                arrow = "->" if x.direction == "out" else "<-"
                title = x.title if x.title is not None else "(not found here)"
                click.echo(f"  {arrow} {x.relation} {_render.short(x.other)} {title}")


def main() -> None:
    _common.run_step(cli, "show")
