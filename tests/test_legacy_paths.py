"""Configs written before the layer move still start the CLI."""

from __future__ import annotations

import subprocess
import sys


def test_old_module_path_still_runs_the_dispatcher() -> None:
    out = subprocess.run([sys.executable, "-m", "memex.cli", "--help"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "capture" in out.stdout and "search" in out.stdout
