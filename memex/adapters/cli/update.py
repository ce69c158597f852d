"""git-memex-update: edit a memory in place."""

from __future__ import annotations

import click

from memex.adapters.cli import _common
from memex.adapters.cli.capture import print_result
from memex.core import model


@click.command("update")
@click.argument("memory_id", metavar="ID")
@click.option("--body", help="New body text (`-` reads stdin).")
@click.option("--title", help="New title.")
@click.option("--tag", "tags", multiple=True, help="Add a tag (repeatable).")
@click.option("--untag", "untags", multiple=True, help="Remove a tag (repeatable).")
@click.option("--alias", "aliases", multiple=True,
              help="Add an alias: a question this memory answers, a synonym, a symptom "
                   "(repeatable; at most 8 in all).")
@click.option("--unalias", "unaliases", multiple=True, help="Remove an alias (repeatable).")
@click.option("--importance", type=_common.choice(model.IMPORTANCES))
@click.option("--confidence", type=_common.choice(model.CONFIDENCES))
@click.option("--type", "mtype", type=_common.choice(model.TYPES))
@click.option("--force", is_flag=True, help="Edit a tracked memory even while a rebase, "
              "merge, cherry-pick, revert or am is in progress.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(memory_id: str, body: str | None, title: str | None, tags: tuple[str, ...],
        untags: tuple[str, ...], aliases: tuple[str, ...], unaliases: tuple[str, ...],
        importance: str | None, confidence: str | None, mtype: str | None, force: bool,
        as_json: bool) -> None:
    """Edit memory ID in place: revision +1, updated_at now, created_at kept.

    Redaction runs again on the new text. A shared memory is edited in the working
    tree for you to commit; changing an approved one's content returns it to
    proposed; a published memory is superseded, not edited. While a rebase, merge,
    cherry-pick, revert or am is in progress a memory git tracks is not edited (their
    --abort would silently throw the edit away; the state is named); --force insists.
    Drafts and personal memories are edited whatever git is doing.
    """
    from memex.workflows import writes

    if body == "-":
        body = _common.read_stdin_text()
    request = writes.UpdateRequest(body=body, title=title, add_tags=list(tags),
                                   remove_tags=list(untags), add_aliases=list(aliases),
                                   remove_aliases=list(unaliases), importance=importance,
                                   confidence=confidence, type=mtype)
    result = writes.update(_common.workspace(), memory_id, request, force=force)
    print_result(result, as_json, verb="updated")


def main() -> None:
    _common.run_step(cli, "update")
