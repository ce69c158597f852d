"""git-memex-migrate: convert protocol v1 memory files to v2, keeping backups."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("migrate")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--yes", is_flag=True, help="Migrate without asking.")
@click.option("--drop-backups", is_flag=True,
              help="Delete the backups of earlier migrations (after you have checked).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(dry_run: bool, yes: bool, drop_backups: bool, as_json: bool) -> None:
    """Find memory files of the v1 protocol (no or an older schema_version) in every
    home (personal, every outbox, this repo's folder, the org repo) and rewrite them
    as v2: scope user becomes personal, epoch times RFC 3339, priority 1-10
    importance low (1-3), normal (4-7) or high (8-10), and type instruction a content
    type with role instruction (instruction_state draft, to be approved again).
    Until migrated, v1 files are skipped by every read and reported as "v1 file: run
    git memex migrate"; nothing is dropped.

    The originals are copied first to $GIT_MEMEX_HOME/.migrate-backup/<time>/ with a
    manifest; check the result, then confirm with `git memex migrate
    --drop-backups`. Migrated repo files change in the working tree, for you to
    commit. On a terminal you are asked; otherwise pass --yes (without it the plan
    is only listed).
    """
    from memex.workflows import migrate

    ws = _common.workspace()
    if drop_backups:
        found = migrate.backups(ws)
        if not found:
            _common.note("no migration backups")
            return
        if not _common.confirm(f"delete {len(found)} migration backup(s)", yes):
            return
        for folder in migrate.drop_backups(ws):
            _common.note(f"deleted {folder}")
        return
    steps = migrate.plan(ws)
    ready = [s for s in steps if s.new_text is not None]
    for step in steps:
        if step.error:
            _common.warn(f"{step.path}: cannot migrate: {step.error} (left as it is)")
    if not as_json:
        for step in ready:
            moved = f" -> {step.new_path.name}" if step.new_path and step.new_path != step.path \
                else ""
            click.echo(f"{step.home.kind}: {step.path}{moved}")
            for note in step.notes:
                click.echo(f"  note: {note}")
    if not ready:
        if as_json:
            _common.emit_json({"files": [s.as_json() for s in steps], "migrated": False})
        else:
            _common.note("no v1 files to migrate")
        return
    go = not dry_run and (yes or (_common.stdin_is_tty() and not as_json and click.confirm(
        f"migrate {len(ready)} file(s)", default=False, err=True)))
    backup = migrate.apply(ws, steps) if go else None
    if as_json:
        _common.emit_json({"files": [s.as_json() for s in steps], "migrated": go,
                           "backup": str(backup) if backup else None})
        return
    if backup is not None:
        _common.note(f"migrated {len(ready)} file(s); originals in {backup}; when all is "
                     "well: git memex migrate --drop-backups")
    elif not dry_run and not yes and not _common.stdin_is_tty():
        _common.note("nothing changed: pass --yes to migrate (stdin is not a terminal)")
    else:
        _common.note("nothing changed")


def main() -> None:
    _common.run_step(cli, "migrate")
