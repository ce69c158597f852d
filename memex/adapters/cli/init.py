"""git-memex-init: set up git-memex in this repository."""

from __future__ import annotations

from typing import Any

import click

from memex.adapters.cli import _common

CLIENTS = ("claude", "vscode", "cursor", "codex", "opencode", "vs")


@click.command("init")
@click.option("--dir", "dir_name", help="The memory folder (default .memex, or what "
              ".memexconfig already says).")
@click.option("--yes", "-y", is_flag=True, help="Take the defaults without asking.")
@click.option("--git-hooks", is_flag=True, help="Also install git-memex's plain git hooks: "
              "pre-commit secret scan (and pre-merge-commit's, prepare-commit-msg's and "
              "pre-applypatch's, for `git merge`, `git rebase --continue`, cherry-pick, "
              "revert and `git am`), "
              "post-merge / post-checkout index refresh.")
@click.option("--client", type=click.Choice(CLIENTS),
              help="Also configure this agent host to start `git memex mcp`.")
@click.option("--hooks", is_flag=True,
              help="With --client claude: also install Claude Code's SessionStart and "
                   "UserPromptSubmit hooks (.claude/settings.local.json).")
@click.option("--print-config", is_flag=True,
              help="With --client: print the configuration instead of writing it.")
@_common.quiet_option
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(dir_name: str | None, yes: bool, git_hooks: bool, client: str | None, hooks: bool,
        print_config: bool, as_json: bool) -> None:
    """Set up this repository: the shared memory folder and the committed
    .memexconfig that names it for the team. Asks on a terminal (never when stdin
    is not one); --yes takes the defaults. Running it again changes nothing.

    It also adds `<folder>/[0-7]?????????????????????????.md merge=memex` (the
    ULID-named memory files, not README.md) to .gitattributes (commit it) and sets
    merge.memex.name and merge.memex.driver in this clone's git config, by the absolute
    path of the installed git-memex, so that git merges memory files field by field
    even where PATH does not find git-memex (GUI clients, IDEs, CI); git config is per
    clone: each teammate runs init once, and `git memex doctor --fix` re-points it after
    a reinstall. --git-hooks installs the plain git hooks from hooks/ (a hook that is
    not git-memex's is left alone) and records the scanner's absolute path in
    memex.hookScanner: the pre-commit hook refuses the commit when that is unset or
    gone (bypass knowingly with `git commit --no-verify`); the index-refresh hooks
    never fail.

    --client claude|vscode|cursor|codex|opencode|vs also writes that host's MCP
    configuration, in its own format and place: Claude Code `.mcp.json`
    (mcpServers), VS Code `.vscode/mcp.json` (servers), Cursor `.cursor/mcp.json`
    (mcpServers), Visual Studio's solution-level `.mcp.json` (servers, beside Claude
    Code's mcpServers), opencode `opencode.jsonc` (mcp), Codex the [mcp_servers.memex]
    table of `$CODEX_HOME/config.toml` (default ~/.codex). It merges into an existing
    file, keeping other servers and, in JSON with comments, the comments; a file it
    cannot merge safely is refused, never overwritten. The server command is the
    git-memex found on PATH (else this Python with -m memex.adapters.cli). AGENTS.md gets a
    git-memex section (created if missing): a one-line pointer and the agent
    guidance. --hooks (Claude Code) adds the SessionStart hook (`git memex context`)
    and the UserPromptSubmit hook (keyword capture and a relevant-memory nudge).
    --print-config prints all of it and writes nothing.
    """
    from memex.workflows import setup

    if (hooks or print_config) and client is None:
        raise click.UsageError("--hooks and --print-config go with --client NAME")
    ws = _common.workspace()
    if client is not None and print_config:
        _print_client_config(ws, client, hooks, as_json)
        return
    if dir_name is None and not yes and _common.stdin_is_tty() and ws.repo is not None:
        dir_name = click.prompt("Memory folder", default=ws.memory_dir_name)
    if client is not None and ws.repo is None:
        result = setup.InitResult()
        _common.note("git-memex: not a git repository: project memories stay local; "
                     "configuring the agent host only")
    else:
        result = setup.init_repo(ws, dir_name, git_hooks=git_hooks)
    if not as_json:
        for line in result.warnings:
            _common.warn(line)
        for line in result.changed:
            _common.say(line)
    client_data = _setup_client(ws, client, hooks, as_json) if client is not None else None
    if as_json:
        data: dict[str, Any] = {"changed": result.changed, "unchanged": result.unchanged,
                                "warnings": result.warnings}
        if client_data is not None:
            data["client"] = client_data
        _common.emit_json(data)
        return
    if client is None:
        if not result.changed:
            _common.say("already set up; nothing changed")
        else:
            _common.say("commit .memexconfig, .gitattributes and the folder when ready")


def _top(ws: Any) -> Any:
    return ws.repo.toplevel if ws.repo is not None else ws.cwd


def _print_client_config(ws: Any, client: str, hooks: bool, as_json: bool) -> None:
    from memex.workflows import clients

    plan = clients.setup(_top(ws), client, hooks=hooks, print_only=True)
    if as_json:
        _common.emit_json({"client": client, "files": [
            {"path": str(s.path), "text": s.text} for s in plan.snippets]})
        return
    for snippet in plan.snippets:
        click.echo(f"# {snippet.path}")
        click.echo(snippet.text)


def _setup_client(ws: Any, client: str, hooks: bool, as_json: bool) -> dict[str, Any]:
    from memex.workflows import clients

    plan = clients.setup(_top(ws), client, hooks=hooks)
    for notice in plan.notices:
        _common.note(f"git-memex: {notice}")
    if not as_json:
        for change in plan.changes:
            _common.say(f"{change.action} {change.path}: {change.what}")
    return {"name": client, "changes": [c.as_json() for c in plan.changes],
            "notices": plan.notices}


def main() -> None:
    _common.run_step(cli, "init")
