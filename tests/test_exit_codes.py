"""Exit codes of real processes: 0 ok, 1 failed, 2 usage, 3 a bug (one line, the traceback
only with --debug or GIT_MEMEX_DEBUG=1), 130 on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from memex.adapters.cli._common import Exit, take_debug_flag
from tests.conftest import BIN, run_cli

# Loaded by the child's interpreter before anything else (PYTHONPATH's sitecustomize):
# a bug in the library where `list` asks for its workspace, and a marker on stderr when
# capture starts waiting for stdin, so the test knows when to press Ctrl-C.
SITECUSTOMIZE = """
import sys
import memex.storage.homes as homes
import memex.adapters.cli._common as common

def _broken(*args, **kwargs):
    raise RuntimeError("boom in the library")

if "git-memex-list" in sys.argv[0] or "list" in sys.argv[1:]:
    homes.workspace = _broken

_read = common.read_stdin_text

def _announced():
    sys.stderr.write("reading stdin\\n")
    sys.stderr.flush()
    return _read()

common.read_stdin_text = _announced
"""


@pytest.fixture
def patched(tmp_path: Path, repo: Path) -> dict[str, str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path}


def test_the_codes() -> None:
    assert [int(c) for c in Exit] == [0, 1, 2, 3, 130]


@pytest.mark.parametrize("argv", [("git-memex-list",), ("git-memex", "list")])
def test_a_bug_exits_3_with_one_line(patched: dict[str, str], argv: tuple[str, ...]) -> None:
    proc = run_cli(*argv, env=patched)
    assert proc.returncode == Exit.INTERNAL
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error (RuntimeError: boom in the library)" in err
    assert "This is a bug in git-memex" in err and "report it" in err
    assert "--debug" in err and "GIT_MEMEX_DEBUG=1" in err


@pytest.mark.parametrize(("argv", "env"), [
    (("git-memex-list", "--debug"), {}),
    (("git-memex", "--debug", "list"), {}),
    (("git-memex", "list"), {"GIT_MEMEX_DEBUG": "1"}),
])
def test_debug_shows_the_traceback(patched: dict[str, str], argv: tuple[str, ...],
                                   env: dict[str, str]) -> None:
    proc = run_cli(*argv, env={**patched, **env})
    assert proc.returncode == Exit.INTERNAL
    err = proc.stderr.decode()
    assert "Traceback (most recent call last)" in err
    assert "RuntimeError: boom in the library" in err
    assert "This is a bug in git-memex" in err and "for the traceback" not in err


def test_failure_and_usage_keep_1_and_2(repo: Path) -> None:
    missing = run_cli("git-memex", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert missing.returncode == Exit.FAILED
    assert missing.stderr.decode().startswith("git-memex: error:")
    usage = run_cli("git-memex-list", "--no-such-option")
    assert usage.returncode == Exit.USAGE
    assert run_cli("git-memex-list").returncode == Exit.OK


@pytest.mark.parametrize("argv", [("git-memex-capture",), ("git-memex", "capture")])
def test_ctrl_c_exits_130(patched: dict[str, str], argv: tuple[str, ...]) -> None:
    # A shell's background job starts with Ctrl-C ignored, and an ignored signal stays
    # ignored across exec (Python then installs no handler): the child gets Ctrl-C's
    # default back, as a terminal's foreground process has it.
    proc = subprocess.Popen([str(BIN / argv[0]), *argv[1:]], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **patched},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stderr is not None and proc.stdin is not None
    assert proc.stderr.readline() == b"reading stdin\n"  # blocked on stdin from here on
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == Exit.INTERRUPTED  # never a hang: its output is small
    err = proc.stderr.read().decode()
    proc.stdin.close()
    assert "interrupted" in err and "Traceback" not in err


def test_debug_flag_is_taken_only_before_a_double_dash(monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    monkeypatch.setenv("GIT_MEMEX_DEBUG", "0")  # restored after the test
    assert take_debug_flag(["capture", "--", "--debug"]) == ["capture", "--", "--debug"]
    assert os.environ["GIT_MEMEX_DEBUG"] == "0"
    assert take_debug_flag(["--debug", "list", "--json"]) == ["list", "--json"]
    assert os.environ["GIT_MEMEX_DEBUG"] == "1"
