"""Small helpers shared by tests (import as `from tests.helpers import ...`)."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result

from memex.adapters.cli.main import cli


def invoke(*args: str, input: str | bytes | None = None) -> Result:
    runner = CliRunner()
    return runner.invoke(cli, list(args), input=input, catch_exceptions=False)


def invoke_json(*args: str, input: str | bytes | None = None) -> Any:
    result = invoke(*args, "--json", input=input)
    assert result.exit_code == 0, result.output + result.stderr
    return json.loads(result.stdout)
