"""git-memex-supersede: replace a memory with a newer one."""

from __future__ import annotations

from typing import Any

import click

from memex.adapters.cli import _common, _render
from memex.adapters.cli.capture import build_request, capture_options, get_text, print_result


@click.command("supersede")
@click.argument("old_id", metavar="OLD")
@click.argument("text", required=False)
@click.option("--accept", is_flag=True, help="OLD is an agent's successor draft waiting "
              "for you: retire the memory it proposes to replace, now.")
@capture_options
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(old_id: str, text: str | None, accept: bool, as_json: bool, **kw: Any) -> None:
    """Write TEXT (or stdin) as the successor of OLD, and retire OLD.

    OLD becomes `superseded` with `superseded_by`; the new memory carries
    `supersedes`, and searches return only the newest of the chain. A shared OLD is
    retired in the same commit that submits its successor.

    An agent cannot retire what a person approved: its memory_supersede of such a
    personal memory writes a successor that waits (`pending_supersedes`), and the old
    one stays live until you run `git memex supersede --accept SUCCESSOR` (or retire
    it yourself with `git memex status`).
    """
    from memex.workflows import writes

    ws = _common.workspace()
    if accept:
        if text is not None:
            raise click.UsageError("--accept takes the successor's id only, no TEXT")
        done, old = writes.accept_successor(ws, old_id)
        print_result(done, as_json, verb=f"superseded {_render.short(old.id)} by")
        return
    request = build_request(get_text(text), None, kw)
    result, old_path = writes.supersede(ws, old_id, request)
    print_result(result, as_json, verb=f"superseded {_render.short(old_path.stem)} by")


def main() -> None:
    _common.run_step(cli, "supersede")
