"""SIGKILL at every I/O step (issue 13, item 5): a traced run counts the steps a write
makes at the store's seam (memex.storage.iostep); then each step in turn is killed, the
next writing command runs, and nothing is half-done: no partial or stray temp file,
every memory file reads, and a submit is fully done or fully undone."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.index import build
from tests.helpers import git, invoke, invoke_json

Check = Callable[[Path, Path, int], None]


def _env(base: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_MEMEX_HOME"] = str(base / "memex-home")
    env.update(extra)
    return env


def _run(base: Path, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git-memex", *args], cwd=base / "repo", env=_env(base, **extra),
                          capture_output=True, text=True)


def _template(tmp_path: Path, repo: Path, memex_home: Path) -> tuple[Path, dict[str, str]]:
    invoke_json("init")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    ids = {
        "draft": invoke_json("capture", "the draft a kill must not corrupt")["id"],
        "other": invoke_json("capture", "another draft to update")["id"],
    }
    base = tmp_path / "template"
    base.mkdir()
    shutil.copytree(repo, base / "repo", symlinks=True)
    shutil.copytree(memex_home, base / "memex-home", symlinks=True)
    return base, ids


def _all_files(base: Path) -> list[Path]:
    return [p for p in base.rglob("*") if p.is_file()]


def _no_debris(base: Path) -> None:
    stray = [p for p in _all_files(base) if p.name.endswith((".memex-tmp", ".tmp"))]
    assert not stray, stray
    for path in (base / "memex-home").rglob("*.md"):
        frontmatter.load(path.read_text(encoding="utf-8"))
    for path in (base / "repo" / ".memex").glob("0*.md"):
        frontmatter.load(path.read_text(encoding="utf-8"))
    assert not (base / "repo" / ".git" / "memex-submit.json").exists()




def _submit_all_or_nothing(base: Path, draft: str) -> None:
    in_repo = (base / "repo" / ".memex" / f"{draft}.md").exists()
    outbox = list((base / "memex-home").glob(f"outbox/*/{draft}.md"))
    committed = draft in git("log", "--name-only", "--format=", cwd=base / "repo")
    if committed:
        assert in_repo and not outbox, "committed, but the outbox copy is still there"
    else:
        assert not in_repo and outbox, "not committed, but the outbox copy is gone"
    assert ".memex" not in git("status", "--porcelain", cwd=base / "repo")


# A capture's steps are the first steps of supersede (which captures the successor,
# then retires the old one), so supersede covers them; the next command after every
# kill is itself a capture.
COMMANDS: dict[str, Callable[[dict[str, str]], list[str]]] = {
    "update": lambda ids: ["update", ids["other"], "--tag", "killed"],
    "supersede": lambda ids: ["supersede", ids["other"], "a successor text"],
    "submit": lambda ids: ["submit", ids["draft"]],
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_kill_at_every_io_step(tmp_path: Path, repo: Path, memex_home: Path,
                               name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    template, ids = _template(tmp_path, repo, memex_home)
    args = COMMANDS[name](ids)
    traced = tmp_path / "traced"
    shutil.copytree(template, traced, symlinks=True)
    log = tmp_path / "steps.log"
    done = _run(traced, args, GIT_MEMEX_FAULT_LOG=str(log))
    assert done.returncode == 0, done.stderr
    steps = len(log.read_text(encoding="utf-8").splitlines())
    assert steps >= 4
    killed = 0
    for n in range(1, steps + 1):
        base = tmp_path / f"kill{n}"
        shutil.copytree(template, base, symlinks=True)
        proc = _run(base, args, GIT_MEMEX_FAULT=f"kill@{n}")
        assert proc.returncode == -signal.SIGKILL, (n, proc.stderr)
        killed += 1
        (base / "repo" / ".git" / "index.lock").unlink(missing_ok=True)  # git's own
        monkeypatch.setenv("GIT_MEMEX_HOME", str(base / "memex-home"))
        monkeypatch.chdir(base / "repo")
        after = invoke("capture", f"the next command after kill {n}")  # no traceback
        assert after.exit_code == 0, after.stderr
        build.forget_connections()
        _no_debris(base)
        if name == "submit":
            _submit_all_or_nothing(base, ids["draft"])
        shutil.rmtree(base)
    assert killed == steps


def test_reads_answer_from_the_pre_submit_state(tmp_path: Path, repo: Path,
                                                memex_home: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Killed after the repo file is written and before the commit: until the next write
    settles it, reads show the draft as a draft, with a one-line notice."""
    template, ids = _template(tmp_path, repo, memex_home)
    traced = tmp_path / "traced"
    shutil.copytree(template, traced, symlinks=True)
    log = tmp_path / "steps.log"
    assert _run(traced, ["submit", ids["draft"]], GIT_MEMEX_FAULT_LOG=str(log)).returncode == 0
    names = [line.split(" ", 1)[1] for line in log.read_text(encoding="utf-8").splitlines()]
    commit_step = names.index("git commit") + 1
    base = tmp_path / "killed"
    shutil.copytree(template, base, symlinks=True)
    killed = _run(base, ["submit", ids["draft"]], GIT_MEMEX_FAULT=f"kill@{commit_step}")
    assert killed.returncode == -signal.SIGKILL
    assert (base / "repo" / ".memex" / f"{ids['draft']}.md").exists()  # half-done
    monkeypatch.setenv("GIT_MEMEX_HOME", str(base / "memex-home"))
    monkeypatch.chdir(base / "repo")
    listed = invoke("list", "--json")
    assert "interrupted submit is pending" in listed.stderr
    states = {m["id"]: m["review_state"] for m in json.loads(listed.stdout)}
    assert states[ids["draft"]] == "draft"
    assert invoke("capture", "the next write settles it").exit_code == 0
    assert not (base / "repo" / ".memex" / f"{ids['draft']}.md").exists()
    assert "pending" not in invoke("list").stderr
    build.forget_connections()
