"""git-memex-import: restore an export, or bring in an open-memex folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memex.adapters.cli import _common


@click.command("import")
@click.argument("source", metavar="FILE|DIR", type=click.Path(path_type=Path))
@click.option("--dry-run", is_flag=True, help="Report what would happen; write nothing.")
@click.option("--verbose", "-v", is_flag=True,
              help="One line per memory imported (default: the summary only).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(source: Path, dry_run: bool, verbose: bool, as_json: bool) -> None:
    """Import FILE, a `git memex export` archive, or DIR, a folder of open-memex Markdown
    memories (v1 or v2: a repo holding `.ai/open-memex/` or `.open-memex/`, that folder
    itself, or open-memex's data directory).

    Everything lands in the current repository's homes: project memories in its outbox,
    personal ones in the personal folder. Imported memories arrive as untrusted drafts:
    review state, instruction approval, trust and approver from outside are kept as one
    review_history entry ("imported from ...; was published, instruction approved, by
    X"), never as state. The one exception is restoring your own export: an archive
    signed with this machine's $GIT_MEMEX_HOME/export.key, whose entries belong to this
    repository (or are personal), is restored unchanged, each memory into the home it
    came from (personal, outbox, or the repo's folder). open-memex values are mapped:
    source cli/tool/keyword become user/tool/keyword with via cli/mcp/hook; scope_key
    and project_name become this repo's repo_id; times become RFC 3339 seconds; bare
    names become local:NAME; v1's user scope, priority and epoch times are converted;
    unknown keys are kept. A foreign id that is not a ULID gets a new one (the old in
    imported_id). A `paths` glob outside the repository (absolute, `~/`, a drive, a `..`
    part), which every write refuses, is dropped and said (in the notices and the
    memory's review history). Every entry is redacted and held to memex.maxBytes; names other than
    `<ULID>.md` (a path, `..`) are refused. A memory that already exists with the same
    bytes is left alone; with other bytes it is a conflict, reported and never
    overwritten. The exit status is 1 when any entry was refused or conflicted.

    On a terminal a progress bar runs on stderr; the output is one summary line, plus a
    line per conflict or refusal (and per memory with --verbose).
    """
    from memex.workflows import portable

    report = portable.import_path(_common.workspace(), source, dry_run=dry_run,
                                  progress=_common.progress_bar(as_json or _common.quiet(),
                                                                "importing"))
    for message in report.notices:
        _common.note(f"git-memex: {message}")
    if as_json:
        _common.emit_json(report.as_json())
    else:
        verb = "would import" if dry_run else "imported"
        for memory_id, path in report.imported if verbose else ():
            click.echo(f"{verb} {memory_id[:10]} {path}")
        for memory_id, reason in report.conflicts:
            click.echo(f"conflict {memory_id[:10]}: {reason}", err=True)
        for where, reason in report.rejected:
            click.echo(f"refused {where}: {reason}", err=True)
        _common.note(f"{len(report.imported)} {verb}, {len(report.unchanged)} unchanged, "
                     f"{len(report.conflicts)} conflict(s), {len(report.rejected)} refused")
    if not report.ok:
        sys.exit(1)


def main() -> None:
    _common.run_step(cli, "import")
