"""git-memex-pull: fetch and fast-forward, with a receipt of the memories that came in."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("pull")
@click.argument("remote", required=False)
@click.option("--org", is_flag=True, help="Pull the org memory repo (memex.orgRepo) instead.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(remote: str | None, org: bool, as_json: bool) -> None:
    """Fetch REMOTE (default: the branch's upstream) and fast-forward the current
    branch, and nothing else: it never merges, rebases or commits. Then print a
    receipt of what came into the memory folder: new, changed, retired and removed
    memories. The search index is then brought up to date (only the files that
    changed are read) and the receipt says how many were indexed.

    When the branch cannot be fast-forwarded (the histories diverged, local changes
    are in the way, there is no upstream, the fetch failed) it says why and nothing
    changes. Nothing ever pulls on its own; `list` warns when the last pull is older
    than memex.staleAfter (default 7d). Without a terminal git is not allowed to ask
    for credentials.
    """
    from memex.workflows import pull

    receipt = pull.pull(_common.workspace(), remote, scope="org" if org else "project",
                        prompt=_common.stdin_is_tty())
    if as_json:
        _common.emit_json(receipt.as_json())
        return
    if receipt.up_to_date:
        extra = f"; your branch is {receipt.ahead} commit(s) ahead" if receipt.ahead else ""
        _common.say(f"already up to date with {receipt.ref}{extra}")
        return
    _common.say(f"fast-forwarded to {receipt.ref} ({(receipt.after or '')[:10]}, "
               f"{receipt.commits} commit(s))")
    sections = (("new", receipt.new), ("changed", receipt.changed),
                ("retired", receipt.retired), ("removed", receipt.removed))
    if not any(items for _, items in sections):
        _common.say("no memory changed")
    for label, items in sections:
        for change in items:
            state = f"[{change.review_state or '?'}]"
            _common.say(f"{label:8} {_render.short(change.id)} {state} {change.title}")
    for notice in receipt.notices:
        _common.note(f"git-memex: {notice}")
    if receipt.indexed is not None:
        _common.note(f"index: {receipt.indexed} file(s) indexed, {receipt.index_memories} "
                     "memories searchable")


def main() -> None:
    _common.run_step(cli, "pull")
