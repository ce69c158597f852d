"""git-memex-distill: propose AGENTS.md additions from approved project instructions."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("distill")
@click.option("--write", "apply", is_flag=True, help="Apply the change to AGENTS.md.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(apply: bool, as_json: bool) -> None:
    """Show, as a unified diff, what AGENTS.md at the top of the repository would
    gain from this project's approved instructions: memories with role instruction,
    instruction_state approved, trust_level reviewed or trusted, review approved or
    published, active and current, submitted to the repo, and without an open
    contradiction. Personal memories and anything a tool inferred (source
    inference) are never proposed; the instructions that do not qualify are listed
    on stderr with the reason.

    The instructions go into one section between git-memex markers; the rest of
    AGENTS.md is left byte for byte. --write applies the diff (in the working
    tree, for you to commit); running it again changes nothing.
    """
    from memex.workflows import distill

    result = distill.plan(_common.workspace())
    for memory_id, reason in result.skipped:
        _common.note(f"skipped {memory_id[:10]}: {reason}")
    if apply:
        distill.write(result)
    if as_json:
        _common.emit_json({
            "path": str(result.path), "changed": result.changed, "written": apply
            and result.changed, "instructions": [i.id for i in result.chosen],
            "skipped": [{"id": i, "reason": r} for i, r in result.skipped],
            "diff": result.diff(),
        })
        return
    if not result.changed:
        _common.note(f"{result.path.name} is up to date ({len(result.chosen)} instruction(s))")
        return
    click.echo(result.shown_diff(), nl=False)
    if apply:
        _common.note(f"wrote {result.path}; review and commit it")
    else:
        _common.note("to apply: git memex distill --write")


def main() -> None:
    _common.run_step(cli, "distill")
