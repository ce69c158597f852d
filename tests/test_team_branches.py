"""The PR branch flow (issue 12): submit --branch, pull --drop-merged after squash and
rebase merges, and the sequencer states that submit, pull, promote and update refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import invoke
from tests.helpers.farm import Dev, git, make_team

NOW = "2026-12-01T10:00:00Z"


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", NOW)


def merge_on_remote(tmp_path: Path, branch: str, how: str) -> None:
    """A maintainer merges `branch` into main on the remote side with plain git."""
    maint = tmp_path / "maintainer"
    if not maint.exists():
        git("clone", "-q", str(tmp_path / "remote.git"), str(maint), cwd=tmp_path)
        git("config", "user.email", "maint@example.com", cwd=maint)
        git("config", "user.name", "Maint", cwd=maint)
    git("fetch", "-q", "origin", cwd=maint)
    git("reset", "-q", "--hard", "origin/main", cwd=maint)
    (maint / "other.txt").write_text(f"another PR merged before {branch}\n")
    git("add", "other.txt", cwd=maint)
    git("commit", "-q", "-m", "another PR", cwd=maint)
    if how == "squash":
        git("merge", "-q", "--squash", f"origin/{branch}", cwd=maint)
        git("commit", "-q", "-m", f"Memories (#{branch}) squashed", cwd=maint)
    else:  # rebase: the branch's commits replayed onto main, new shas
        git("switch", "-q", "-C", "work", f"origin/{branch}", cwd=maint)
        git("rebase", "-q", "main", cwd=maint)
        git("switch", "-q", "main", cwd=maint)
        git("merge", "-q", "--ff-only", "work", cwd=maint)
    git("push", "-q", "origin", "main", cwd=maint)


def test_submit_branch_names_switches_and_records_the_base(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    start = alice.git("rev-parse", "HEAD").strip()
    first = alice.draft("Tag releases vX.Y.Z")
    alice.use()
    result = invoke("submit", "--branch", first)
    assert result.exit_code == 0, result.stderr
    name = "memex/alice-example.com/2026-12-01"
    assert alice.git("branch", "--show-current").strip() == name
    assert alice.git("config", f"branch.{name}.memexBase").strip() == start
    assert alice.git("rev-parse", "main").strip() == start  # main untouched
    assert f"git push -u origin {name}" in result.stderr
    assert f"gh pr create --fill --base main --head {name}" in result.stderr
    alice.git("switch", "-q", "main")
    second = alice.draft("CI runs on two cores")
    assert alice.run("submit", "--branch", second)["branch"] == f"{name}-2"
    alice.git("switch", "-q", "main")
    (alice.clone / ".memexconfig").write_text(
        "[memex]\n\tdir = .memex\n\tbranchPattern = review/{user}-{date}\n")
    third = alice.draft("Docs live in docs/")
    assert alice.run("submit", "--branch", third)["branch"] == \
        "review/alice-example.com-2026-12-01"
    alice.git("switch", "-q", "main")
    fourth = alice.draft("One more")
    assert alice.run("submit", "--branch-name", "mine/x", fourth)["branch"] == "mine/x"
    alice.git("switch", "-q", "main")
    fifth = alice.draft("And another")
    assert "already exists" in alice.fails("submit", "--branch-name", "mine/x", fifth)
    assert alice.fails("submit", "--branch-name", "bad..name", fifth, code=2)
    # without a flag nothing makes a branch; onto the default branch: a notice
    alice.use()
    result = invoke("submit", fifth)
    assert result.exit_code == 0 and alice.git("branch", "--show-current").strip() == "main"
    assert "a pull request needs a branch" in result.stderr and "--branch" in result.stderr


def test_submit_branch_failure_puts_you_back(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    draft = alice.draft("Refused by a hook")
    hook = alice.clone / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    assert "nothing moved" in alice.fails("submit", "--branch", draft)
    assert alice.git("branch", "--show-current").strip() == "main"
    assert alice.git("branch", "--list", "memex/*").strip() == ""
    assert alice.git("status", "--porcelain").strip() == ""


@pytest.mark.parametrize("how", ["squash", "rebase"])
def test_pull_drop_merged_after_squash_or_rebase(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 how: str) -> None:
    """Reproduced on main: after the PR of memories submitted on main was squash-merged,
    local main had diverged and pull refused with no way forward but git surgery."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    mid = alice.draft("Releases are tagged from main")
    alice.run("submit", mid)
    alice.git("push", "-q", "origin", "HEAD:review")
    alice.run("promote", mid)  # a review-only commit, as pr-status --commit makes
    alice.git("commit", "-q", "-am", "memex: record review state")
    merge_on_remote(tmp_path, "review", how)
    message = alice.fails("pull")
    assert "already holds" in message and "--drop-merged" in message
    assert "(merged)" in message and "(review fields only)" in message
    before = alice.git("rev-parse", "HEAD")
    assert alice.git("rev-parse", "HEAD") == before  # nothing changed
    (alice.clone / "notes.txt").write_text("untracked, kept\n")
    receipt = alice.run("pull", "--drop-merged")
    assert alice.git("rev-parse", "HEAD") == alice.git("rev-parse", "origin/main")
    assert len(receipt["dropped"]) == 2
    assert (alice.clone / "notes.txt").read_text() == "untracked, kept\n"
    assert alice.run("show", mid)["review_state"] == "proposed"  # the merged file


def test_pull_refuses_what_upstream_does_not_hold(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    mid = alice.draft("Squash me")
    alice.run("submit", mid)
    alice.git("push", "-q", "origin", "HEAD:review")
    merge_on_remote(tmp_path, "review", "squash")
    (alice.clone / "app.py").write_text("print('local work')\n")
    alice.git("commit", "-q", "-am", "local code")
    message = alice.fails("pull", "--drop-merged")
    assert "diverged" in message and "app.py, not only memory files" in message
    alice.git("reset", "-q", "--hard", "HEAD~1")
    alice.run("update", mid, "--body", "An edit nobody merged")
    alice.git("commit", "-q", "-am", "edit")
    message = alice.fails("pull", "--drop-merged")
    assert "body" in message and "is not on origin/main" in message
    alice.git("reset", "-q", "--hard", "HEAD~1")
    (alice.clone / "other.txt").write_text("mine\n")  # upstream brings other.txt
    message = alice.fails("pull", "--drop-merged")
    assert "uncommitted work would be lost" in message
    assert (alice.clone / "other.txt").read_text() == "mine\n"
    (alice.clone / "other.txt").unlink()
    (alice.clone / ".memex" / f"{mid}.md").write_text("dirty\n")  # same file both sides
    alice.run("pull", "--drop-merged")  # reset --keep keeps the edit
    assert (alice.clone / ".memex" / f"{mid}.md").read_text() == "dirty\n"


def rebase_in_progress(dev: Dev) -> None:
    dev.git("switch", "-q", "-c", "topic")
    (dev.clone / "app.py").write_text("print('topic')\n")
    dev.git("commit", "-q", "-am", "topic")
    dev.git("switch", "-q", "main")
    (dev.clone / "app.py").write_text("print('main')\n")
    dev.git("commit", "-q", "-am", "main")
    dev.git("switch", "-q", "topic")
    dev.git("rebase", "main", check=False)
    assert (dev.clone / ".git" / "rebase-merge").is_dir()


def test_sequencer_states_are_named_and_refused(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced on main: during a rebase submit said "HEAD is detached", and promote
    and update wrote tracked files that `git rebase --abort` then threw away."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    mid = alice.draft("Shared already")
    alice.run("submit", mid)
    draft = alice.draft("Still a draft")
    rebase_in_progress(alice)
    path = alice.clone / ".memex" / f"{mid}.md"
    before = path.read_bytes()
    for args in (("submit", draft), ("promote", mid), ("update", mid, "--tag", "x"),
                 ("pull",)):
        message = alice.fails(*args)
        assert "a rebase is in progress" in message and "detached" not in message, args
        assert "--force" in message or args == ("pull",)
    assert path.read_bytes() == before
    assert alice.fails("pull", "--force", code=2)  # no --force on pull
    alice.run("update", draft, "--tag", "drafts-go-ahead")  # the outbox is not tracked
    result = invoke("promote", "--force", mid)
    assert result.exit_code == 0 and "a rebase is in progress" in result.stderr
    assert alice.run("show", mid)["review_state"] == "approved"
    alice.git("rebase", "--abort")
    alice.git("switch", "-q", "main")
    alice.git("merge", "-q", "topic", check=False)  # a merge conflict: MERGE_HEAD
    assert "a merge is in progress" in alice.fails("update", mid, "--tag", "y")
