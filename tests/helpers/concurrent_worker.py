"""A worker process for the concurrency test and bench/concurrency.py: runs git-memex
steps in a loop in one interpreter (as many CLI runs would, without the start-up
cost) and prints one line per step: `ok`, or `exit N: message`. A traceback ends the
process with a non-zero status and the traceback on stderr.

usage: python -m tests.helpers.concurrent_worker WORKER_NUMBER STEP [STEP ...]
a STEP is a tab-free string of arguments joined by '|', e.g. "capture|text one"."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout

from memex.adapters.cli.main import cli


def run(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            cli.main(args, prog_name="git-memex", standalone_mode=False)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except Exception as exc:  # click's own errors (standalone_mode=False)
        from click import ClickException

        if isinstance(exc, ClickException):
            code = exc.exit_code
            err.write(exc.format_message())
        else:
            raise
    return code, err.getvalue().strip().replace("\n", " | ")


def main() -> None:
    for step in sys.argv[2:]:
        code, message = run(step.split("|"))
        print("ok" if code == 0 else f"exit {code}: {message}", flush=True)


if __name__ == "__main__":
    main()
