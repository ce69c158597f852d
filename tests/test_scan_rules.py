"""`scan` with no arguments scans the memory folder; the commit-time scan refuses
personal and private memories as well as secrets (rule 2)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import git_proc, invoke
from tests.helpers.memfiles import commit_all, memory, write
from tests.test_hooks import BIN, TOKEN, _env, _local_config


def test_scan_without_arguments_scans_the_memory_folder(repo: Path) -> None:
    write(repo, memory())
    write(repo, memory(title="Second"))
    clean = invoke("scan")
    assert clean.exit_code == 0
    assert "scanned 2 memory files: no unmasked secret" in clean.stderr
    leak = write(repo, memory(body=f"the key is {TOKEN}"))
    result = invoke("scan")
    assert result.exit_code == 1
    assert f".memex/{leak.name}" in result.stderr and "unmasked github-token" in result.stderr
    assert TOKEN not in result.stderr
    assert invoke("scan", "--json").exit_code == 1


def test_scan_without_arguments_outside_git_says_why(nogit_dir: Path) -> None:
    result = invoke("scan")
    assert result.exit_code == 1 and "not inside a git repository" in result.stderr


@pytest.mark.parametrize("fields,expected", [
    ({"scope": "personal", "review_state": None}, "a personal memory (scope: personal)"),
    ({"visibility": "private"}, "a visibility: private memory"),
])
def test_plain_pre_commit_hook_refuses_personal_and_private(
        repo: Path, fields: dict[str, object], expected: str) -> None:
    assert invoke("init", "--yes", "--git-hooks").exit_code == 0
    commit_all(repo, "init")
    path = write(repo, memory(**fields))
    git_proc("add", "-A", cwd=repo)
    proc = git_proc("commit", "-m", "oops", check=False, cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f".memex/{path.name}:" in proc.stderr and expected in proc.stderr
    assert "git rm --cached" in proc.stderr
    assert invoke("scan", "--staged").exit_code == 1
    git_proc("rm", "-q", "--cached", str(path), cwd=repo)
    path.unlink()
    write(repo, memory())  # a shared memory still commits
    git_proc("add", "-A", cwd=repo)
    assert git_proc("commit", "-q", "-m", "fine", check=False, cwd=repo).returncode == 0


def test_framework_secret_scan_refuses_a_personal_memory(repo: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    _local_config(repo)
    subprocess.run([str(BIN / "pre-commit"), "install"], cwd=repo, env=env, check=True,
                   capture_output=True)
    commit_all(repo, "config")
    path = write(repo, memory(scope="personal", review_state=None))
    git_proc("add", "-A", cwd=repo)
    proc = subprocess.run([str(BIN / "pre-commit"), "run", "memex-secret-scan"], cwd=repo,
                          env=env, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 1, output
    assert f".memex/{path.name}:" in output and "scope: personal" in output
    commit = subprocess.run(["git", "commit", "-m", "oops"], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert commit.returncode != 0


def test_the_summary_counts_the_files_it_blocks() -> None:
    """A personal copy outside the memory folder is no memory file the scan counted: the
    summary said "in 0 memory files" (fix30b's note); it counts the files it names."""
    from memex.workflows import scan

    copy = scan.SecretFinding("notes.md", 1, "personal-copy", "personal memory X")
    line = scan.summary(0, [copy, scan.SecretFinding("notes.md", 3, "github-token")])
    assert "0 memory files" not in line
    assert "in 1 file;" in line
    both = scan.summary(2, [copy, scan.SecretFinding(".memex/a.md", 2, "github-token")])
    assert "in 2 files;" in both
