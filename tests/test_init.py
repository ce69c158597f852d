from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import run_cli
from tests.helpers import invoke, invoke_json


def test_init_creates_folder_and_config(repo: Path) -> None:
    out = invoke_json("init", "--yes")
    assert (repo / ".memex" / "README.md").exists()
    cfg = subprocess.run(["git", "config", "-f", ".memexconfig", "memex.dir"],
                         capture_output=True, text=True).stdout.strip()
    assert cfg == ".memex"
    assert out["changed"]


def test_init_twice_changes_nothing(repo: Path) -> None:
    invoke_json("init", "--yes")
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    second = invoke_json("init", "--yes")
    assert second["changed"] == []
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert after == before
    assert "nothing changed" in invoke("init", "--yes").stdout


def test_init_without_tty_never_prompts(repo: Path) -> None:
    proc = run_cli("git", "memex", "init", input_bytes=b"should-not-be-read\n")
    assert proc.returncode == 0, proc.stderr
    assert (repo / ".memex").is_dir() and not (repo / "should-not-be-read").exists()


def test_init_custom_dir(repo: Path) -> None:
    invoke_json("init", "--dir", "knowledge")
    assert (repo / "knowledge" / "README.md").exists()
    cfg = subprocess.run(["git", "config", "-f", ".memexconfig", "memex.dir"],
                         capture_output=True, text=True).stdout.strip()
    assert cfg == "knowledge"
    assert invoke("init", "--dir", "../outside").exit_code == 2


def test_init_prompts_on_a_terminal(repo: Path) -> None:
    import pty

    from tests.conftest import BIN

    proc_out = []
    pid, fd = pty.fork()
    if pid == 0:  # child: a real terminal on stdin
        import os

        os.execv(str(BIN / "git-memex-init"), ["git-memex-init"])
    import os

    os.write(fd, b"notes\n")
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        proc_out.append(chunk)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Memory folder" in b"".join(proc_out)
    assert (repo / "notes" / "README.md").exists()


def test_init_outside_git(nogit_dir: Path) -> None:
    result = invoke("init", "--yes")
    assert result.exit_code == 1 and "not inside a git repository" in result.stderr
