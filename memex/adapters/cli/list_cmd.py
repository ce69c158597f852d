"""git-memex-list: list this project's and your personal memories."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("list")
@click.option("--scope", "scopes", multiple=True,
              type=click.Choice(["personal", "project", "org"]),
              help="Only these scopes (repeatable; default all visible here).")
@click.option("--include", type=click.Choice(["all"]),
              help="all: also superseded, retracted, archived, rejected and expired ones.")
@click.option("--as-of", "as_of", help="What was known and believed at TIME (RFC 3339).")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(scopes: tuple[str, ...], include: str | None, as_of: str | None, as_json: bool) -> None:
    """List memories, newest first: this project's (outbox drafts and the repo's own)
    and your personal ones; never another project's.

    The STATE column shows the review state ([draft], [proposed], [approved],
    [published], [rejected]) or [personal].
    """
    from memex.storage import usage
    from memex.workflows import reads

    moment = _common.time_value(as_of, "--as-of")
    ws = _common.read_workspace()
    view = reads.load_view(ws, scopes or None, include_all=include == "all", as_of=moment)
    usage.record_in(ws, "list", [i.id for i in view.items])
    _common.report_quarantine(view.quarantined)
    for warning in view.warnings:
        _common.warn(warning)
    if as_json:
        _common.emit_json([reads.as_json(i) for i in view.items])
        return
    if not view.items:
        everything = not scopes and include == "all" and moment is None
        if everything or not reads.load_view(ws, include_all=True).items:
            _common.note("no memories yet; add one with: git memex capture \"TEXT\"")
        else:
            _common.note("no memories match (--include all also shows retired and expired "
                         "ones)" if include != "all" else "no memories match")
        return
    click.echo(_render.table(_render.memory_rows(view.items), _render.LIST_HEADERS))


def main() -> None:
    _common.run_step(cli, "list")
