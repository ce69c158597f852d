"""git-memex-mcp: serve memory tools to an agent over MCP (stdio)."""

from __future__ import annotations

from pathlib import Path

import click

from memex.adapters.cli import _common
from memex.core.errors import UsageError, install_command


@click.command("mcp")
@click.option("--repo", help="The repository to serve (default: the current directory). "
              "A host variable the host left unexpanded (${workspaceFolder}) means the "
              "current directory.")
@_common.version_option
@_common.handle_errors
def cli(repo: str | None) -> None:
    """Serve memory tools to an MCP client (Claude Code, VS Code, Cursor, Codex,
    opencode, Visual Studio) on stdin and stdout: memory_add, memory_search,
    memory_get, memory_list, memory_update, memory_supersede, memory_forget and
    memory_context. `git memex init --client NAME` writes the host's configuration.

    Agent writes are recorded as written by a tool (source tool, via mcp, trust_level
    untrusted); project memories land as drafts in your outbox, outside the repo, and
    only you share them with `git memex submit`. No tool approves, submits, commits
    or pushes, and an agent edits only drafts and personal memories: a shared memory
    is replaced by a draft successor. Personal memories are offered to the agent
    unless `memex.maxProfileItems` is 0. Settings are read when the server starts.
    """
    if repo is not None and "${" in repo:
        repo = None  # a host that does not expand the variable starts us in the project
    elif repo is not None and not Path(repo).is_dir():
        raise UsageError(f"--repo {repo}: the directory does not exist")
    ws = _common.workspace(repo)
    if _common.stdin_is_tty():
        _common.note("git-memex mcp: serving MCP on stdin/stdout for an agent host "
                     "(see git memex init --client); Ctrl-C stops it")
    try:
        from memex.adapters import mcp_server
    except ImportError as exc:
        raise click.ClickException(
            f"the MCP SDK is not installed ({exc}); install it into this git-memex's "
            f"Python (the mcp extra of memex-git) with: {install_command('mcp>=2,<3')}") from None
    mcp_server.serve(ws)


def main() -> None:
    _common.run_step(cli, "mcp")
