"""git-memex-export: write this project's memories to a portable archive."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("export")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False),
              help="Write the archive to FILE (default: stdout).")
@click.option("--include-personal", "--include-private", "include_personal", is_flag=True,
              help="Also export what never leaves the machine by default: your personal "
                   "memories and visibility: private project drafts.")
@_common.quiet_option
@_common.version_option
@_common.handle_errors
def cli(output: str | None, include_personal: bool) -> None:
    """Export this project's memories (outbox drafts and the repo's shared folder) as JSON
    Lines: a manifest line, then one line per memory with its home, file name, sha256
    and file text, so every field (status, review state, history, unknown keys, a hand
    edit's comments) survives `git memex import` byte for byte; a secret in a file (a
    teammate's, arrived by git) is masked in the archive as a write would mask it. Each
    line is signed (HMAC-SHA256) with this machine's key, $GIT_MEMEX_HOME/export.key
    (mode 0600, made on first export): import restores review and instruction state
    only from an archive signed with that key, for the same repository (copy the key to
    restore on another machine). Personal memories and `visibility: private` project
    memories stay out unless --include-personal (or its alias --include-private) is
    given: private means it never leaves the machine. Unreadable files are skipped and
    reported.
    """
    from pathlib import Path

    from memex.core import redact
    from memex.storage import store
    from memex.workflows import portable

    ws = _common.workspace()
    lines, skipped = portable.export_lines(ws, include_personal)
    _common.report_quarantine(skipped)
    text = "".join(line + "\n" for line in lines)
    if output:
        path = Path(output)
        store.write_atomic(path, text)
        _common.note(f"exported {len(lines) - 1} memories to {redact.shown(str(path))}")
    else:
        click.echo(text, nl=False)


def main() -> None:
    _common.run_step(cli, "export")
