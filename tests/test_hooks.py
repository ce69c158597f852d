"""The hooks: the real pre-commit framework, the plain git hooks, their installation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from memex.workflows import githooks
from tests.helpers import git_proc, invoke
from tests.helpers.memfiles import commit_all, memory, write

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MASKED = "ghp_" + "x" * 36
BIN = Path(sys.executable).parent


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _local_config(repo: Path) -> None:
    """The published hook definitions as a `repo: local` config (language: system runs the
    git-memex on PATH instead of building the hook's own environment)."""
    published = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    hooks = [{**hook, "language": "system"} for hook in published]
    config = {"repos": [{"repo": "local", "hooks": hooks}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))


def test_pre_commit_framework_blocks_a_planted_secret(repo: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    _local_config(repo)
    subprocess.run([str(BIN / "pre-commit"), "install"], cwd=repo, env=env, check=True,
                   capture_output=True)
    commit_all(repo, "config")
    path = write(repo, memory(body=f"deploy with\n\n{TOKEN}"))
    git_proc("add", "-A", cwd=repo)
    proc = subprocess.run(["git", "commit", "-m", "leak"], cwd=repo, env=env,
                          capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    line = path.read_text().splitlines().index(TOKEN) + 1
    assert f".memex/{path.name}:{line}: unmasked github-token" in output
    assert TOKEN not in output
    path.write_text(path.read_text().replace(TOKEN, MASKED))
    git_proc("add", "-A", cwd=repo)
    ok = subprocess.run(["git", "commit", "-m", "masked"], cwd=repo, env=env,
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "git-memex verify" in ok.stdout + ok.stderr


def test_published_hook_runs_in_its_own_environment(repo: Path, tmp_path: Path) -> None:
    """`pre-commit try-repo` builds the hook's Python environment from this checkout."""
    env = _env(tmp_path)
    path = write(repo, memory(body=f"key {TOKEN}"))
    write(repo, memory(body=f"key {MASKED}"))
    git_proc("add", "-A", cwd=repo)
    proc = subprocess.run([str(BIN / "pre-commit"), "try-repo", str(ROOT), "memex-secret-scan",
                           "--all-files"], cwd=repo, env=env, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    if "An error has occurred" in output and "pip" in output:
        pytest.skip("the hook environment could not be installed here (no package index)")
    assert proc.returncode == 1, output
    assert f".memex/{path.name}" in output and "unmasked github-token" in output
    assert output.count("unmasked") == 1
    assert TOKEN not in output


def test_plain_git_hooks_install_and_scan(repo: Path) -> None:
    result = invoke("init", "--yes", "--git-hooks")
    assert result.exit_code == 0
    hooks = repo / ".git" / "hooks"
    assert all(os.access(hooks / name, os.X_OK) for name in githooks.HOOKS)
    commit_all(repo, "init")
    path = write(repo, memory(body=f"<private>my home address</private> and {TOKEN}"))
    git_proc("add", "-A", cwd=repo)
    proc = git_proc("commit", "-m", "leak", check=False, cwd=repo)
    assert proc.returncode == 1
    assert "unmasked github-token" in proc.stderr and "unredacted <private> block" in proc.stderr
    assert TOKEN not in proc.stderr and "home address" not in proc.stderr
    # the index is what gets committed: fixing only the working tree is not enough
    path.write_text(path.read_text().replace(TOKEN, MASKED))
    assert git_proc("commit", "-m", "leak", check=False, cwd=repo).returncode == 1
    path.write_text(path.read_text().replace("<private>my home address</private>", "[REDACTED]"))
    git_proc("add", "-A", cwd=repo)
    assert git_proc("commit", "-q", "-m", "clean", cwd=repo).returncode == 0
    assert "ok   hooks" in invoke("doctor").stdout


def test_refresh_hooks_never_fail_the_git_command(repo: Path, tmp_path: Path) -> None:
    invoke("init", "--yes", "--git-hooks")
    commit_all(repo, "init")
    hooks = repo / ".git" / "hooks"
    for name, args in (("post-merge", ["0"]), ("post-checkout", ["a", "b", "1"])):
        assert subprocess.run([str(hooks / name), *args], cwd=repo).returncode == 0
    fake = tmp_path / "fakebin"
    fake.mkdir()
    calls = tmp_path / "calls"
    script = fake / "git-memex-reindex"
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\nexit 3\n")
    script.chmod(0o755)
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    git_proc("checkout", "-q", "-b", "other", cwd=repo)
    # reindex beside
    git_proc("config", "memex.hookScanner", str(fake / "git-memex-scan"), cwd=repo)
    proc = subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, env=env)
    assert proc.returncode == 0
    assert calls.read_text().split() == ["--quiet"]
    proc = subprocess.run([str(hooks / "post-checkout"), "a", "b", "0"], cwd=repo, env=env)
    assert proc.returncode == 0 and calls.read_text().split() == ["--quiet"]
    git_proc("config", "--unset", "memex.hookScanner", cwd=repo)  # nothing registered: still exit 0
    assert subprocess.run([str(hooks / "post-merge"), "0"], cwd=repo, env=env).returncode == 0


def test_plain_pre_commit_hook_fails_closed_without_path(repo: Path) -> None:
    """Reproduced on main: without git-memex-scan on PATH the hook printed "scan
    skipped" and a real-looking AWS key was committed."""
    invoke("init", "--yes", "--git-hooks")
    commit_all(repo, "init")
    scanner = git_proc("config", "--get", "memex.hookScanner", cwd=repo).stdout.strip()
    assert Path(scanner).is_absolute() and os.access(scanner, os.X_OK)
    aws = "AKIA" + "Q3ZB7N2XK4LMP9RT"  # not AWS's documented EXAMPLE key
    write(repo, memory(body=f"aws key {aws}"))
    git_proc("add", "-A", cwd=repo)
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(["git", "commit", "-m", "leak"], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "aws" in proc.stderr.lower(), proc.stderr  # scanned
    git_proc("config", "memex.hookScanner", "/nonexistent/git-memex-scan", cwd=repo)
    proc = subprocess.run(["git", "commit", "-m", "leak"], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "git commit --no-verify" in proc.stderr
    assert "doctor --fix" in proc.stderr
    doctor = invoke("doctor")
    assert doctor.exit_code == 1 and "fail hooks" in doctor.stdout
    fixed = invoke("doctor", "--fix")
    assert "fixed: set git config memex.hookScanner" in fixed.stderr
    assert git_proc("config", "--get", "memex.hookScanner", cwd=repo).stdout.strip() == scanner
    git_proc("config", "--unset", "memex.hookScanner", cwd=repo)
    proc = subprocess.run(["git", "commit", "-m", "leak"], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "unset" in proc.stderr
    assert git_proc("log", "--format=%s", cwd=repo).stdout.split("\n")[0] == "init"


def test_install_leaves_a_foreign_hook_alone_and_is_idempotent(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho mine\n")
    result = invoke("init", "--yes", "--git-hooks")
    assert "is not git-memex's; left alone" in result.stderr
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    again = invoke("init", "--yes", "--git-hooks", "--json")
    assert again.exit_code == 0 and '"changed": []' in again.stdout


def test_committed_hooks_match_the_package() -> None:
    for name, text in githooks.HOOKS.items():
        assert (ROOT / "hooks" / name).read_text() == text, "run python -m memex.workflows.githooks"


def test_scan_step_on_files_and_staged(repo: Path) -> None:
    leak = write(repo, memory(body=f"x {TOKEN}"))
    other = repo / "notes.md"
    other.write_text(f"{TOKEN}\n")  # outside the memory folder: not ours to judge
    result = invoke("scan", str(leak), str(other))
    assert result.exit_code == 1 and result.stderr.count("unmasked") == 1
    assert invoke("scan", str(other)).exit_code == 0
    assert invoke("scan", "--staged").exit_code == 0  # nothing staged yet
    git_proc("add", str(leak), cwd=repo)
    assert invoke("scan", "--staged").exit_code == 1


def test_ci_example_runs_verify() -> None:
    workflow = yaml.safe_load((ROOT / "docs" / "ci-example.yml").read_text())
    steps = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert "git memex verify" in steps


@pytest.mark.parametrize("name", ["prepare-commit-msg", "pre-applypatch"])
def test_doctor_fix_adds_a_hook_an_older_install_lacks(repo: Path, name: str) -> None:
    """audit30, fix30b: a clone set up before a newer hook existed has the others;
    doctor says the hooks are out of date and --fix adds the missing one."""
    assert invoke("init", "--yes", "--git-hooks").exit_code == 0
    missing = repo / ".git" / "hooks" / name
    missing.unlink()
    hooks = next(c for c in json.loads(invoke("doctor", "--json").stdout)["checks"]
                 if c["name"] == "hooks")
    assert hooks["level"] == "warn"
    invoke("doctor", "--fix")
    assert githooks.is_ours(missing) and os.access(missing, os.X_OK)


@pytest.mark.parametrize("name", ["prepare-commit-msg", "pre-applypatch"])
def test_doctor_says_how_to_chain_a_scan_from_a_hook_of_your_own(
        repo: Path, name: str) -> None:
    """fix30b (review of audit30): with a prepare-commit-msg hook of the user's own,
    doctor warned "not installed: prepare-commit-msg" forever and suggested
    `init --git-hooks`, which leaves that hook alone again. It names the hook and the
    line to add to it; once that line is there, the hooks are fine."""
    hook = repo / ".git" / "hooks" / name
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho mine >/dev/null\n")
    hook.chmod(0o755)
    assert invoke("init", "--yes", "--git-hooks").exit_code == 0

    def check() -> dict[str, str]:
        return next(c for c in json.loads(invoke("doctor", "--json").stdout)["checks"]
                    if c["name"] == "hooks")

    found = check()
    assert found["level"] == "warn"
    assert "init --git-hooks" not in found["message"] + (found["hint"] or "")
    assert str(hook) in found["message"] + (found["hint"] or "")
    line = githooks.chain_line(name)
    assert line in found["message"] + (found["hint"] or "")
    hook.write_text(f"#!/bin/sh\n{line}\necho mine >/dev/null\n")
    assert check()["level"] == "ok"
    proc = subprocess.run([str(hook)], cwd=repo, capture_output=True, text=True,
                          env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert proc.returncode == 0, proc.stderr  # nothing staged, no rebase: passes


def test_a_chained_refresh_line_runs_nothing_when_no_scanner_is_set(repo: Path) -> None:
    """Final read of stop 30: the chain line for post-merge/post-checkout took the
    reindex step beside `memex.hookScanner` without checking it was set, so with it unset
    it ran ./git-memex-reindex from the work tree's top: a file the repository ships."""
    ran = repo / "ran"
    shipped = repo / "git-memex-reindex"
    shipped.write_text(f"#!/bin/sh\ntouch '{ran}'\n", encoding="utf-8")
    shipped.chmod(0o755)
    for name in ("post-merge", "post-checkout"):
        subprocess.run(["sh", "-c", githooks.chain_line(name)], cwd=repo, check=True,
                       timeout=60)
    assert not ran.exists()
    installed = repo.parent / "bin"  # with the scanner set, its reindex step runs
    installed.mkdir()
    refreshed = repo.parent / "refreshed"
    (installed / "git-memex-reindex").write_text(f"#!/bin/sh\ntouch '{refreshed}'\n",
                                                 encoding="utf-8")
    (installed / "git-memex-reindex").chmod(0o755)
    git_proc("config", "memex.hookScanner", str(installed / "git-memex-scan"), cwd=repo)
    subprocess.run(["sh", "-c", githooks.chain_line("post-merge")], cwd=repo, check=True,
                   timeout=60)
    assert refreshed.exists() and not ran.exists()
