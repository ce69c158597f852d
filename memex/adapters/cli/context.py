"""git-memex-context: the session-start block an agent reads before its first turn."""

from __future__ import annotations

import click

from memex.adapters.cli import _common, _hooks


@click.command("context")
@click.option("--query", help="The task at hand: matching memories come first.")
@_hooks.hook_option("Answer a host's hook: read its JSON on stdin, print its JSON; "
                    "never fails (exit 0, no output on any error).")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(query: str | None, hook: str | None, as_json: bool) -> None:
    """Print the block an agent reads at session start: up to
    `memex.maxProjectMemories` (default 8) project and `memex.maxProfileItems`
    (default 5) personal memories, one line each of at most 240 characters. Without
    --query: approved and published first, then proposed, then drafts, most recently
    updated first within each tier; with it, the best matches first. Either way drafts
    take at most half the slots (rounded down) while other candidates remain unshown,
    so auto-captured drafts never push the team's reviewed memories out. 0 turns a
    section off. Instructions appear in their own section only when they pass rule 1 (role
    instruction, instruction_state approved, trust_level reviewed or trusted, never
    an unreviewed inference; a personal instruction only for its owner); every other
    memory is shown as data.

    The block opens with a fixed disclaimer (retrieved history, to verify before
    acting), says when the last pull (the mtime of .git/FETCH_HEAD) is older than
    `memex.staleAfter` (default 7d), and ends by pointing at the memory_search tool.
    It never pulls and never writes a memory file. --hook claude answers Claude
    Code's SessionStart hook with the block as additionalContext.
    """
    if hook:
        from memex.workflows import agent_hooks

        _hooks.answer(agent_hooks.session_start)
        return
    from memex.workflows import context

    ws = _common.workspace()
    block = context.build(ws, query)
    if as_json:
        _common.emit_json(block.as_json())
        return
    click.echo(block.text(), nl=False)


def main() -> None:
    _common.run_step(cli, "context")
