"""git-memex-log: one memory's history across commits."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render
from memex.core import model


@click.command("log")
@click.argument("memory_id", metavar="ID")
@click.option("--rev", default="HEAD", show_default=True,
              help="Walk the history of this commit instead of HEAD.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, rev: str, as_json: bool) -> None:
    """Show the history of the memory ID (a unique prefix is enough), newest first,
    from git: every commit that touched its file (followed across renames), with the
    commit's author and date, the fields that changed (old -> new), and the submit,
    promote, instruction, status and supersede moves with the review_history `by`
    that recorded each (who approved may differ from who committed). --json prints
    every entry with its fields, events and history entries. On a terminal the history
    goes through git's pager (core.pager), as `git log` does.
    """
    from memex.workflows import memlog

    ws = _common.workspace()
    result = memlog.memory_log(ws, memory_id, rev)
    if as_json:
        _common.emit_json(result.as_json())
        return
    with _common.paged():
        click.echo(f"memory {result.id} ({result.path}): {len(result.entries)} commit(s)")
        for entry in result.entries:
            click.echo(model.escape_controls(
                f"{entry.commit[:10]} {entry.date} {entry.author} <{entry.email}>  "
                f"{entry.subject}"))
            change = entry.change
            if change is None:
                click.echo("    (file unchanged)")
                continue
            if change.kind == "added":
                memory = change.new
                title = model.escape_controls(memory.title) if memory is not None else ""
                click.echo(f"    created: {_render.short(result.id)} {title}".rstrip())
            for event in change.events:
                click.echo(f"    {model.escape_controls(event)}")
            for f in change.fields:
                if f.name in ("revision", "updated_at", "review_state", "instruction_state",
                              "status") or change.kind != "modified":
                    continue
                click.echo(f"    {model.escape_controls(f.name)}: "
                           f"{_short(f.old)} -> {_short(f.new)}")
            for h in change.history:
                note = f" ({h['note']})" if h.get("note") else ""
                click.echo(model.escape_controls(
                    f"    history: {h.get('at', '?')} {h.get('by', '?')} "
                    f"{h.get('from', '?')} -> {h.get('to', '?')}{note}"))
            if change.body_diff and change.kind == "modified":
                click.echo(f"    body changed ({len(change.body_diff)} diff lines)")


def _short(value: object) -> str:
    if value is None:
        return "(none)"
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    text = model.escape_controls(text)
    return text if len(text) <= 60 else text[:59] + "\u2026"


def main() -> None:
    _common.run_step(cli, "log")
