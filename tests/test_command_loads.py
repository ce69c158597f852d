"""What a whole `git-memex show / update / capture` process loads (issue 18: these run
on every prompt of a hook or an agent, and a module a step does not use costs each run
its import). `show` writes nothing, so it loads neither the writer nor the ~100 secret
patterns redaction compiles; the plain forms of `update` and `capture` run without
click, as search, show and context do (their click paths are the control)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import invoke_json

CODE = """
import sys
sys.argv = ["git-memex", *sys.argv[1:]]
from memex.adapters.cli.main import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nLOADED " + __import__("json").dumps(sorted(sys.modules)) + "\\n")
"""


def _loaded(cwd: Path, *argv: str) -> tuple[str, set[str]]:
    """stdout of a whole `git-memex ARGV` process and the modules it had loaded."""
    env = {k: v for k, v in os.environ.items()  # coverage in the child loads its own
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", CODE, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return done.stdout, set(json.loads(done.stderr.rsplit("LOADED ", 1)[1]))


WRITER = ("memex.workflows.writes", "memex.core.redact", "memex.core.secret_rules",
          "memex.core.bare_secrets")


def test_show_loads_no_writer_and_no_secret_patterns(repo: Path) -> None:
    mid = str(invoke_json("capture", "Deploys go through the staging VPN")["id"])
    out, loaded = _loaded(repo, "show", mid)
    assert "staging VPN" in out
    assert sorted(set(WRITER) & loaded) == []
    out, loaded = _loaded(repo, "show", mid, "--json")
    assert json.loads(out)["id"] == mid and sorted(set(WRITER) & loaded) == []
    # control: a write loads them
    _, loaded = _loaded(repo, "pin", mid)
    assert set(WRITER) <= loaded
