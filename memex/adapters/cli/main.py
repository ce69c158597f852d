"""`git-memex`: dispatch `git memex <step>` to the step's command.

Steps are imported only when run, so `git-memex --help` stays fast. Called by git
(`git memex <step> --help`, git sets GIT_EXEC_PATH) the help is the man page, as
for any git command; called directly it is click's help. A step with a fast path
(`FAST`) gets its argv first: the plain forms it parses run without loading click,
anything else goes to the click group (dispatch.py) as before.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from memex.adapters.cli import _common
from memex.adapters.cli.registry import STEPS

PROG = _common.PROG
# Steps whose module has `fast(argv, prog)`: runs and exits, or returns for click.
FAST = frozenset({"search", "show", "context", "capture", "update"})


def __getattr__(name: str) -> Any:
    """`cli` and `Dispatcher`, the click group, from dispatch.py (loads click)."""
    if name in ("cli", "Dispatcher"):
        from memex.adapters.cli import dispatch

        return getattr(dispatch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _man_page_for_git(argv: list[str]) -> int | None:
    """Under git, `git memex STEP --help` opens the step's man page (None: not handled)."""
    if "GIT_EXEC_PATH" not in os.environ or len(argv) < 2 or argv[0] not in STEPS:
        return None
    import shutil
    import subprocess

    if argv[1] not in ("--help", "-h") or not shutil.which("man"):
        return None
    page = f"git-memex-{argv[0]}"
    found = subprocess.run(["man", "-w", page], capture_output=True).returncode == 0
    if not found:
        return None
    return subprocess.run(["man", page]).returncode


def main(argv: list[str] | None = None) -> None:
    args = _common.take_debug_flag(sys.argv[1:] if argv is None else argv)
    _common.guard_stdout()
    if args and args[0] in FAST:
        with _common.fast_process(whole=argv is None):
            if argv is None:  # a whole process: git finds the repository beside the imports
                from memex.storage import gitio

                gitio.config_ahead()
            try:
                fast = importlib.import_module(STEPS[args[0]][0]).fast
            except (Exception, KeyboardInterrupt) as exc:  # as click reports a failed load
                sys.exit(_common.exit_code_for(exc))
            fast(args[1:], PROG)
    code = _man_page_for_git(args)
    if code is not None:
        sys.exit(code)
    from memex.adapters.cli import dispatch

    _common.run_command(dispatch.cli, args, "git-memex")
