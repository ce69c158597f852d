"""git-memex-pull: fetch and fast-forward, with a receipt of the memories that came in."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("pull")
@click.argument("remote", required=False)
@click.option("--org", is_flag=True, help="Pull the org memory repo (memex.orgRepo) instead.")
@click.option("--drop-merged", is_flag=True, help="After a squash or rebase merge: move the "
              "branch to upstream when its only local commits are memory commits upstream "
              "already holds (as git reset --keep).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(remote: str | None, org: bool, drop_merged: bool, as_json: bool) -> None:
    """Fetch REMOTE (default: the branch's upstream) and fast-forward the current
    branch, and nothing else: it never merges, rebases or commits. Then print a
    receipt of what came into the memory folder: new, changed, retired and removed
    memories. The search index is then brought up to date (only the files that
    changed are read) and the receipt says how many were indexed.

    When the branch cannot be fast-forwarded (the histories diverged, local changes
    are in the way, there is no upstream, the fetch failed) it says why and nothing
    changes. Nothing ever pulls on its own; `list` warns when the last pull is older
    than memex.staleAfter (default 7d). Without a terminal git is not allowed to ask
    for credentials. While a rebase, merge, cherry-pick, revert or am is in progress
    it refuses and names the state.

    After a PR is squash- or rebase-merged, the local branch has diverged although
    nothing is lost: when the only local commits missing upstream are memory-only
    commits whose files upstream now holds with the same blob ids (commits that only
    record review fields, such as `pr-status --commit`, count as merged too), pull says
    so and lists them; --drop-merged then moves the branch to upstream with `git reset
    --keep` semantics (refused if uncommitted work would be lost). Any other local
    commit: it refuses and shows what differs.
    """
    from memex.workflows import pull

    receipt = pull.pull(_common.workspace(), remote, scope="org" if org else "project",
                        prompt=_common.stdin_is_tty(), drop_merged=drop_merged)
    for line in receipt.dropped:
        _common.note(f"git-memex: dropped (already upstream): {line}")
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
