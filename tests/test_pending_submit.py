"""Reads while a killed submit is unsettled (issue 13, item 5): every read answers from
the pre-submit state, whatever path it takes (the index, a file read by id, an export),
until the next writing command finishes or undoes the submit."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from memex.index import build
from tests.helpers import invoke, invoke_json

NOTICE = "interrupted submit is pending"


def _run(base: Path, args: list[str], **extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_MEMEX_HOME=str(base / "memex-home"), **extra)
    return subprocess.run(["git-memex", *args], cwd=base / "repo", env=env,
                          capture_output=True, text=True)


def _killed_submit(tmp_path: Path, repo: Path, memex_home: Path,
                   monkeypatch: pytest.MonkeyPatch, at: str) -> tuple[Path, str, str]:
    """A repo memory OLD, committed; a draft NEW in the outbox superseding it; `submit
    NEW` SIGKILLed at the step named `at`. Returns (copy, OLD, NEW), cwd in the copy."""
    invoke_json("init")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    old = invoke_json("capture", "the build cache lives in the runner's tmp folder")["id"]
    assert invoke("submit", old).exit_code == 0
    new = invoke_json("supersede", old, "the build cache lives in the shared volume")["id"]
    build.forget_connections()
    template = tmp_path / "template"
    template.mkdir()
    shutil.copytree(repo, template / "repo", symlinks=True)
    shutil.copytree(memex_home, template / "memex-home", symlinks=True)
    traced = tmp_path / "traced"
    shutil.copytree(template, traced, symlinks=True)
    log = tmp_path / "steps.log"
    assert _run(traced, ["submit", new], GIT_MEMEX_FAULT_LOG=str(log)).returncode == 0
    names = [line.split(" ", 1)[1] for line in log.read_text(encoding="utf-8").splitlines()]
    base = tmp_path / "killed"
    shutil.copytree(template, base, symlinks=True)
    killed = _run(base, ["submit", new], GIT_MEMEX_FAULT=f"kill@{names.index(at) + 1}")
    assert killed.returncode == -signal.SIGKILL
    folder = base / "repo" / ".memex"
    assert (folder / f"{new}.md").exists()  # half-done: the new repo file is written,
    assert "superseded_by" in (folder / f"{old}.md").read_text(encoding="utf-8")  # and OLD
    monkeypatch.setenv("GIT_MEMEX_HOME", str(base / "memex-home"))
    monkeypatch.chdir(base / "repo")
    return base, old, new


def _reads_show_the_pre_submit_state(old: str, new: str) -> None:
    shown = invoke("show", new, "--json")
    assert shown.exit_code == 0, shown.stderr
    assert NOTICE in shown.stderr
    data = json.loads(shown.stdout)
    assert (data["home"], data["review_state"]) == ("outbox", "draft")
    shown = invoke("show", old, "--json")
    assert NOTICE in shown.stderr
    data = json.loads(shown.stdout)
    assert data["status"] == "active" and not data.get("superseded_by"), data
    listed = invoke("list", "--json")
    assert NOTICE in listed.stderr
    rows = {m["id"]: m for m in json.loads(listed.stdout)}
    assert rows[old]["status"] == "active" and rows[new]["review_state"] == "draft"
    found = invoke("search", "runner", "--json")
    assert NOTICE in found.stderr
    assert old in found.stdout
    exported = invoke("export")
    assert exported.exit_code == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()[1:]]
    texts = {line["name"]: line["text"] for line in lines}
    assert "superseded_by" not in texts[f"{old}.md"]
    assert [line["home"] for line in lines if line["name"] == f"{new}.md"] == ["outbox"]


def test_reads_before_the_commit_see_the_pre_submit_state(
        tmp_path: Path, repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, old, new = _killed_submit(tmp_path, repo, memex_home, monkeypatch, "git commit")
    _reads_show_the_pre_submit_state(old, new)
    assert invoke("capture", "the next write settles it").exit_code == 0  # undone
    assert not (base / "repo" / ".memex" / f"{new}.md").exists()
    rows = {m["id"]: m for m in invoke_json("list")}
    assert rows[old]["status"] == "active" and rows[new]["review_state"] == "draft"
    build.forget_connections()


def test_reads_after_the_commit_see_the_pre_submit_state_until_settled(
        tmp_path: Path, repo: Path, memex_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the commit, before the outbox copy went: still the pre-submit state
    for reads; once settled (forward), the index holds what the commit holds."""
    base, old, new = _killed_submit(tmp_path, repo, memex_home, monkeypatch,
                                    "git committed")
    _reads_show_the_pre_submit_state(old, new)
    assert invoke("capture", "the next write settles it").exit_code == 0  # finished
    assert not list((base / "memex-home").glob(f"outbox/*/{new}.md"))
    rows = {m["id"]: m for m in invoke_json("list", "--include", "all")}
    assert rows[old]["status"] == "superseded", rows[old]
    assert rows[new]["review_state"] == "proposed"
    shown = invoke_json("show", old)
    assert shown["status"] == "superseded"
    build.forget_connections()


def test_submit_passes_a_verify_pre_commit_hook(repo: Path) -> None:
    """The published `memex-verify` hook runs `git-memex verify` inside submit's own
    commit, while the new repo file and its outbox draft both exist and the index
    leaves the file out: neither is a failure of the submit in flight."""
    invoke_json("init")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec '{shutil.which('git-memex')}' verify\n")
    hook.chmod(0o755)
    draft = invoke_json("capture", "a fact submitted through a verify hook")["id"]
    result = invoke("submit", draft)
    assert result.exit_code == 0, result.stderr
    assert (repo / ".memex" / f"{draft}.md").exists()
    shown = subprocess.run(["git", "log", "--name-only", "--format="], cwd=repo,
                           capture_output=True, text=True, check=True).stdout
    assert f".memex/{draft}.md" in shown
    assert subprocess.run(["git-memex", "verify"], cwd=repo).returncode == 0
    build.forget_connections()
