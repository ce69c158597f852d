"""git-memex-resolve: list or merge conflicted memory files during a merge or rebase."""

from __future__ import annotations

import sys

import click

from memex.adapters.cli import _common


@click.command("resolve")
@click.argument("memory_id", metavar="[ID]", required=False)
@click.option("--keep", metavar="SUCCESSOR", help="Two memories supersede ID: keep this one; "
              "the other becomes superseded by it.")
@click.option("--both", is_flag=True, help="Two memories supersede ID: keep both, linked "
              "contradicts for a human.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str | None, keep: str | None, both: bool, as_json: bool) -> None:
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

    Two successors (two people superseded memory ID on two branches; supersedes and
    superseded_by hold one value each) need a decision, during the merge or after it:
    --keep SUCCESSOR keeps that one: ID's superseded_by names it, and the other
    successor becomes superseded by it, its supersedes moved to related. --both keeps
    both live: ID's superseded_by is the earlier successor (by created_at, then id),
    the other's supersedes moves to related, and the two are linked contradicts both
    ways for a human to settle. Each changed file records it in review_history; the
    three files are written and staged, and verify's chain rule accepts both shapes.
    """
    from memex.workflows import resolve

    ws = _common.workspace()
    if keep is not None or both:
        if memory_id is None:
            raise click.UsageError("--keep and --both need the ID of the superseded memory")
        done = resolve.settle(ws, memory_id, keep=keep, both=both)
        if as_json:
            _common.emit_json(done.as_json())
            return
        if both:
            click.echo(f"{done.old.id} superseded by {done.kept.id}; {done.rival.id} kept "
                       f"too, linked contradicts with {done.kept.id}")
        else:
            click.echo(f"{done.old.id} superseded by {done.kept.id}; {done.rival.id} now "
                       f"superseded by {done.kept.id}")
        _common.note("staged the three files; commit when ready")
        return
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
