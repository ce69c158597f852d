"""The CI examples in docs/ run as written: their `run:` / `script:` lines execute in a
real clone, in bash, with the environment each CI gives a job, against loopback
servers answering like GitHub and GitLab (the install line is skipped: the package
under test is on PATH already)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import fakehosts as fh
from tests.helpers.farm import Dev, make_team
from tests.helpers.memfiles import memory, write

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@pytest.fixture
def server() -> Iterator[fh.FakeHost]:
    with fh.serve(fh.FakeHost()) as fake:
        yield fake


def pr_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, origin: str) -> Dev:
    """alice's clone on branch `feature`, one new memory committed on it."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",), origin=origin)
    alice.use()
    alice.git("switch", "-q", "-c", "feature")
    write(alice.clone, memory(title="Entry point", body="app.py prints the greeting.",
                              tags=["app"], paths=["app.py"]))
    alice.git("add", "-A")
    alice.git("commit", "-q", "-m", "a memory")
    return alice


def run(lines: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "GITLAB_", "GITEA_", "FORGEJO_", "CI_", "GH_"))}
    full.update(env)
    return subprocess.run(["bash", "-e", "-c", "\n".join(lines)], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------- GitHub Actions


def github_steps(context: dict[str, str]) -> list[tuple[str, dict[str, str], str]]:
    """(name, env, run) of each step after the install, `${{ }}` filled from context."""
    workflow: Any = yaml.safe_load((ROOT / "docs" / "ci-example.yml").read_text())
    assert workflow["permissions"]["pull-requests"] == "write"
    steps = workflow["jobs"]["verify"]["steps"]
    out = []
    for step in steps:
        if "run" not in step or "pip install" in step["run"]:
            continue
        env = {k: _EXPR.sub(lambda m: context[m.group(1)], str(v))
               for k, v in (step.get("env") or {}).items()}
        out.append((step["name"], env, step["run"]))
    assert [name for name, _, _ in out] == ["Verify memory files",
                                            "Review the memories of this pull request"]
    return out


def run_github(dev: Dev, fake: fh.FakeHost) -> list[subprocess.CompletedProcess[str]]:
    context = {"secrets.GITHUB_TOKEN": "ghs-job-token", "github.base_ref": "main"}
    job_env = {"GITHUB_ACTIONS": "true", "GITHUB_API_URL": fake.url,
               "GITHUB_REF": "refs/pull/12/merge", "GITHUB_EVENT_NAME": "pull_request",
               "GIT_MEMEX_HOME": str(dev.home)}
    return [run([script], dev.clone, {**job_env, **env})
            for _, env, script in github_steps(context)]


def test_github_example_posts_and_updates_one_comment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: fh.FakeHost) -> None:
    dev = pr_clone(tmp_path, monkeypatch, "git@github.com:Acme/App.git")
    thread = fh.github_comments(server, 12)
    verify, review = run_github(dev, server)
    assert verify.returncode == 0, verify.stderr
    assert review.returncode == 0, review.stderr
    assert len(thread.items) == 1
    body = thread.items[0]["body"]
    assert body.startswith("<!-- git-memex review -->") and "Entry point" in body
    auth = {k.lower(): v for k, v in server.requests[-1][2].items()}["authorization"]
    assert auth == "Bearer ghs-job-token"
    # a push with a secret: the same comment is edited, the step fails
    write(dev.clone, memory(title="CI token", body=f"token {TOKEN}", tags=["ci"]))
    dev.git("add", "-A")
    dev.git("commit", "-q", "-m", "oops")
    _, review = run_github(dev, server)
    assert review.returncode == 1
    assert len(thread.items) == 1 and "blocking" in thread.items[0]["body"]
    assert TOKEN not in thread.items[0]["body"]


def test_github_fork_token_cannot_post(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       server: fh.FakeHost) -> None:
    dev = pr_clone(tmp_path, monkeypatch, "git@github.com:Acme/App.git")
    path = "/repos/Acme/App/issues/12/comments"
    server.answer(path, [])
    server.answer(path, {"message": "Resource not accessible by integration",
                         "documentation_url": "https://docs.github.com/rest"},
                  status=403, method="POST")
    _, review = run_github(dev, server)
    assert review.returncode == 0
    warnings = [x for x in review.stderr.splitlines() if "cannot post" in x]
    assert len(warnings) == 1 and "403" in warnings[0]


# ---------------------------------------------------------------- GitLab CI


def gitlab_script() -> list[str]:
    config: Any = yaml.safe_load((ROOT / "docs" / "gitlab-ci-example.yml").read_text())
    job = config["memex"]
    assert job["rules"][0]["if"] == '$CI_PIPELINE_SOURCE == "merge_request_event"'
    return [line for line in job["script"] if not line.startswith("pip install")]


def test_gitlab_example_posts_one_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       server: fh.FakeHost) -> None:
    dev = pr_clone(tmp_path, monkeypatch, "https://gitlab.example.com/acme/app.git")
    dev.git("update-ref", "-d", "refs/remotes/origin/main")  # a CI checkout has no base
    thread = fh.gitlab_notes(server, 7)
    env = {"GITLAB_CI": "true", "CI_API_V4_URL": f"{server.url}/api/v4",
           "CI_PIPELINE_SOURCE": "merge_request_event", "CI_MERGE_REQUEST_IID": "7",
           "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main", "CI_JOB_TOKEN": "job-token",
           "GITLAB_TOKEN": "glpat-project-token", "GIT_MEMEX_HOME": str(dev.home)}
    first = run(gitlab_script(), dev.clone, env)
    assert first.returncode == 0, first.stderr
    second = run(gitlab_script(), dev.clone, env)
    assert second.returncode == 0, second.stderr
    assert len(thread.items) == 1 and "Entry point" in thread.items[0]["body"]
    headers = {k.lower(): v for k, v in server.requests[-1][2].items()}
    assert headers["private-token"] == "glpat-project-token"
    # only the job token: the note cannot be posted (one line), the job still passes
    server.answer("/api/v4/projects/acme%2Fapp/merge_requests/7/notes",
                  {"message": "403 Forbidden"}, status=403, method="POST")
    thread.items.clear()
    no_token = dict(env)
    no_token.pop("GITLAB_TOKEN")
    third = run(gitlab_script(), dev.clone, no_token)
    assert third.returncode == 0, third.stderr
    assert sum("cannot post the review" in x for x in third.stderr.splitlines()) == 1
