"""git-memex-resolve: list or merge conflicted memory files during a merge or rebase."""

from __future__ import annotations

import sys

import click

from memex.adapters.cli import _common


@click.command("resolve")
@click.argument("memory_id", metavar="[ID]", required=False)
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str | None, as_json: bool) -> None:
    """During a conflicted merge, rebase or cherry-pick: with no ID, list the
    conflicted memory files (from the index's conflict stages) and what is in
    conflict in each. Conflicted files outside the memory folder are counted and
    left to git.

    With ID (a unique prefix is enough), merge that memory field by field from the
    stages (base, ours, theirs): when clean, write the file and stage it (git add);
    otherwise write it with conflict markers around each undecided field and in the
    body, and print what a human must decide. A contradiction is reported, never
    decided. A file you already resolved by hand (it parses and holds no conflict
    marker) is your decision: it is staged as it is, never overwritten. During a
    rebase the sides are named for people: "upstream" is HEAD, the branch being
    rebased onto (git's "ours"), and "yours" is the commit being replayed (git's
    "theirs"). Exit 0 when listed, resolved or staged, 1 when a decision is left to
    you.
    """
    from memex.workflows import resolve

    ws = _common.workspace()
    if memory_id is None:
        listing = resolve.listing(ws)
        if as_json:
            _common.emit_json(listing.as_json())
            return
        if not listing.memories:
            click.echo("no conflicted memory files")
        for item in listing.memories:
            state = "merges cleanly (git memex resolve ID stages it)" if item.clean else \
                "needs a decision"
            click.echo(f"{item.path}: {state}")
            for line in item.decisions():
                click.echo(f"  - {line}")
        if listing.others:
            _common.note(f"{len(listing.others)} other conflicted file(s) left to git: "
                         + ", ".join(listing.others[:5]))
        return
    outcome = resolve.resolve(ws, memory_id)
    if as_json:
        _common.emit_json(outcome.as_json())
    else:
        for message in outcome.messages:
            click.echo(message)
        decisions = outcome.decisions
        if decisions:
            click.echo("a human must decide:")
            for line in decisions:
                click.echo(f"  - {line}")
        for notice in outcome.item.result.notices if outcome.item.result else []:
            _common.note(f"git-memex: {notice}")
    sys.exit(0 if outcome.staged else 1)


def main() -> None:
    _common.run_step(cli, "resolve")
