"""propose and submit over a real clone: all or nothing, memory paths only."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memex.core import frontmatter
from tests.helpers.farm import Dev, make_team, snapshot


@pytest.fixture
def alice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dev:
    _, devs = make_team(tmp_path, monkeypatch, ("alice",))
    return devs[0].use()


def outbox_files(dev: Dev) -> list[Path]:
    return sorted((dev.home / "outbox").rglob("*.md"))


def test_propose_copies_personal_to_outbox(alice: Dev) -> None:
    pid = alice.personal("Run the migrations before the test suite", "--tag", "db")
    personal_before = snapshot(alice.home / "personal")
    out = alice.run("propose", pid[:10])
    assert out[0]["created"] is True and out[0]["derived_from"] == pid
    draft_id = out[0]["id"]
    assert draft_id != pid
    assert snapshot(alice.home / "personal") == personal_before
    shown = alice.run("show", draft_id)
    assert shown["review_state"] == "draft" and shown["scope"] == "project"
    assert shown["tags"] == ["db"] and shown["home"] == "outbox"
    assert not list((alice.clone / ".memex").glob("0*.md"))
    again = alice.run("propose", pid)
    assert again[0]["created"] is False and again[0]["id"] == draft_id


def test_propose_refuses_private_and_personal_instructions(alice: Dev) -> None:
    secret = alice.personal("My home wifi layout", "--private")
    rule = alice.personal("Always answer me in French", "--role", "instruction")
    fine = alice.personal("Tests live in tests/")
    err = alice.fails("propose", fine, secret)
    assert "private" in err and "nothing proposed" in err
    assert "binds only you" in alice.fails("propose", rule)
    assert outbox_files(alice) == []
    draft = alice.draft("Something shared")
    assert "propose copies personal memories" in alice.fails("propose", draft)


def test_submit_commits_only_memory_paths_and_keeps_index(alice: Dev) -> None:
    draft = alice.draft("Use pnpm, not npm")
    (alice.clone / "app.py").write_text("print('changed')\n", encoding="utf-8")
    (alice.clone / "staged.txt").write_text("mine\n", encoding="utf-8")
    alice.git("add", "staged.txt", "app.py")
    cached_before = alice.git("diff", "--cached", "--name-status")
    out = alice.run("submit", draft[:10])
    assert out["branch"] == "main" and out["commit"]
    committed = alice.git("show", "--name-only", "--format=", "HEAD").split()
    assert committed == [f".memex/{draft}.md"]
    assert alice.git("diff", "--cached", "--name-status") == cached_before
    assert "staged.txt" in cached_before
    assert outbox_files(alice) == []
    shown = alice.run("show", draft)
    assert shown["review_state"] == "proposed" and shown["home"] == "repo"
    assert shown["proposed_by"] == "local:alice@example.com"
    assert shown["review_history"][-1]["from"] == "draft"
    assert shown["review_history"][-1]["to"] == "proposed"
    assert shown["repo_id"].startswith("git-origin-sha256:")
    assert "push" in " ".join(out["hints"])
    assert alice.git("log", "-1", "--format=%ae") == "alice@example.com\n"


def test_submit_personal_is_refused(alice: Dev) -> None:
    pid = alice.personal("Only mine")
    err = alice.fails("submit", pid)
    assert "personal memories are never submitted" in err and "propose" in err


def _conflicting_setup(alice: Dev) -> tuple[str, str]:
    good = alice.draft("A fine memory to share")
    clash = alice.draft("The draft whose id is taken")
    other = (alice.clone / ".memex" / f"{clash}.md")
    text = (alice.home / "outbox").rglob(f"{clash}.md").__next__().read_text(encoding="utf-8")
    other.write_text(text.replace("The draft whose id is taken", "Different content"),
                     encoding="utf-8")
    return good, clash


def test_rejected_submit_leaves_everything_byte_for_byte(alice: Dev) -> None:
    good, clash = _conflicting_setup(alice)
    (alice.clone / "staged.txt").write_text("mine\n", encoding="utf-8")
    alice.git("add", "staged.txt")
    before = snapshot(alice.clone, alice.home)
    head = alice.git("rev-parse", "HEAD")
    err = alice.fails("submit", good, clash)
    assert "already exists in the repo with other content" in err and "nothing moved" in err
    assert snapshot(alice.clone, alice.home) == before
    assert alice.git("rev-parse", "HEAD") == head


def test_failing_pre_commit_hook_restores_everything(alice: Dev) -> None:
    old = alice.draft("The old way")
    alice.run("submit", old)
    new_id = alice.run("supersede", old, "The new way")["id"]
    extra = alice.draft("Another one")
    hook = alice.clone / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n", encoding="utf-8")
    os.chmod(hook, 0o755)
    (alice.clone / "staged.txt").write_text("mine\n", encoding="utf-8")
    alice.git("add", "staged.txt")
    before = snapshot(alice.clone, alice.home)
    head = alice.git("rev-parse", "HEAD")
    err = alice.fails("submit", new_id, extra)
    assert "hook says no" in err and "nothing moved" in err
    assert snapshot(alice.clone, alice.home) == before
    assert alice.git("rev-parse", "HEAD") == head
    assert alice.git("status", "--porcelain") == "A  staged.txt\n"
    hook.unlink()
    out = alice.run("submit", "--all")
    assert sorted(x["id"] for x in out["submitted"]) == sorted([new_id, extra])
    assert [r["id"] for r in out["retired"]] == [old]
    committed = set(alice.git("show", "--name-only", "--format=", "HEAD").split())
    assert committed == {f".memex/{i}.md" for i in (old, new_id, extra)}
    shown_old = alice.run("show", old)
    assert shown_old["status"] == "superseded" and shown_old["superseded_by"] == new_id
    assert alice.run("show", new_id)["supersedes"] == old
    listed = [m["id"] for m in alice.run("list")]
    assert old not in listed and new_id in listed


@pytest.mark.parametrize("state", ["detached", "merge"])
def test_submit_refuses_detached_head_and_merge_in_progress(alice: Dev, state: str) -> None:
    draft = alice.draft("Blocked by git state")
    if state == "detached":
        alice.git("checkout", "-q", "--detach")
        expected = "detached"
    else:
        head = alice.git("rev-parse", "HEAD").strip()
        (alice.clone / ".git" / "MERGE_HEAD").write_text(head + "\n", encoding="utf-8")
        expected = "merge is in progress"
    before = snapshot(alice.clone, alice.home)
    assert expected in alice.fails("submit", draft)
    assert snapshot(alice.clone, alice.home) == before


def test_submit_nothing_and_bad_ids(alice: Dev) -> None:
    assert "nothing to submit" in alice.fails("submit", "--all")
    assert alice.fails("submit", code=2)
    assert "not a memory id" in alice.fails("submit", "not-an-id!", code=2)
    draft = alice.draft("Once only")
    alice.run("submit", draft)
    assert "already in the repo" in alice.fails("submit", draft)


def test_local_approve_lands_approved(alice: Dev) -> None:
    pid = alice.personal("Solo rule: squash before merge")
    draft = alice.run("propose", pid, "--local-approve")[0]["id"]
    alice.run("submit", draft)
    shown = alice.run("show", draft)
    assert shown["review_state"] == "approved"
    assert shown["approved_by"] == "local:alice@example.com"
    assert [h["to"] for h in shown["review_history"]] == ["proposed", "approved"]
    assert "local_approve" not in (alice.clone / ".memex" / f"{draft}.md").read_text("utf-8")


def test_submit_redacts_a_hand_edited_draft(alice: Dev) -> None:
    draft = alice.draft("The deploy key is below")
    path = next((alice.home / "outbox").rglob(f"{draft}.md"))
    token = "ghp_" + "A1b2" * 9
    path.write_text(path.read_text("utf-8").replace("The deploy key is below",
                                                    f"The deploy key is {token}"), "utf-8")
    alice.use()
    from tests.helpers import invoke

    result = invoke("submit", draft, "--json")
    assert result.exit_code == 0, result.stderr
    assert "masked" in " ".join(json.loads(result.stdout)["notices"])
    text = (alice.clone / ".memex" / f"{draft}.md").read_text("utf-8")
    assert token not in text and "ghp_xxxx" in text
    memory, _ = frontmatter.load(text)
    assert memory.review_state == "proposed"


def test_interrupted_submit_is_finished_by_the_next_one(alice: Dev) -> None:
    draft = alice.draft("Written, then the process was killed")
    outbox_copy = next((alice.home / "outbox").rglob(f"{draft}.md"))
    # what a kill between the file write and the commit leaves behind
    (alice.clone / ".memex" / f"{draft}.md").write_bytes(outbox_copy.read_bytes())
    out = alice.run("submit", draft)
    assert out["already_in_repo"] == [draft] and out["commit"]
    assert alice.git("show", "--name-only", "--format=", "HEAD").split() == [
        f".memex/{draft}.md"]
    assert outbox_files(alice) == []


def test_submit_into_a_repo_without_memory_folder_rolls_back_cleanly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.helpers import git as plain_git

    repo = tmp_path / "bare-project"
    repo.mkdir()
    plain_git("init", "-q", "-b", "main", cwd=repo)
    plain_git("commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    dev = Dev("solo", repo, tmp_path / "home-solo", monkeypatch)
    draft = dev.draft("First memory of this repo")
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    os.chmod(hook, 0o755)
    before = snapshot(repo, dev.home)
    assert "nothing moved" in dev.fails("submit", draft)
    assert snapshot(repo, dev.home) == before and not (repo / ".memex").exists()
    hook.unlink()
    assert dev.run("submit", draft)["commit"]


def test_human_output(alice: Dev) -> None:
    from tests.helpers import invoke

    pid = alice.personal("Readable output for people")
    result = invoke("propose", pid)
    assert result.exit_code == 0 and result.stdout.startswith("proposed ")
    assert "next: git memex submit" in result.stderr
    draft = alice.run("list", "--scope", "project")[0]["id"]
    alice.use()
    result = invoke("submit", draft[:10])
    assert result.exit_code == 0, result.stderr
    assert f"submitted {draft[:10]} [proposed]" in result.stdout
    assert "commit " in result.stdout and "on main" in result.stdout
    assert "next: git push" in result.stderr and "submit --branch" in result.stderr
    result = invoke("promote", draft[:10])
    assert "proposed -> approved" in result.stdout and "git commit -m" in result.stderr


def test_ids_resolve_by_prefix_in_one_listing(alice: Dev) -> None:
    a = alice.personal("First of two")
    b = alice.personal("Second of two")
    assert "no memory matches" in alice.fails("propose", a, "01ZZZZZZZZ")
    common = next(i for i in range(26) if a[i] != b[i])
    assert "ambiguous" in alice.fails("propose", a[:common], code=2)
    out = alice.run("propose", a[:common + 1], b)
    assert [x["derived_from"] for x in out] == [a, b]
