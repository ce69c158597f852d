"""git-memex-diff: a memory-level diff of a range, the index or the working tree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memex.adapters.cli import _common, _render
from memex.core import model

if TYPE_CHECKING:
    from memex.workflows.memdiff import Change, MemoryDiff

MARK = {"new": "+", "deleted": "-", "superseded": "-", "retired": "-", "changed": "~",
        "unreadable": "!"}


@click.command("diff")
@click.argument("rev_range", metavar="[RANGE]", required=False)
@click.option("--staged", "--cached", "staged", is_flag=True,
              help="Compare the index (what the next commit holds) with HEAD or RANGE.")
@click.option("--exit-code", "exit_code", is_flag=True,
              help="Exit 1 when any memory differs, 0 when none does (like git diff).")
@click.option("--textconv", "textconv", metavar="FILE", type=click.Path(dir_okay=False),
              help="Print FILE as people read it (git's diff.memex.textconv, set by init).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(rev_range: str | None, staged: bool, exit_code: bool, textconv: str | None,
        as_json: bool) -> None:
    """Show what a range of commits did to memories, one memory at a time: memories
    added, retired (with the successor of their supersede chain), fields changed
    (old -> new), review and instruction moves (with who made them) and the body as
    a text diff. RANGE is `A..B`, `A...B` (from their merge base, as a PR shows it)
    or one commit (against the working tree); with no RANGE the working tree is
    compared with HEAD, and --staged compares the index instead. New memory files
    not yet added count as added.

    --exit-code exits 1 when a memory differs (0 otherwise), for scripts;
    --json prints every change with its fields, events and body diff. On a terminal
    the diff goes through git's pager (core.pager), as `git diff` does.

    `git memex init` registers this step's --textconv as the clone's
    `diff.memex.textconv` (and `.gitattributes` names `diff=memex`), so plain
    `git diff`, `git log -p` and `git show` print memory files in a readable form.
    """
    from memex.core.errors import InvalidMemory, MemexError
    from memex.workflows import memdiff

    if textconv is not None:
        from memex.storage import store

        data = Path(textconv).read_bytes()
        try:
            click.echo(memdiff.readable(store.decode(data)), nl=False)
        except InvalidMemory:  # binary or not UTF-8: git shows it as it is
            click.echo(data, nl=False)
        return

    ws = _common.workspace()
    if ws.repo is None:
        raise MemexError("not inside a git repository: diff compares memory files in git")
    rng = memdiff.parse_range(ws.repo.toplevel, rev_range, staged)
    result = memdiff.diff(ws.repo.toplevel, ws.memory_dir_name, rng)
    if as_json:
        _common.emit_json(result.as_json())
    else:
        with _common.paged():
            print_diff(result)
    if exit_code and result.changes:
        sys.exit(1)


def print_diff(result: MemoryDiff) -> None:
    if not result.changes:
        _common.note(f"no memory changed ({result.range.label})")
        return
    n = len(result.changes)
    _common.note(f"{n} memor{'y' if n == 1 else 'ies'} changed ({result.range.label})")
    for change in result.changes:
        _print_change(change)


def _print_change(change: Change) -> None:
    memory = change.memory
    state = f" [{memory.review_state or memory.scope}]" if memory is not None else ""
    click.echo(f"{MARK[change.category]} {_render.short(change.id)}{state} "
               f"{change.category}: {change.title}".rstrip())
    if change.unreadable:
        click.echo(f"    unreadable: {model.escape_controls(change.unreadable)}")
    for event in change.events:
        click.echo(f"    {model.escape_controls(event)}")
    for f in change.fields:
        if f.name in ("revision", "updated_at", "review_state", "instruction_state",
                      "status"):
            continue  # the events say these, or they move on every edit
        click.echo(f"    {model.escape_controls(f.name)}: {_value(f.old)} -> {_value(f.new)}")
    if change.body_diff and change.kind == "modified":
        click.echo("    body:")
        for line in change.body_diff:
            click.echo(f"      {model.escape_text(line)}")


def _value(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, list):
        return model.escape_controls("[" + ", ".join(str(v) for v in value) + "]")
    text = model.escape_controls(str(value))
    return text if len(text) <= 80 else text[:79] + "\u2026"


def main() -> None:
    _common.run_step(cli, "diff")
