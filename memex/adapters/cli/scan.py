"""git-memex-scan: secret scan of memory files (the pre-commit hooks run it)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memex.adapters.cli import _common


@click.command("scan")
@click.argument("files", nargs=-1, metavar="[FILE]...")
@click.option("--staged", is_flag=True, help="Scan the staged (index) version of every "
              "added or changed memory file.")
@click.option("--at-rebase-stop", "rebase_stop", is_flag=True,
              help="Scan only a commit git makes without the pre-commit hook (`git rebase "
              "--continue` at a stop, `git cherry-pick`, `git revert`); exit 0 "
              "at once otherwise (the pre-commit framework's prepare-commit-msg stage, "
              "hook memex-rebase-scan).")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(files: tuple[str, ...], staged: bool, rebase_stop: bool, as_json: bool) -> None:
    """Report every unmasked secret and unredacted <private> block in memory files,
    naming file, line and kind, never the secret itself, and every personal
    (scope: personal) or visibility: private memory in the memory folder, which must
    never be committed; exit 1 when there is one.

    With no FILE and no --staged, every memory file of the repository's memory folder
    is scanned as it is on disk, and a one-line summary is printed on stderr. With
    --staged, the index's version of the staged memory files is scanned (the plain
    pre-commit hook); with FILE arguments, those files as on disk, skipping any
    outside the memory folder (the pre-commit framework passes staged names). Mask a
    real secret or remove it, unstage a personal or private memory
    (git rm --cached FILE), then commit again.
    """
    from memex.workflows import githooks, scan

    if rebase_stop and not githooks.at_rebase_stop(Path.cwd()):
        sys.exit(0)
    ws = _common.workspace()
    whole_folder = not staged and not files
    shared: list[scan.SecretFinding] = []  # staged secrets a merge takes from the remote
    if whole_folder:
        count, findings = scan.scan_folder(ws)
    elif staged:
        hooked = scan.scan_staged_for_hook(ws, prepare=rebase_stop)
        if hooked is None:  # this commit's pre-commit scan passed the same staged change
            sys.exit(0)
        count, findings = hooked
        shared = scan.already_shared(ws, findings)
        if files:
            more_count, more = scan.scan_paths(ws, files)
            count, findings = count + more_count, findings + more
    else:
        count, findings = scan.scan_paths(ws, files)
    blocking = [f for f in findings if f not in shared]
    if as_json:
        _common.emit_json({"ok": not blocking, "scanned": count,
                           "findings": [{**f.as_json(), "shared": True} if f in shared
                                        else f.as_json() for f in findings]})
    else:
        for finding in findings:
            click.echo(f"{finding.describe()}", err=True)
        if blocking or whole_folder:
            _common.note(scan.summary(count, blocking))
        if shared:
            _common.note(scan.shared_note(shared))
    sys.exit(1 if blocking else 0)


def main() -> None:
    _common.run_step(cli, "scan")
