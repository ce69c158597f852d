"""git-memex-propose: copy personal memories into the outbox as drafts."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _render


@click.command("propose")
@click.argument("ids", nargs=-1, required=True, metavar="ID...")
@click.option("--to", "to", type=click.Choice(["project", "org"]), default="project",
              show_default=True, help="The project's outbox, or the org memory repo's "
              "(needs memex.orgRepo).")
@click.option("--local-approve", is_flag=True,
              help="Mark the drafts so submit lands them approved by you (solo developers).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(ids: tuple[str, ...], to: str, local_approve: bool, as_json: bool) -> None:
    """Copy the personal memories ID... into the outbox as drafts, the first step
    from personal knowledge to team knowledge. Each draft gets a new id and
    `derived_from` pointing back; the personal original stays as it was. The outbox
    lives outside the repo, so nothing reaches git until `git memex submit`.

    A private memory, or any personal instruction, is refused with the reason, and
    then nothing is copied. The redaction check runs again on every draft.
    Proposing the same memory twice returns the draft already made.
    """
    from memex.workflows import team

    results = team.propose(_common.workspace(), list(ids), to=to, local_approve=local_approve)
    if as_json:
        _common.emit_json([r.as_json() for r in results])
        return
    for result in results:
        for message in result.notices:
            _common.notice(f"git-memex: {result.draft.id[:10]}: {message}")
        verb = "proposed" if result.created else "exists"
        click.echo(f"{verb} {_render.one_line(result.draft)}  "
                   f"(from {_render.short(result.original.id)})")
    ids_text = " ".join(_render.short(r.draft.id) for r in results)
    org = " --org" if to == "org" else ""
    _common.note(f"next: git memex submit{org} {ids_text}")


def main() -> None:
    _common.run_step(cli, "propose")
