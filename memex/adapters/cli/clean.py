"""git-memex-clean: review ROT candidates and retire the ones you choose."""

from __future__ import annotations

from typing import Any

import click

from memex.adapters.cli import _common

GROUP_TITLES = {
    "redundant": "Redundant (near-duplicates)",
    "obsolete": "Obsolete (expired, no longer true, long unused, stale chain heads)",
    "trivial": "Trivial (tiny, test or placeholder content)",
}


def _listing(candidates: list[Any]) -> None:
    group = None
    for number, c in enumerate(candidates, start=1):
        if c.group != group:
            group = c.group
            click.echo(GROUP_TITLES[group] + ":")
        m = c.item.memory
        where = "shared" if c.shared else c.item.home.kind
        click.echo(f"  {number}. {m.id[:10]} [{where}] {m.title or m.summary}")
        click.echo(f"     why: {c.reason}")


@click.command("clean")
@click.argument("ids", nargs=-1, metavar="[ID]...")
@click.option("--yes", is_flag=True, help="Act on every candidate listed, without asking.")
@click.option("--delete", is_flag=True,
              help="Delete personal and outbox candidates instead of retiring them "
                   "(shared ones are always retired).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(ids: tuple[str, ...], yes: bool, delete: bool, as_json: bool) -> None:
    """List ROT candidates, grouped, each with its reason: redundant (a
    near-duplicate of another memory in the same scope; the reviewed, pinned, more
    used or newer one is kept), obsolete (expires_at passed, valid_until passed,
    unused for 90 days with retention below 0.1, or the head of a revised chain gone
    stale) and trivial (under 10 characters, or test and placeholder text). Pinned
    memories are never offered. Give IDs to act on only those.

    Nothing changes without a choice: on a terminal you are asked per item; --yes
    acts on every candidate listed; without a terminal and without --yes the
    candidates are only listed. Acting retires: the memory becomes `archived`, with
    the reason in its status_history and `retired_at` set, so as-of reads still
    see it as it was (an expired memory's retirement is recorded this way). A
    shared memory is changed in the working tree for you to commit. Only with
    --delete are personal and outbox files deleted (asked per item, or --yes).
    """
    from memex.workflows import hygiene

    ws = _common.workspace()
    candidates, bad = hygiene.clean_plan(ws, ids)
    _common.report_quarantine(bad)
    applied: list[dict[str, str]] = []
    interactive = not yes and not as_json and _common.stdin_is_tty()
    if not as_json:
        if not candidates:
            _common.note("nothing to clean")
            return
        _listing(candidates)
    if not yes and not interactive:
        if as_json:
            _common.emit_json({"candidates": [c.as_json() for c in candidates],
                               "applied": []})
        _common.note(f"{len(candidates)} candidate(s); nothing changed (choose per item on a "
                     "terminal, or pass --yes)")
        return
    for number, c in enumerate(candidates, start=1):
        can_delete = delete and not c.shared
        action = "delete" if can_delete else "retire"
        if interactive:
            keys = ["r", "s", "q"] + (["d"] if can_delete else [])
            label = "[r]etire, [s]kip, [q]uit" + (", [d]elete" if can_delete else "")
            answer = click.prompt(f"{number}. {c.id[:10]}: {label}", default="s",
                                  type=click.Choice(keys), show_choices=False, err=True)
            if answer == "q":
                break
            if answer == "s":
                continue
            action = "delete" if answer == "d" else "retire"
        if action == "delete":
            path = hygiene.delete(ws, c)
            applied.append({"id": c.id, "action": "deleted", "path": str(path)})
        else:
            result = hygiene.retire(ws, c)
            applied.append({"id": c.id, "action": "retired", "path": str(result.path)})
    if as_json:
        _common.emit_json({"candidates": [c.as_json() for c in candidates], "applied": applied})
        return
    for item in applied:
        click.echo(f"{item['action']} {item['id'][:10]}")
    if any(c.shared for c in candidates if c.id in {a["id"] for a in applied}):
        _common.note("git-memex: shared memories were changed in the working tree; "
                     "commit them when ready")
    _common.note(f"{len(applied)} of {len(candidates)} candidate(s) acted on")


def main() -> None:
    _common.run_step(cli, "clean")
