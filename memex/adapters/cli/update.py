"""git-memex-update: edit a memory in place.

`git memex update ID` with its plain options (_FLAGS, _OPTIONS) runs without loading
click (`fast`); anything else (`--body -`, help) goes to the click command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memex.adapters.cli import _common
from memex.adapters.cli.capture import print_result
from memex.core import model

if TYPE_CHECKING:
    import click


def run(memory_id: str, body: str | None, title: str | None, tags: tuple[str, ...],
        untags: tuple[str, ...], aliases: tuple[str, ...], unaliases: tuple[str, ...],
        importance: str | None, confidence: str | None, mtype: str | None, force: bool,
        as_json: bool) -> None:
    """The update step once its arguments are parsed (by click or by `fast`)."""
    from memex.workflows import writes

    if body == "-":
        body = _common.read_stdin_text()
    request = writes.UpdateRequest(body=body, title=title, add_tags=list(tags),
                                   remove_tags=list(untags), add_aliases=list(aliases),
                                   remove_aliases=list(unaliases), importance=importance,
                                   confidence=confidence, type=mtype)
    result = writes.update(_common.workspace(), memory_id, request, force=force)
    print_result(result, as_json, verb="updated")


# The plain forms `fast` runs, as click's command has them; a converter refuses (None)
# what click's would (a choice not in its list).
_FLAGS = {"--json": "as_json", "--force": "force"}
_OPTIONS: dict[str, tuple[str, _common.Convert]] = {
    "--body": ("body", str), "--title": ("title", str), "--tag": ("tags", str),
    "--untag": ("untags", str), "--alias": ("aliases", str),
    "--unalias": ("unaliases", str),
    "--importance": ("importance", _common.plain_choice(model.IMPORTANCES)),
    "--confidence": ("confidence", _common.plain_choice(model.CONFIDENCES)),
    "--type": ("mtype", _common.plain_choice(model.TYPES)),
}


def fast(argv: list[str], prog: str) -> None:
    """Run `update ID` with plain options without click; return, having done nothing,
    for any other argv (click parses it)."""
    parsed = _common.plain_args(argv, _FLAGS, _OPTIONS, prog)
    if parsed is None or len(parsed[0]) != 1:
        return
    [memory_id], seen = parsed

    def last(name: str) -> str | None:
        return str(seen[name][-1]) if name in seen else None

    def many(name: str) -> tuple[str, ...]:
        return tuple(str(v) for v in seen.get(name, ()))

    _common.run_plain(lambda: run(
        memory_id, last("body"), last("title"), many("tags"), many("untags"),
        many("aliases"), many("unaliases"), last("importance"), last("confidence"),
        last("mtype"), "force" in seen, "as_json" in seen), quiet_flag=False)


def _command() -> click.Command:
    import click

    @click.command("update")
    @click.argument("memory_id", metavar="ID")
    @click.option("--body", help="New body text (`-` reads stdin).")
    @click.option("--title", help="New title.")
    @click.option("--tag", "tags", multiple=True, help="Add a tag (repeatable).")
    @click.option("--untag", "untags", multiple=True, help="Remove a tag (repeatable).")
    @click.option("--alias", "aliases", multiple=True,
                  help="Add an alias: a question this memory answers, a synonym, a symptom "
                       "(repeatable; at most 8 in all).")
    @click.option("--unalias", "unaliases", multiple=True,
                  help="Remove an alias (repeatable).")
    @click.option("--importance", type=click.Choice(model.IMPORTANCES))
    @click.option("--confidence", type=click.Choice(model.CONFIDENCES))
    @click.option("--type", "mtype", type=click.Choice(model.TYPES))
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
        run(memory_id, body, title, tags, untags, aliases, unaliases, importance,
            confidence, mtype, force, as_json)

    return cli


def __getattr__(name: str) -> click.Command:
    return _common.lazy_cli(globals(), name, _command)


def main() -> None:
    _common.run_fast_step(fast, globals(), _command, "update")
