"""git-memex-show: show one memory.

`git memex show ID [--json]` runs without loading click (`fast`); anything else goes
to the click command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memex.adapters.cli import _common, _render

if TYPE_CHECKING:
    import click


def run(memory_id: str, as_json: bool = False) -> None:
    """The show step once its arguments are parsed (by click or by `fast`)."""
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
        _common.echo(_render.show_text(item))
        if links:
            _common.echo("\nlinks:")
            for x in links:
                arrow = "->" if x.direction == "out" else "<-"
                title = x.title if x.title is not None else "(not found here)"
                _common.echo(f"  {arrow} {x.relation} {_render.short(x.other)} {title}")


def fast(argv: list[str], prog: str) -> None:
    """Run `show ID [--json]` without click; return, having done nothing, for any other
    argv (click parses it)."""
    parsed = _common.plain_args(argv, {"--json": "as_json"}, {}, prog)
    if parsed is None or len(parsed[0]) != 1:
        return
    [memory_id], seen = parsed
    _common.run_plain(lambda: run(memory_id, as_json="as_json" in seen), quiet_flag=False)


def _command() -> click.Command:
    import click

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
        run(memory_id, as_json=as_json)

    return cli


def __getattr__(name: str) -> click.Command:
    return _common.lazy_cli(globals(), name, _command)


def main() -> None:
    _common.run_fast_step(fast, globals(), _command, "show")
