"""Small helpers shared by tests (import as `from tests.helpers import ...`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from memex.adapters.cli.main import cli
from tests.helpers.tracing import untraced


def invoke(*args: str, input: str | bytes | None = None) -> Result:
    runner = CliRunner()
    return runner.invoke(cli, list(args), input=input, catch_exceptions=False)


def invoke_json(*args: str, input: str | bytes | None = None) -> Any:
    result = invoke(*args, "--json", input=input)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)


def git_proc(*args: str, cwd: Path | str, check: bool = True,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The one way tests run the real `git` binary: a failure raises with git's own words.
    Started without coverage's tracer in this process (subprocess's own Python, not
    memex/: tests/helpers/tracing.py); a git-memex process git starts is measured."""
    with untraced():
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return proc


def git(*args: str, cwd: Path | str, check: bool = True) -> str:
    """`git ARGS` in `cwd`; its stdout."""
    return git_proc(*args, cwd=cwd, check=check).stdout
