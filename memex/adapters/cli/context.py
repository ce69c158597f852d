"""git-memex-context: the session-start block an agent reads before its first turn.

`git memex context [--query TEXT] [--json] [--hook HOST]` runs without loading click
(`fast`); anything else goes to the click command."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memex.adapters.cli import _common

if TYPE_CHECKING:
    import click


def run(query: str | None = None, hook: str | None = None, as_json: bool = False) -> None:
    """The context step once its arguments are parsed (by click or by `fast`)."""
    if hook:
        from memex.adapters.cli import _hooks
        from memex.workflows import agent_hooks

        _hooks.answer(agent_hooks.session_start)
        return
    from memex.workflows import context

    ws = _common.workspace()
    block = context.build(ws, query)
    if as_json:
        _common.emit_json(block.as_json())
        return
    _common.echo(block.text(), nl=False)


def fast(argv: list[str], prog: str) -> None:
    """Run the plain forms of `context` without click; return, having done nothing,
    for any other argv (click parses it)."""
    from memex.adapters.cli import _hooks

    parsed = _common.plain_args(
        argv, {"--json": "as_json"},
        {"--query": ("query", str),
         "--hook": ("hook", lambda v: v if v in _hooks.HOSTS else None)}, prog)
    if parsed is None or parsed[0]:
        return
    seen = parsed[1]
    query = str(seen["query"][-1]) if "query" in seen else None
    hook = str(seen["hook"][-1]) if "hook" in seen else None
    _common.run_plain(lambda: run(query, hook, as_json="as_json" in seen), quiet_flag=False)


def _command() -> click.Command:
    import click

    from memex.adapters.cli import _hooks

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
        run(query, hook, as_json=as_json)

    return cli


def __getattr__(name: str) -> click.Command:
    return _common.lazy_cli(globals(), name, _command)


def main() -> None:
    _common.run_fast_step(fast, globals(), _command, "context")
