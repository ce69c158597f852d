"""Org scope: memex.orgRepo names a local clone; propose --to org, submit --org, pull --org."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.farm import Dev, git, make_team, snapshot


@pytest.fixture
def org(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Dev, Dev, Path, Path]:
    _, (alice, bob) = make_team(tmp_path, monkeypatch)
    org_remote = tmp_path / "org.git"
    git("init", "-q", "--bare", "-b", "main", str(org_remote), cwd=tmp_path)
    clones = []
    for dev in (alice, bob):
        clone = tmp_path / f"org-{dev.name}"
        git("clone", "-q", str(org_remote), str(clone), cwd=tmp_path)
        git("config", "user.email", f"{dev.name}@example.com", cwd=clone)
        dev.git("config", "memex.orgRepo", str(clone))
        clones.append(clone)
    git("commit", "-q", "--allow-empty", "-m", "org start", cwd=clones[0])
    git("push", "-q", "origin", "main", cwd=clones[0])
    git("pull", "-q", cwd=clones[1])
    return alice, bob, clones[0], clones[1]


def test_org_propose_submit_pull(org: tuple[Dev, Dev, Path, Path]) -> None:
    alice, bob, alice_org, bob_org = org
    project_before = snapshot(alice.clone)
    pid = alice.personal("All services log JSON to stdout")
    draft = alice.run("propose", pid, "--to", "org")[0]
    assert draft["scope"] == "org" and "outbox/org" in draft["path"]
    out = alice.run("submit", "--org", draft["id"])
    assert out["scope"] == "org"
    committed = git("show", "--name-only", "--format=", "HEAD", cwd=alice_org).split()
    assert committed == [f".memex/{draft['id']}.md"]
    assert snapshot(alice.clone) == project_before  # the project repo is untouched
    shown = alice.run("show", draft["id"])
    assert shown["home"] == "org" and shown["review_state"] == "proposed"
    git("push", "-q", "origin", "main", cwd=alice_org)
    receipt = bob.run("pull", "--org")
    assert [c["id"] for c in receipt["new"]] == [draft["id"]]
    assert draft["id"] in [m["id"] for m in bob.run("list", "--scope", "org")]
    assert bob.run("show", draft["id"])["scope"] == "org"


def test_org_and_project_drafts_stay_apart(org: tuple[Dev, Dev, Path, Path]) -> None:
    alice, _, _, _ = org
    project = alice.draft("Project only")
    org_draft = alice.run("propose", alice.personal("Org wide"), "--to", "org")[0]["id"]
    assert "submit --org" in alice.fails("submit", org_draft)
    assert "submit without --org" in alice.fails("submit", "--org", project)
    out = alice.run("submit", "--org", "--all")
    assert [x["id"] for x in out["submitted"]] == [org_draft]
    assert alice.run("show", project)["home"] == "outbox"


def test_org_needs_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    pid = alice.personal("Needs an org repo")
    assert "memex.orgRepo" in alice.fails("propose", pid, "--to", "org", code=2)
    alice.git("config", "memex.orgRepo", str(tmp_path / "nowhere"))
    assert "not a git clone" in alice.fails("submit", "--org", "--all")
