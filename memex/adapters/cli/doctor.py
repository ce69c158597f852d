"""git-memex-doctor: check this machine's and repository's git-memex setup."""

from __future__ import annotations

import sys

import click

from memex.adapters.cli import _common


@click.command("doctor")
@click.option("--fix", is_flag=True, help="Re-point this clone's registrations (merge driver, "
              "hook scanner) at the installed executables first, then check.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(fix: bool, as_json: bool) -> None:
    """Print one ok / warn / fail line per check: git is installed; this clone
    configures the memex merge driver when .gitattributes names it (otherwise git
    silently falls back to a plain text merge of memory files), by an absolute path
    that resolves (it fails when the configured driver does not: git would keep only
    one side of a memory file); the git hooks are installed (or the pre-commit
    framework is used) and the pre-commit hook's scanner (memex.hookScanner) resolves,
    else the hook refuses every commit; no memory file is quarantined; no memory id
    has files in two homes (reads show the repo's copy);
    no outbox drafts are stranded under an earlier repo_id of this clone (origin
    changed, or was added), else it prints the `git memex rekey` command that moves
    them; the index is readable; MCP client configs point at a working server; the
    usage log is rotating (it is not when it has grown past twice
    memex.usageMaxBytes, e.g. in a read-only GIT_MEMEX_HOME); the home is outside
    git's reach (inside a work tree, git ignores all of it); export.key, when there is
    one, is for your user alone (mode 600). Each warning says what fixes it. Exit 1
    only when a check fails.

    --fix repairs this clone's registrations in its git config (never committed):
    the merge driver and the hook scanner are pointed at the absolute paths of the
    installed executables (after a reinstall, a new venv, a moved clone), the home the
    commit scan guards is recorded (memex.hookHome), and
    git-memex's own hook scripts are refreshed where installed; each change is named
    on stderr.
    """
    from memex.workflows import doctor

    ws = _common.workspace(allow_missing_git=True, home_check=False)
    if fix:
        for line in doctor.fix(ws):
            _common.note(f"fixed: {line}")
    checks = doctor.run(ws)
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
