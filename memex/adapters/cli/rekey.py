"""git-memex-rekey: move outbox drafts left under an old repo_id into this repo's outbox."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("rekey")
@click.option("--from", "from_id", metavar="OLD_ID", help="The repo_id whose outbox to "
              "move (as `git memex doctor` prints it); default: the one old id of this "
              "clone that holds drafts.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask (needed without a terminal).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(from_id: str | None, yes: bool, as_json: bool) -> None:
    """Move the drafts waiting in the outbox of an earlier repo_id into this
    repository's outbox. Drafts are kept per project, under a repo_id derived from
    the origin URL (or from the repository's path when there is no origin), so
    changing origin, or adding the first one, leaves them under the old id, where no
    command sees them; `git memex doctor` says so and prints this command.

    Each clone remembers the ids it has had (in the git directory); without --from
    the one old id that holds drafts is used. Each draft's `repo_id` field is
    rewritten (a hand-edited file keeps its comments) and the old copy removed. A
    draft found in both outboxes with different content stops everything before
    anything moves. Asks first on a terminal; --yes otherwise.
    """
    from memex.workflows import rekey

    ws = _common.workspace()
    todo = rekey.plan(ws, from_id)
    count = len(todo.moves) + len(todo.duplicates)
    question = (f"move {count} draft(s) from the outbox of {todo.source.describe()} "
                f"into this repo's outbox ({todo.repo_id})?")
    if not _common.confirm(question, yes):
        _common.note("nothing moved")
        raise SystemExit(1)
    rekey.apply(ws, todo)
    for item in todo.quarantined:
        _common.warn(f"left unreadable draft {item.path}: {item.reason}")
    if as_json:
        _common.emit_json(todo.as_json())
        return
    click.echo(f"moved {len(todo.moves)} draft(s) into {todo.target}"
               + (f" ({len(todo.duplicates)} were already there)" if todo.duplicates else ""))


def main() -> None:
    _common.run_step(cli, "rekey")
