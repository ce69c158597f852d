"""SIGKILL at every I/O step (issue 13, item 5): a traced run counts the steps a command
makes at the seam (memex.storage.iostep: file writes, git, the index's transactions, the
usage log); then each step in turn is killed, the next writing command runs, and
nothing is half-done: no partial or stray temp file, every memory file reads, the
index opens undamaged and holds every file, and a submit is fully done or undone."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.index import build
from memex.storage import iostep
from tests.helpers import git, invoke, invoke_json


def _forked(base: Path, args: list[str], **extra: str) -> int:
    """Run `git-memex ARGS` in a forked copy of this process (the CLI's code, without a
    new interpreter's start: each kill costs a fork); returns the exit status, negative
    for the signal that ended it."""
    build.forget_connections()  # no SQLite connection crosses the fork
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads, 3.12+
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit or a SIGKILL
        code = 70
        try:
            os.environ.update(GIT_MEMEX_HOME=str(base / "memex-home"), **extra)
            os.chdir(base / "repo")
            iostep.reset()
            code = invoke(*args).exit_code
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _template(tmp_path: Path, repo: Path, memex_home: Path) -> tuple[Path, dict[str, str]]:
    invoke_json("init")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    ids = {
        "draft": invoke_json("capture", "the draft a kill must not corrupt")["id"],
        "other": invoke_json("capture", "another draft to update")["id"],
    }
    # Every run from the template makes the same steps: no file is recent enough for
    # the index to hash it again ("racy clean", build.RACY_NS) depending on the clock.
    hour_ago = time.time() - 3600
    for path in [*memex_home.rglob("*.md"), *(repo / ".memex").glob("*.md")]:
        os.utime(path, (hour_ago, hour_ago))
    assert invoke("reindex").exit_code == 0
    build.forget_connections()
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


def _index_holds_every_file(base: Path, after: str) -> None:
    """The index a kill interrupted opens without damage and answers for every file."""
    files = {p.stem for p in (base / "memex-home").glob("outbox/*/*.md")}
    files |= {p.stem for p in (base / "repo" / ".memex").glob("0*.md")}
    listed = invoke("list", "--include", "all", "--json")
    assert listed.exit_code == 0, listed.stderr
    assert {m["id"] for m in json.loads(listed.stdout)} == files
    assert after in invoke("search", "next command after kill", "--json").stdout




def _submit_all_or_nothing(base: Path, draft: str) -> None:
    in_repo = (base / "repo" / ".memex" / f"{draft}.md").exists()
    outbox = list((base / "memex-home").glob(f"outbox/*/{draft}.md"))
    committed = draft in git("log", "--name-only", "--format=", cwd=base / "repo")
    if committed:
        assert in_repo and not outbox, "committed, but the outbox copy is still there"
    else:
        assert not in_repo and outbox, "not committed, but the outbox copy is gone"
    assert ".memex" not in git("status", "--porcelain", cwd=base / "repo")


# The next command after every kill is itself a capture.
COMMANDS: dict[str, Callable[[dict[str, str]], list[str]]] = {
    "capture": lambda ids: ["capture", "a capture a kill must not half-write"],
    "reindex": lambda ids: ["reindex", "--full"],
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
    assert _forked(traced, args, GIT_MEMEX_FAULT_LOG=str(log)) == 0
    steps = len(log.read_text(encoding="utf-8").splitlines())
    assert steps >= 4
    killed = 0
    for n in range(1, steps + 1):
        base = tmp_path / f"kill{n}"
        shutil.copytree(template, base, symlinks=True)
        assert _forked(base, args, GIT_MEMEX_FAULT=f"kill@{n}") == -signal.SIGKILL, n
        killed += 1
        (base / "repo" / ".git" / "index.lock").unlink(missing_ok=True)  # git's own
        monkeypatch.setenv("GIT_MEMEX_HOME", str(base / "memex-home"))
        monkeypatch.chdir(base / "repo")
        after = invoke("capture", f"the next command after kill {n}", "--json")
        assert after.exit_code == 0, after.stderr  # no traceback
        assert "index" not in after.stderr, after.stderr  # never damaged, never rebuilt
        _no_debris(base)
        _index_holds_every_file(base, json.loads(after.stdout)["id"])
        build.forget_connections()
        if name == "submit":
            _submit_all_or_nothing(base, ids["draft"])
        shutil.rmtree(base)
    assert killed == steps
