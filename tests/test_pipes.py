"""A reader that stops early (`| head -1`) ends a step quietly with its own exit code;
`pull` outside a repository says what pull needs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN
from tests.helpers import invoke
from tests.helpers.memfiles import memory, write


def _closed_reader(*args: str, cwd: Path) -> tuple[int, bytes]:
    """Run a real executable whose stdout pipe has no reader from the start."""
    proc = subprocess.Popen([str(BIN / args[0]), *args[1:]], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the child writes anything: its first write gets EPIPE
    err = proc.stderr.read()
    return proc.wait(timeout=60), err


@pytest.mark.parametrize("program", [("git-memex", "sync-status"), ("git-memex-sync-status",),
                                     ("git-memex", "list", "--json")])
def test_a_closed_stdout_exits_quietly(repo: Path, program: tuple[str, ...]) -> None:
    write(repo, memory())
    code, err = _closed_reader(*program, cwd=repo)
    assert code == 0, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Exception" not in err


@pytest.mark.parametrize("program", [("git-memex-search", "body", "--json"),
                                     ("git-memex-show", "ID"), ("git-memex-context",),
                                     ("git-memex", "search", "body", "--json")])
def test_a_fast_path_step_exits_quietly_on_a_closed_stdout(repo: Path,
                                                           program: tuple[str, ...]) -> None:
    """The steps that run without click (search, show, context) guard stdout too, as
    their own executables and under `git-memex`."""
    mem = memory(body="a body to find")
    write(repo, mem)
    code, err = _closed_reader(*(mem.id if arg == "ID" else arg for arg in program),
                               cwd=repo)
    assert code == 0, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"Exception" not in err


def test_a_closed_stdout_keeps_a_failing_verdict(repo: Path) -> None:
    (repo / ".memex").mkdir()
    (repo / ".memex" / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md").write_text("garbage\n")
    code, err = _closed_reader("git-memex", "verify", cwd=repo)
    assert code == 1 and b"Traceback" not in err


def test_pull_outside_a_repo_has_its_own_message(nogit_dir: Path) -> None:
    result = invoke("pull")
    assert result.exit_code == 1
    assert "pull fetches and fast-forwards" in result.stderr
    assert "submit" not in result.stderr
