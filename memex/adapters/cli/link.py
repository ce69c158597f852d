"""git-memex-link: link two memories (extends, contradicts, related)."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("link")
@click.argument("source", metavar="A")
@click.argument("relation", metavar="REL",
                type=click.Choice(["extends", "contradicts", "related"]))
@click.argument("target", metavar="B")
@click.option("--remove", is_flag=True, help="Remove the link instead of adding it.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(source: str, relation: str, target: str, remove: bool, as_json: bool) -> None:
    """Record that memory A extends, contradicts or is related to memory B.

    The link is written into A's file (for a shared memory: in the working tree, for
    you to commit); `git memex show` lists links both ways. `contradicts` is how a
    person acknowledges a contradiction: both memories stay active and
    `git memex conflicts` lists the pair as acknowledged; `related` or `extends`
    says the two agree, and the pair is no longer reported. A shared memory links
    only to memories in its own folder (the repo's, or the org repo's): never to a
    personal memory or an outbox draft, which teammates cannot see. --remove drops
    the link again.
    """
    from memex.workflows import relations

    result = relations.link(_common.workspace(), source, relation, target, remove=remove)
    for message in result.notices:
        _common.note(f"git-memex: {message}")
    if as_json:
        _common.emit_json(result.as_json())
        return
    if result.changed:
        verb = "unlinked" if remove else "linked"
        click.echo(f"{verb} {result.source.id[:10]} {relation} {result.target[:10]}")


def main() -> None:
    _common.run_step(cli, "link")
