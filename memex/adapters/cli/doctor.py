"""git-memex-doctor: check this machine's and repository's git-memex setup."""

from __future__ import annotations

import sys

import click

from memex.adapters.cli import _common


@click.command("doctor")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(as_json: bool) -> None:
    """Print one ok / warn / fail line per check: git is installed; this clone
    configures the memex merge driver when .gitattributes names it (otherwise git
    silently falls back to a plain text merge of memory files); the git hooks are
    installed (or the pre-commit framework is used); no memory file is quarantined;
    no memory id has files in two homes (reads show the repo's copy); no outbox
    drafts are stranded under an earlier repo_id of this clone (origin changed, or
    was added), else it prints the `git memex rekey` command that moves
    them; the index is readable; MCP client configs point at a working server; the
    usage log is rotating (it is not when it has grown past twice
    memex.usageMaxBytes, e.g. in a read-only GIT_MEMEX_HOME). Each warning says what
    fixes it. Exit 1 only when a check fails.
    """
    from memex.workflows import doctor

    checks = doctor.run(_common.workspace(allow_missing_git=True, home_check=False))
    if as_json:
        _common.emit_json({"ok": not doctor.failed(checks),
                           "checks": [c.as_json() for c in checks]})
    else:
        for check in checks:
            hint = f" (fix: {check.hint})" if check.hint and check.level != "ok" else ""
            click.echo(f"{check.level:<4} {check.name}: {check.message}{hint}")
    sys.exit(1 if doctor.failed(checks) else 0)


def main() -> None:
    _common.run_step(cli, "doctor")
