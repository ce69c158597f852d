"""Two people supersede the same memory on two branches (issue 12 item 7): resolve
--keep / --both decide, and verify's chain rule passes after either."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import invoke
from tests.helpers.farm import Dev, make_team


def two_successors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                   ) -> tuple[Dev, str, str, str]:
    """alice and bob each supersede OLD and push; bob's merge conflicts on OLD."""
    _, (alice, bob) = make_team(tmp_path, monkeypatch)
    alice.run("init", "--yes")  # the merge driver in both clones
    bob.run("init", "--yes")
    old = alice.draft("Deploys go out on Tuesdays")
    alice.run("submit", old)
    alice.git("push", "-q")
    bob.git("pull", "-q")
    mine = alice.run("supersede", old, "Deploys go out on Wednesdays")["id"]
    alice.run("submit", mine)
    alice.git("push", "-q")
    theirs = bob.run("supersede", old, "Deploys go out on Thursdays")["id"]
    bob.run("submit", theirs)
    bob.git("fetch", "-q")
    bob.git("merge", "origin/main", "-m", "merge", check=False)  # exit 1: a conflict
    assert bob.git("ls-files", "-u").strip()  # OLD is conflicted: two superseded_by
    return bob, old, mine, theirs


def test_verify_fails_until_a_person_decides_then_keep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduced on main: resolving the old file left verify failing; only deleting
    the teammate's successor cleared it."""
    bob, old, mine, theirs = two_successors(tmp_path, monkeypatch)
    bob.use()
    assert invoke("verify").exit_code == 1
    assert "name one of the successors" in bob.fails("resolve", old, "--keep", old, code=2)
    assert bob.fails("resolve", old, "--keep", mine, "--both", code=2)
    assert "successor(s)" in bob.fails("resolve", mine, "--both")
    result = invoke("resolve", old[:10], "--keep", theirs[:10])
    assert result.exit_code == 0, result.stderr
    bob.git("commit", "-q", "--no-edit")
    verified = invoke("verify")
    assert verified.exit_code == 0, verified.stdout + verified.stderr
    o, k, r = (bob.run("show", i) for i in (old, theirs, mine))
    assert o["superseded_by"] == theirs and o["status"] == "superseded"
    assert k["supersedes"] == old and k["status"] == "active"
    assert r["status"] == "superseded" and r["superseded_by"] == theirs
    assert r.get("supersedes") is None and old in r["related"]
    assert "resolve" in r["review_history"][-1]["note"]
    listed = [m["id"] for m in bob.run("list", "--scope", "project")]
    assert listed == [theirs]  # one live successor, no chain warning
    assert "half-written" not in invoke("list").stderr


def test_both_links_contradicts_and_passes_verify(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bob, old, mine, theirs = two_successors(tmp_path, monkeypatch)
    bob.use()
    result = invoke("resolve", old[:10], "--both", "--json")
    assert result.exit_code == 0, result.stderr
    bob.git("commit", "-q", "--no-edit")
    assert invoke("verify").exit_code == 0
    earlier, later = sorted([mine, theirs])  # same second: the id decides
    o, e, lt = (bob.run("show", i) for i in (old, earlier, later))
    assert o["superseded_by"] == earlier and e["supersedes"] == old
    assert lt.get("supersedes") is None and old in lt["related"]
    assert later in e["contradicts"] and earlier in lt["contradicts"]
    assert e["status"] == lt["status"] == "active"

