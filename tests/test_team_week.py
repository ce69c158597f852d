"""A team's first week, end to end over real git (issue 12): a bare remote, two clones
with their own identities and homes, PR branches, a squash merge and a rebase merge made
on the remote side with plain git, pr-status against the loopback GitHub, pull
--drop-merged, a concurrent edit merged by the driver without git-memex on PATH, two
successors, a rebase in progress, imports from another repo and from an open-memex
folder. At the end every memory is accounted for: none lost, none approved or published
without an approval on record."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter
from tests.helpers import fakegithub as gh
from tests.helpers import invoke
from tests.helpers.farm import git, make_team
from tests.test_team_branches import merge_on_remote, rebase_in_progress

ORIGIN = "git@github.com:Acme/App.git"
OPEN_MEMEX = Path(__file__).resolve().parents[2] / "shared" / "bench" / "open-memex-store"
PLAIN = {**os.environ, "PATH": "/usr/bin:/bin"}  # a GUI client's PATH: no git-memex


def plain_git(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=clone, capture_output=True, text=True,
                          env=PLAIN)


def test_team_week(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    remote, (alice, bob) = make_team(tmp_path, monkeypatch, origin=ORIGIN)
    for dev in (alice, bob):
        dev.git("config", "memex.identity", f"github:{dev.name}")
    created: dict[str, str] = {}  # id -> what happened to it

    # Monday: alice sets the repo up (committed attributes), bob gets it; both register
    alice.run("init", "--yes")
    alice.git("add", "-A")
    alice.git("commit", "-q", "-m", "git-memex: merge driver attributes")
    alice.git("push", "-q")
    bob.git("pull", "-q")
    bob.run("init", "--yes")

    with gh.serve() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GITHUB_TOKEN", "t")
        # Tuesday: alice's PR branch, approved by carol on the host, squash-merged
        a1 = alice.draft("Releases are tagged vX.Y.Z from main")
        branch = alice.run("submit", "--branch", a1)["branch"]
        alice.git("push", "-q", "-u", "origin", branch)
        fake.pulls([gh.pull(1, branch)], {1: [gh.review("carol", "APPROVED")]})
        alice.use()
        assert invoke("pr-status", "--apply", "--commit").exit_code == 0
        assert alice.run("show", a1)["approved_by"] == "github:carol"
        alice.git("push", "-q")
        merge_on_remote(tmp_path, branch, "squash")
        fake.pulls([gh.pull(1, branch, state="closed", merged=True)],
                   {1: [gh.review("carol", "APPROVED")]})
        alice.git("fetch", "-q")
        report = alice.run("pr-status", "--apply", "--commit")
        assert [m["action"] for m in report["memories"]] == ["publish"]
        shown = alice.run("show", a1)
        assert (shown["review_state"], shown["approved_by"]) == ("published", "github:carol")
        created[a1] = "published on alice's PR branch; approved on main (squash)"
        alice.git("switch", "-q", "main")
        alice.run("pull")  # main had nothing of its own: a fast-forward

        # Wednesday: bob submits on main (a notice), his PR is rebase-merged; pull drops
        b1 = bob.draft("CI runs on two cores")
        bob.use()
        result = invoke("submit", b1)
        assert result.exit_code == 0 and "a pull request needs a branch" in result.stderr
        bob.git("push", "-q", "origin", "HEAD:bob-review")
        merge_on_remote(tmp_path, "bob-review", "rebase")
        assert "--drop-merged" in bob.fails("pull")
        assert len(bob.run("pull", "--drop-merged")["dropped"]) == 1
        created[b1] = "proposed on main (rebase merge)"
        # git alone saw bob's merge: it stays proposed, nobody approved it
        assert bob.run("show", b1)["review_state"] == "proposed"
        alice.run("pull")

        # Thursday: a concurrent edit, merged by the driver from a GUI client's PATH
        alice.run("update", b1, "--tag", "ci")
        alice.git("commit", "-q", "-am", "tag it")
        alice.git("push", "-q")
        bob.run("update", b1, "--importance", "high")
        bob.git("commit", "-q", "-am", "matters")
        merged = plain_git(bob.clone, "pull", "--no-rebase", "--no-edit", "-q")
        assert merged.returncode == 0, merged.stdout + merged.stderr
        both = bob.run("show", b1)
        assert "ci" in both["tags"] and both["importance"] == "high"
        bob.git("push", "-q")
        alice.run("pull")

        # Friday: both supersede the released rule; bob keeps alice's successor
        a2 = alice.run("supersede", a1, "Releases are tagged vX.Y.Z from release/*")["id"]
        alice.run("submit", a2)
        alice.git("push", "-q")
        b2 = bob.run("supersede", a1, "Releases are tagged by CI")["id"]
        bob.run("submit", b2)
        bob.git("fetch", "-q")
        bob.git("merge", "origin/main", "-m", "merge", check=False)
        assert bob.git("ls-files", "-u").strip()
        bob.run("resolve", a1, "--keep", a2)
        bob.git("commit", "-q", "--no-edit")
        bob.git("push", "-q")
        created[a2] = "the kept successor"
        created[b2] = "superseded by the kept successor"

        # and a rebase in progress refuses what --abort would throw away
        c1 = bob.draft("Weekend deploys are frozen")
        rebase_in_progress(bob)
        assert "a rebase is in progress" in bob.fails("submit", c1)
        assert "a rebase is in progress" in bob.fails("promote", b1)
        bob.git("rebase", "--abort")
        bob.git("switch", "-q", "main")
        bob.run("submit", c1)
        bob.git("push", "-q")
        created[c1] = "proposed after the rebase was aborted"

    # Saturday: imports land as untrusted drafts in *this* repo's outbox, whatever they
    # claimed: one from another repo's export, and an open-memex folder's files
    other = tmp_path / "other"
    git("init", "-q", "-b", "main", str(other), cwd=tmp_path)
    monkeypatch.chdir(other)
    o1 = json.loads(invoke("capture", "Deploys need two approvals", "--json").stdout)["id"]
    assert invoke("export", "-o", str(tmp_path / "other.jsonl")).exit_code == 0
    imported = alice.run("import", str(tmp_path / "other.jsonl"))
    assert [m["id"] for m in imported["imported"]] == [o1]
    if OPEN_MEMEX.is_dir():
        foreign = alice.run("import", str(OPEN_MEMEX / "repo"))["imported"]
        assert len(foreign) == 7
        for item in foreign:
            shown = alice.run("show", item["id"])
            assert (shown["review_state"], shown["trust_level"]) == ("draft", "untrusted")
    alice.run("pull")
    submitted = alice.run("submit", "--all")
    alice.git("push", "-q")
    for item in submitted["submitted"]:
        created[item["id"]] = "imported, then submitted for review"
    assert o1 in created

    # Every memory accounted for, on a fresh clone of the remote
    fresh = tmp_path / "auditor"
    git("clone", "-q", str(remote), str(fresh), cwd=tmp_path)
    files = {p.stem: frontmatter.load(p.read_text(encoding="utf-8"))[0]
             for p in (fresh / ".memex").glob("*.md") if p.name != "README.md"}
    assert set(files) == set(created), created
    for memory in files.values():
        if memory.review_state in ("approved", "published"):
            assert memory.approved_by, memory.id  # never without an approval on record
    assert files[a1].approved_by == "github:carol" and files[a1].superseded_by == a2
    assert files[b2].superseded_by == a2 and files[b1].review_state == "proposed"
    assert {"ci"} <= set(files[b1].tags) and files[b1].importance == "high"
    monkeypatch.chdir(fresh)
    verified = invoke("verify")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
