"""promote along the review state machine; sync-status."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.farm import Dev, make_team, snapshot


@pytest.fixture
def alice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dev:
    _, devs = make_team(tmp_path, monkeypatch, ("alice",))
    return devs[0].use()


def submitted(dev: Dev, text: str) -> str:
    draft = dev.draft(text)
    dev.run("submit", draft)
    return draft


def history(dev: Dev, memory_id: str) -> list[tuple[str, str, str | None]]:
    shown = dev.run("show", memory_id)
    return [(h["from"], h["to"], h.get("note")) for h in shown["review_history"]]


def test_promote_reject_resubmit_history(alice: Dev) -> None:
    mid = submitted(alice, "Caches live in /var/cache/app")
    out = alice.run("promote", mid)
    assert out[0]["from"] == "proposed" and out[0]["to"] == "approved"
    assert out[0]["approved_by"] == "local:alice@example.com"
    alice.git("config", "memex.identity", "github:carol")
    alice.run("promote", mid, "--reject", "--note", "path moved to /srv/cache")
    shown = alice.run("show", mid)
    assert shown["review_state"] == "rejected"
    assert (alice.clone / ".memex" / f"{mid}.md").exists()  # rejection never deletes
    assert mid not in [m["id"] for m in alice.run("list")]
    assert mid in [m["id"] for m in alice.run("list", "--include", "all")]
    alice.run("promote", mid, "--resubmit", "--note", "fixed the path")
    assert alice.run("show", mid)["approved_by"] is None
    alice.run("promote", mid, "--to", "approved")
    alice.run("promote", mid)
    assert history(alice, mid) == [
        ("draft", "proposed", "submitted"),
        ("proposed", "approved", None),
        ("approved", "rejected", "path moved to /srv/cache"),
        ("rejected", "proposed", "fixed the path"),
        ("proposed", "approved", None),
        ("approved", "published", None),
    ]
    shown = alice.run("show", mid)
    assert [h["by"] for h in shown["review_history"]][2:] == ["github:carol"] * 4
    assert shown["review_state"] == "published" and shown["approved_by"] == "github:carol"
    assert shown["revision"] == 7


def test_illegal_moves_are_clear_and_change_nothing(alice: Dev) -> None:
    mid = submitted(alice, "Illegal moves are errors")
    other = submitted(alice, "A second memory")
    before = snapshot(alice.clone / ".memex")
    assert "when its PR merges" in alice.fails("promote", mid, "--to", "published")
    assert "needs a reason" in alice.fails("promote", mid, "--reject", code=2)
    assert "allowed" in alice.fails("promote", mid, "--resubmit")
    # all ids are checked before any file changes
    alice.run("promote", other)
    before = snapshot(alice.clone / ".memex")
    assert "cannot move" in alice.fails("promote", mid, other, "--to", "approved")
    assert snapshot(alice.clone / ".memex") == before
    assert "choose one of" in alice.fails("promote", mid, "--reject", "--resubmit", code=2)
    alice.run("promote", other)
    assert "final" in alice.fails("promote", other)
    draft = alice.draft("Still a draft")
    assert "submit it first" in alice.fails("promote", draft)
    assert "not in the repo" in alice.fails("promote", alice.personal("mine"))


def test_instruction_approve_and_revoke(alice: Dev) -> None:
    alice.run("capture", "Run `make check` before every push", "--role", "instruction")
    draft = alice.run("list", "--scope", "project")[0]["id"]
    alice.run("submit", draft)
    assert "promote it first" in alice.fails("promote", draft, "--instruction")
    knowledge = submitted(alice, "Plain knowledge")
    alice.run("promote", knowledge)
    assert "not an instruction" in alice.fails("promote", knowledge, "--instruction")
    alice.run("promote", draft)
    out = alice.run("promote", draft, "--instruction")
    assert out[0]["instruction_state"] == "approved"
    shown = alice.run("show", draft)
    assert shown["instruction_state"] == "approved"
    assert shown["trust_level"] in ("reviewed", "trusted")
    assert "instruction draft -> approved" in shown["review_history"][-1]["note"]
    alice.run("promote", draft, "--revoke", "--note", "too strict")
    assert alice.run("show", draft)["instruction_state"] == "revoked"
    assert "already revoked" in alice.fails("promote", draft, "--revoke")


def test_sync_status_groups_by_state(alice: Dev) -> None:
    a = submitted(alice, "First shared")
    b = submitted(alice, "Second shared")
    alice.run("promote", b)
    draft = alice.draft("Waiting in the outbox")
    status = alice.run("sync-status")
    assert [m["id"] for m in status["outbox"]] == [draft]
    assert [m["id"] for m in status["repo"]["proposed"]] == [a]
    assert [m["id"] for m in status["repo"]["approved"]] == [b]
    assert status["uncommitted"] == [f".memex/{b}.md"]
    assert status["branch"] == "main" and status["upstream"] == "origin/main"
    assert status["ahead"] == 2 and status["behind"] == 0
    alice.use()
    from tests.helpers import invoke

    text = invoke("sync-status").stdout
    assert "outbox: 1 draft(s)" in text and "approved: 1" in text and "2 ahead" in text


def test_owner_approves_and_revokes_a_personal_instruction(alice: Dev) -> None:
    mine = alice.run("capture", "--scope", "personal", "--role", "instruction",
                     "Answer me in French")["id"]
    plain = alice.run("capture", "--scope", "personal", "I like vim")["id"]
    assert "not an instruction" in alice.fails("promote", plain, "--instruction")
    assert "personal memories are not reviewed" in alice.fails("promote", plain)
    out = alice.run("promote", mine, "--instruction")
    assert out[0]["instruction_state"] == "approved"
    shown = alice.run("show", mine)
    assert shown["review_state"] is None and shown["approved_by"] == "local:alice@example.com"
    assert shown["trust_level"] == "reviewed" and shown["revision"] == 2
    assert "instruction draft -> approved" in shown["review_history"][-1]["note"]
    block = alice.run("context")
    assert mine in [line["id"] for line in block["instructions"]]
    alice.run("promote", mine, "--revoke")
    assert alice.run("show", mine)["instruction_state"] == "revoked"
    assert mine not in [line["id"] for line in alice.run("context")["instructions"]]
