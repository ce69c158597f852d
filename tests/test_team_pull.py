"""Two developers, one bare remote: submit -> push -> pull -> the memory is there."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from memex.storage import homes
from memex.workflows import freshness
from tests.helpers import invoke, invoke_json
from tests.helpers.farm import Dev, make_team, snapshot


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Dev, Dev]:
    remote, (alice, bob) = make_team(tmp_path, monkeypatch)
    return remote, alice, bob


def share(dev: Dev, text: str) -> str:
    draft = dev.draft(text)
    dev.run("submit", draft)
    dev.git("push", "-q")
    return draft


def test_submit_push_pull_found_in_other_clone(team: tuple[Path, Dev, Dev]) -> None:
    _, alice, bob = team
    mid = share(alice, "The staging database is reset every night at 02:00 UTC")
    assert mid not in [m["id"] for m in bob.run("list")]
    receipt = bob.run("pull")
    assert [c["id"] for c in receipt["new"]] == [mid]
    assert receipt["new"][0]["review_state"] == "proposed"
    assert receipt["changed"] == [] and receipt["retired"] == [] and receipt["commits"] == 1
    listed = bob.run("list")
    assert [m["id"] for m in listed] == [mid]
    shown = bob.run("show", mid[:8])
    assert shown["proposed_by"] == "local:alice@example.com" and shown["home"] == "repo"
    assert bob.run("pull")["up_to_date"] is True


def test_receipt_reports_changed_and_retired(team: tuple[Path, Dev, Dev]) -> None:
    _, alice, bob = team
    keep = share(alice, "Keep this one")
    old = share(alice, "Deploys happen on Tuesdays")
    bob.run("pull")
    alice.run("promote", keep)
    new = alice.run("supersede", old, "Deploys happen on Thursdays")["id"]
    alice.run("submit", new)
    alice.git("commit", "-q", "-am", "approve")
    alice.git("push", "-q")
    receipt = bob.run("pull")
    assert [c["id"] for c in receipt["new"]] == [new]
    assert [c["id"] for c in receipt["changed"]] == [keep]
    assert [c["id"] for c in receipt["retired"]] == [old]
    bob.use()
    text = invoke("pull").stdout
    assert "already up to date" in text


def test_pull_human_receipt(team: tuple[Path, Dev, Dev]) -> None:
    _, alice, bob = team
    mid = share(alice, "Feature flags live in flags.yaml")
    bob.use()
    result = invoke("pull")
    assert result.exit_code == 0, result.stderr
    assert "fast-forwarded" in result.stdout and f"new      {mid[:10]}" in result.stdout


def test_diverged_dirty_and_no_upstream_change_nothing(team: tuple[Path, Dev, Dev]) -> None:
    _, alice, bob = team
    mid = share(alice, "Arrives by pull")
    # local changes in the way of the fast-forward
    (bob.clone / ".memex" / f"{mid}.md").write_text("my own file\n", encoding="utf-8")
    before = snapshot(bob.clone)
    head = bob.git("rev-parse", "HEAD")
    err = bob.fails("pull")
    assert "cannot fast-forward" in err and "nothing changed" in err
    assert snapshot(bob.clone) == before and bob.git("rev-parse", "HEAD") == head
    (bob.clone / ".memex" / f"{mid}.md").unlink()
    # diverged
    (bob.clone / "local.txt").write_text("x\n", encoding="utf-8")
    bob.git("add", "local.txt")
    bob.git("commit", "-q", "-m", "local work")
    head = bob.git("rev-parse", "HEAD")
    err = bob.fails("pull")
    assert "diverged" in err and bob.git("rev-parse", "HEAD") == head
    # no upstream
    bob.git("switch", "-q", "-c", "topic")
    assert "no upstream" in bob.fails("pull")
    assert "no remote named" in bob.fails("pull", "nosuch", code=2)


def test_ahead_is_not_an_error_and_remote_argument(team: tuple[Path, Dev, Dev]) -> None:
    _, alice, bob = team
    share(alice, "One")
    draft = alice.draft("Two, not pushed")
    alice.run("submit", draft)
    receipt = alice.run("pull", "origin")
    assert receipt["up_to_date"] is True and receipt["ahead"] == 1


def test_no_network_is_a_clear_failure(team: tuple[Path, Dev, Dev]) -> None:
    remote, _, bob = team
    bob.git("remote", "set-url", "origin", str(remote.parent / "gone.git"))
    head = bob.git("rev-parse", "HEAD")
    err = bob.fails("pull")
    assert "fetch from origin failed" in err and "nothing changed" in err
    assert bob.git("rev-parse", "HEAD") == head


def test_staleness_and_list_warning(team: tuple[Path, Dev, Dev]) -> None:
    _, alice, bob = team
    bob.use()
    ws = homes.workspace()
    assert freshness.staleness(ws) == (None, False)  # a fresh clone never fetched
    bob.run("pull")
    last, stale = freshness.staleness(homes.workspace())
    assert last is not None and not stale
    fetch_head = bob.clone / ".git" / "FETCH_HEAD"
    ten_days = time.time() - 10 * 86400
    os.utime(fetch_head, (ten_days, ten_days))
    last, stale = freshness.staleness(homes.workspace())
    assert stale and last is not None
    result = invoke("list")
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "last pull" in line]
    assert len(warnings) == 1 and "10 days ago" in warnings[0]
    bob.git("config", "memex.staleAfter", "2w")
    assert freshness.staleness(homes.workspace())[1] is False
    assert "last pull" not in invoke("list").stderr
    bob.git("config", "memex.staleAfter", "12h")
    assert freshness.staleness(homes.workspace())[1] is True


def test_one_staleness_rule_for_health_and_sync_status(team: tuple[Path, Dev, Dev]) -> None:
    """health said "stale" of a clone that never fetched while sync-status said not."""
    _, _, bob = team
    bob.use()
    for _ in range(2):  # never fetched, then fetched ten days ago
        health = invoke_json("health")["pull"]
        sync = invoke_json("sync-status")
        assert health["stale"] == sync["stale"]
        assert (health["last_fetch"] is None) == (sync["last_fetch"] is None)
        bob.run("pull")
        ten_days = time.time() - 10 * 86400
        os.utime(bob.clone / ".git" / "FETCH_HEAD", (ten_days, ten_days))
    assert health["has_remote"] and health["stale"] and sync["stale"]
    assert "git memex pull: last fetched 10 days ago" in invoke_json("health")["next_steps"]


def test_parse_span() -> None:
    assert freshness.parse_span("7d") == freshness.DEFAULT_STALE_AFTER
    assert freshness.parse_span("3") == freshness.parse_span("3 days")
    assert freshness.parse_span("2w") == freshness.parse_span("14d")
    assert freshness.parse_span("soon") is None


def test_real_executables(team: tuple[Path, Dev, Dev]) -> None:
    from tests.conftest import run_cli

    _, alice, bob = team
    mid = share(alice, "Found through the real git-memex-pull script")
    bob.use()
    proc = run_cli("git", "memex", "pull", "--json", cwd=bob.clone)
    assert proc.returncode == 0, proc.stderr
    assert mid.encode() in proc.stdout
    proc = run_cli("git-memex-sync-status", cwd=bob.clone)
    assert proc.returncode == 0 and b"proposed: 1" in proc.stdout
