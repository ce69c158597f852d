"""Answering a host's hook: JSON in on stdin, JSON out on stdout; on failure, silence on
stdout and one line in the hook log ($GIT_MEMEX_HOME/hook-errors.jsonl, which doctor
reports)."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from typing import Any

from memex.adapters.cli import _common
from memex.core import jsonout

Handler = Callable[[dict[str, Any]], "dict[str, Any] | None"]
HOSTS = ("claude",)  # hosts whose hooks agent_hooks answers


def hook_option(help: str) -> Callable[[_common.F], _common.F]:
    """`--hook HOST`, the same for every step a host's hook runs."""
    import click

    return click.option("--hook", type=click.Choice(HOSTS), help=help)


def answer(handler: Handler) -> None:
    """Run HANDLER on the host's payload; any error means no output and exit 0, so a
    broken memory store never blocks the user's session, and a line in the hook log."""
    try:
        raw = b"" if _common.stdin_is_tty() or sys.stdin is None else sys.stdin.buffer.read()
        from memex.workflows import agent_hooks

        reply = handler(agent_hooks.parse(raw))
        if reply is not None:
            _common.echo(jsonout.escape_layout(json.dumps(reply, ensure_ascii=False)))
    except Exception as exc:  # fail soft, by design, but leave a trace
        with contextlib.suppress(Exception):
            from memex.storage import homes, hooklog

            hooklog.record(homes.memex_home(), handler.__name__,
                           f"{type(exc).__name__}: {exc}")
