"""git-memex-list: list this project's and your personal memories."""

from __future__ import annotations

from typing import Any

import click

from memex.adapters.cli import _common, _render


@click.command("list")
@click.option("--scope", "scopes", multiple=True,
              type=click.Choice(["personal", "project", "org"]),
              help="Only these scopes (repeatable; default all visible here).")
@click.option("--include", type=click.Choice(["all"]),
              help="all: also superseded, retracted, archived, rejected and expired ones.")
@click.option("--as-of", "as_of", help="What was known and believed at TIME (RFC 3339).")
@click.option("--from-git", "from_git", is_flag=True,
              help="With --as-of: read the memory folder as git held it then.")
@click.option("--limit", type=click.IntRange(min=1), metavar="N",
              help="Only the newest N (the rest are counted on stderr).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(scopes: tuple[str, ...], include: str | None, as_of: str | None, from_git: bool,
        limit: int | None, as_json: bool) -> None:
    """List memories, newest first: this project's (outbox drafts and the repo's own)
    and your personal ones; never another project's.

    On a terminal a long listing goes through git's pager (core.pager), as git's own
    listings do. The STATE column shows the review state ([draft], [proposed], [approved],
    [published], [rejected]) or [personal].

    --as-of TIME applies the as-of rules (created by TIME, not retired by it, valid
    then) to today's files. With --from-git the repo's memory folder is read as of
    the last commit on HEAD's first-parent line committed at or before TIME (a date
    alone means the end of that day, UTC), through a temporary index that leaves the
    working tree and its cache alone: what the team knew then, even after files were
    rewritten since. Personal memories and drafts have no history and are read as now.
    """
    from memex.workflows import asof

    ws = _common.read_workspace()
    if not from_git:
        _list(ws, scopes, include, _common.time_value(as_of, "--as-of"), as_json, limit)
        return
    if not as_of:
        raise click.UsageError("--from-git needs --as-of DATE")
    with asof.from_git(ws, as_of) as past:
        _common.note(f"as of {past.moment}: the memory folder at commit {past.commit[:10]}")
        _list(past.ws, scopes, include, past.moment, as_json, limit)


def _list(ws: Any, scopes: tuple[str, ...], include: str | None, moment: str | None,
          as_json: bool, limit: int | None = None) -> None:
    from memex.core import gcpause
    from memex.workflows import reads

    if as_json:  # streamed: one page of rows in memory, whatever the store's size
        items, view = reads.each_listed(ws, scopes or None, include_all=include == "all",
                                        as_of=moment, limit=limit)
        _report(view)
        with gcpause.paused():  # a row's tuples make no cycles; thousands of them
            _common.emit_json_elements(items)
        return
    if limit is None:  # two passes over narrow rows: the widths, then the lines
        rows, view = reads.briefs(ws, scopes or None, include_all=include == "all",
                                  as_of=moment)
        _report(view)
        laid = _render.Table(_render.LIST_HEADERS)
        with rows:  # both passes read one snapshot of the index
            total = laid.measure(_render.list_row(*row) for got in rows.pages(log=True)
                                 for row in got)
            if total:
                _common.page_pieces(laid.lines(_render.list_row(*row)
                                               for got in rows.pages() for row in got))
        if not total:
            _empty(ws, scopes, include, moment)
        return
    # only the rows shown are read whole: the rest are counted
    page, total, view = reads.newest_page(ws, limit, scopes or None,
                                          include_all=include == "all", as_of=moment)
    _report(view)
    if not total:
        _empty(ws, scopes, include, moment)
        return
    if len(page) < total:
        _common.note(f"the newest {len(page)} of {total} shown (--limit)")
    _common.page(_render.table(_render.memory_rows(page), _render.LIST_HEADERS))


def _empty(ws: Any, scopes: tuple[str, ...], include: str | None, moment: str | None
           ) -> None:
    """The note of an empty listing: no memory at all, or a filter hid them."""
    from memex.workflows import reads

    everything = not scopes and include == "all" and moment is None
    if everything or not reads.count(ws, include_all=True):
        _common.note("no memories yet; add one with: git memex capture \"TEXT\"")
    else:
        _common.note("no memories match (--include all also shows retired and expired "
                     "ones)" if include != "all" else "no memories match")


def _report(view: Any) -> None:
    _common.report_quarantine(view.quarantined)
    for warning in view.warnings:
        _common.warn(warning)


def main() -> None:
    _common.run_step(cli, "list")
