"""pr-status against a loopback GitHub, and the git-only "merged" detection."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memex.workflows.hosts import github
from tests.helpers import fakegithub as gh
from tests.helpers import invoke
from tests.helpers.farm import Dev, make_team, snapshot

BRANCH = "memex/review"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[gh.FakeGitHub]:
    with gh.serve() as server:
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", "test-token")
        yield server


@pytest.fixture(autouse=True)
def no_real_github(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GITHUB_API_URL", "GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(key, raising=False)


def on_branch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              origin: str = "git@github.com:Acme/App.git") -> tuple[Dev, str]:
    """alice submits one memory on a pushed review branch."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",), origin=origin)
    alice.use()
    mid = alice.draft("Releases are tagged vX.Y.Z from main")
    alice.run("submit", "--branch-name", BRANCH, mid)  # records branch.<name>.memexBase
    alice.git("push", "-q", "-u", "origin", BRANCH)
    return alice, mid


def status(dev: Dev, *args: str, code: int = 0) -> dict[str, object]:
    dev.use()
    result = invoke("pr-status", "--json", *args)
    assert result.exit_code == code, result.stderr + result.stdout
    data: dict[str, object] = json.loads(result.stdout)
    return data


def actions(report: dict[str, object]) -> list[tuple[str, str]]:
    memories = report["memories"]
    assert isinstance(memories, list)
    return [(m["action"], m["review_state"]) for m in memories]


def test_approved_pr_maps_to_approved_and_commits_memory_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: gh.FakeGitHub) -> None:
    alice, mid = on_branch(tmp_path, monkeypatch)
    fake.pulls([gh.pull(12, BRANCH)], {12: [gh.review("carol", "COMMENTED"),
                                            gh.review("carol", "APPROVED"),
                                            gh.review("dave", "COMMENTED")]})
    before = snapshot(alice.clone / ".memex")
    report = status(alice)
    assert actions(report) == [("approve", "proposed")]
    assert report["pr"]["number"] == 12 and report["pr"]["review"] == "approved"  # type: ignore[index]
    assert snapshot(alice.clone / ".memex") == before  # a report changes nothing
    path, query, headers = fake.requests[0]
    assert path == "/repos/Acme/App/pulls"
    assert query["head"] == [f"Acme:{BRANCH}"] and query["state"] == ["all"]
    assert headers["Authorization"] == "Bearer test-token"
    assert fake.requests[1][0] == "/repos/Acme/App/pulls/12/reviews"

    (alice.clone / "staged.txt").write_text("mine\n", encoding="utf-8")
    alice.git("add", "staged.txt")
    report = status(alice, "--apply", "--commit")
    assert report["applied"] == [mid] and report["commit"]
    shown = alice.run("show", mid)
    assert shown["review_state"] == "approved" and shown["approved_by"] == "github:carol"
    assert shown["review_history"][-1]["note"] == "PR #12 approved by @carol"
    assert alice.git("show", "--name-only", "--format=", "HEAD").split() == [f".memex/{mid}.md"]
    assert alice.git("diff", "--cached", "--name-only") == "staged.txt\n"


def test_merged_pr_maps_to_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     fake: gh.FakeGitHub) -> None:
    alice, mid = on_branch(tmp_path, monkeypatch)
    fake.pulls([gh.pull(7, BRANCH, state="closed", updated="2026-11-01T00:00:00Z"),
                gh.pull(12, BRANCH, state="closed", merged=True)],
               {12: [gh.review("carol", "APPROVED")]})
    report = status(alice, "--apply")
    assert report["pr"]["number"] == 12 and report["pr"]["merged"] is True  # type: ignore[index]
    assert actions(report) == [("publish", "published")]
    assert "git commit" in str(report["hint"])
    shown = alice.run("show", mid)
    assert shown["review_state"] == "published" and shown["approved_by"] == "github:carol"
    assert shown["review_history"][-1]["note"] == "PR #12 merged, approved by @carol"


def test_changes_requested_is_a_suggestion_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                fake: gh.FakeGitHub) -> None:
    alice, mid = on_branch(tmp_path, monkeypatch)
    fake.pulls([gh.pull(12, BRANCH)], {12: [gh.review("carol", "APPROVED"),
                                            gh.review("erin", "CHANGES_REQUESTED")]})
    before = snapshot(alice.clone / ".memex")
    report = status(alice, "--apply")
    assert actions(report) == [("suggest", "proposed")]
    assert "@erin" in report["memories"][0]["reason"]  # type: ignore[index]
    assert report["applied"] == [] and snapshot(alice.clone / ".memex") == before


def test_no_pr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: gh.FakeGitHub) -> None:
    alice, _ = on_branch(tmp_path, monkeypatch)
    fake.pulls([])
    report = status(alice)
    assert report["pr"] is None and report["host_error"] is None
    assert actions(report) == [("none", "proposed")]
    alice.use()
    assert "no PR for branch memex/review on Acme/App" in invoke("pr-status").stdout


@pytest.mark.parametrize(("status_code", "body", "kind", "words"), [
    (401, {"message": "Bad credentials"}, "auth", "GITHUB_TOKEN"),
    (404, {"message": "Not Found"}, "not_found", "Acme/App"),
    (500, {"message": "Server Error"}, "server", "500"),
    (200, b"{not json", "malformed", "not JSON"),
    (200, {"message": "an object, not a list"}, "malformed", "not a list"),
])
def test_host_errors_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  fake: gh.FakeGitHub, status_code: int, body: object,
                                  kind: str, words: str) -> None:
    alice, _ = on_branch(tmp_path, monkeypatch)
    fake.answer("/repos/Acme/App/pulls", body, status=status_code)
    report = status(alice, code=1)
    error = report["host_error"]
    assert isinstance(error, dict) and error["kind"] == kind and words in error["message"]
    assert actions(report) == [("none", "proposed")]  # git still reports the memories
    assert any("the PR" in str(x) for x in report["could_not_see"])  # type: ignore[attr-defined]
    alice.use()
    result = invoke("pr-status")
    assert result.exit_code == 1 and "could not see the PR" in result.stderr
    assert "Traceback" not in result.stderr


def test_malformed_reviews(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           fake: gh.FakeGitHub) -> None:
    alice, _ = on_branch(tmp_path, monkeypatch)
    fake.pulls([gh.pull(12, BRANCH)], {12: ["not a review"]})  # type: ignore[list-item]
    report = status(alice, code=1)
    assert report["host_error"]["kind"] == "malformed"  # type: ignore[index]


def test_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                 fake: gh.FakeGitHub) -> None:
    alice, _ = on_branch(tmp_path, monkeypatch)
    alice.git("config", "memex.hostTimeout", "0.3")
    fake.answer("/repos/Acme/App/pulls", [], delay=2.0)
    report = status(alice, code=1)
    error = report["host_error"]
    assert isinstance(error, dict) and error["kind"] == "timeout"
    assert "0.3s" in error["message"]


def test_unreachable_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with gh.serve() as server:
        url = server.url
    monkeypatch.setenv("GITHUB_API_URL", url)  # the port is closed now
    alice, _ = on_branch(tmp_path, monkeypatch)
    report = status(alice, code=1)
    assert report["host_error"]["kind"] == "network"  # type: ignore[index]


# ---------------------------------------------------------------- git alone

NO_API = "git@git.example.com:Acme/App.git"


def test_git_only_fast_forward_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Git alone sees the merge but never supplies an approval: the memory stays
    proposed with a note (once); an approved one is published, its approver kept."""
    alice, mid = on_branch(tmp_path, monkeypatch, origin=NO_API)
    report = status(alice)
    assert actions(report) == [("none", "proposed")] and report["tip_merged"] is False
    assert any("no PR provider for git.example.com" in str(x)
               for x in report["could_not_see"])  # type: ignore[attr-defined]
    alice.git("push", "-q", "origin", f"{BRANCH}:main")
    alice.git("fetch", "-q")
    report = status(alice, "--apply")
    assert report["tip_merged"] is True and actions(report) == [("note", "proposed")]
    assert "git memex promote" in report["memories"][0]["reason"]  # type: ignore[index]
    shown = alice.run("show", mid)
    assert shown["review_state"] == "proposed" and shown.get("approved_by") is None
    assert shown["review_history"][-1]["note"].endswith("no approval recorded")
    assert shown["review_history"][-1]["note"].startswith("merged into origin/main at ")
    assert actions(status(alice, "--apply")) == [("none", "proposed")]  # noted once
    assert len(alice.run("show", mid)["review_history"]) == len(shown["review_history"])
    alice.run("promote", mid)
    report = status(alice, "--apply")
    assert actions(report) == [("publish", "published")]
    shown = alice.run("show", mid)
    assert shown["review_state"] == "published"
    assert shown["approved_by"] == "local:alice@example.com"


def test_git_only_squash_merge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alice, mid = on_branch(tmp_path, monkeypatch, origin=NO_API)
    alice.git("switch", "-q", "main")
    alice.git("merge", "-q", "--squash", BRANCH)
    alice.git("commit", "-q", "-m", "Memories (squashed)")
    alice.git("push", "-q", "origin", "main")
    alice.git("switch", "-q", BRANCH)
    report = status(alice)
    assert report["tip_merged"] is False
    assert actions(report) == [("note", "proposed")]  # same blob ids on main: merged


def test_on_default_branch_uses_git_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         fake: gh.FakeGitHub) -> None:
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",),
                            origin="git@github.com:Acme/App.git")
    mid = alice.draft("Straight to main")
    alice.run("submit", mid)
    report = status(alice)
    assert fake.requests == [] and actions(report) == [("none", "proposed")]
    alice.git("push", "-q")
    assert actions(status(alice)) == [("note", "proposed")]


def test_commit_needs_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = on_branch(tmp_path, monkeypatch, origin=NO_API)
    alice.use()
    assert invoke("pr-status", "--commit").exit_code == 2


def test_review_summary_latest_per_reviewer() -> None:
    def states(*pairs: tuple[str, str]) -> str:
        return github.summarise_reviews([gh.review(u, s) for u, s in pairs])[0]

    assert states() == "pending"
    assert states(("a", "APPROVED"), ("a", "COMMENTED")) == "approved"
    assert states(("a", "CHANGES_REQUESTED"), ("a", "APPROVED")) == "approved"
    assert states(("a", "APPROVED"), ("b", "CHANGES_REQUESTED")) == "changes_requested"
    assert states(("a", "APPROVED"), ("a", "DISMISSED")) == "pending"
    assert github.pick_pull([gh.pull(1, "x", "closed"), gh.pull(2, "x")], "x")["number"] == 2  # type: ignore[index]
    assert github.pick_pull([gh.pull(1, "other")], "x") is None


# ---------------------------------------------------------------- review needs evidence


def test_new_branch_without_commits_publishes_nothing(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced on main: a fresh branch's tip is on main, so every proposed memory
    went to published with approved_by = whoever ran the command."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",), origin=NO_API)
    mid = alice.draft("Straight to main")
    alice.run("submit", mid)
    alice.git("push", "-q")
    alice.git("switch", "-q", "-c", "feature")
    before = snapshot(alice.clone / ".memex")
    report = status(alice, "--apply")
    assert report["memories"] == [] and report["applied"] == []
    assert snapshot(alice.clone / ".memex") == before
    assert alice.run("show", mid)["review_state"] == "proposed"


def test_host_merge_without_approving_review_is_git_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: gh.FakeGitHub) -> None:
    alice, mid = on_branch(tmp_path, monkeypatch)
    fake.pulls([gh.pull(12, BRANCH, state="closed", merged=True)],
               {12: [gh.review("carol", "COMMENTED")]})
    report = status(alice, "--apply")
    assert actions(report) == [("note", "proposed")]
    shown = alice.run("show", mid)
    assert shown["review_state"] == "proposed" and shown.get("approved_by") is None


def test_unreachable_host_changes_no_file(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced on main: exit 1 with the files already changed."""
    with gh.serve() as server:
        url = server.url
    monkeypatch.setenv("GITHUB_API_URL", url)
    alice, mid = on_branch(tmp_path, monkeypatch)
    alice.run("promote", mid)
    alice.git("commit", "-q", "-am", "approve")
    alice.git("push", "-q", "origin", f"{BRANCH}:main")  # merged: git would publish it
    alice.git("fetch", "-q")
    before = snapshot(alice.clone)
    report = status(alice, "--apply", code=1)
    assert report["applied"] == [] and snapshot(alice.clone) == before


def test_failed_commit_changes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       fake: gh.FakeGitHub) -> None:
    alice, mid = on_branch(tmp_path, monkeypatch)
    fake.pulls([gh.pull(12, BRANCH)], {12: [gh.review("carol", "APPROVED")]})
    hook = alice.clone / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho no >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    before = snapshot(alice.clone)
    assert "nothing changed" in alice.fails("pr-status", "--apply", "--commit")
    assert snapshot(alice.clone) == before


def test_plain_branch_uses_the_fork_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """A branch made with plain `git switch -c` (no memexBase): its own commits start at
    `git merge-base --fork-point`, which survives a squash merge of another PR."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",), origin=NO_API)
    alice.git("switch", "-q", "-c", "plain")
    mid = alice.draft("Made on a plain branch")
    alice.run("submit", mid)
    alice.run("promote", mid)
    alice.git("commit", "-q", "-am", "approve")
    alice.git("push", "-q", "origin", "plain")
    alice.git("switch", "-q", "main")
    alice.git("merge", "-q", "--squash", "plain")
    alice.git("commit", "-q", "-m", "squashed")
    alice.git("push", "-q", "origin", "main")
    alice.git("switch", "-q", "plain")
    report = status(alice, "--apply")
    assert report["base"] and actions(report) == [("publish", "published")]
