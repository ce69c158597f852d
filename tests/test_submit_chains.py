"""submit and supersede chains inside the outbox; what --all takes and leaves."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.farm import Dev, make_team, snapshot


@pytest.fixture
def alice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dev:
    _, devs = make_team(tmp_path, monkeypatch, ("alice",))
    return devs[0].use()


def _outbox_chain(alice: Dev) -> tuple[str, str]:
    old = alice.draft("Deploy from the release branch")
    new = alice.run("supersede", old, "Deploy from tags, never from a branch")["id"]
    return old, new


def test_submitting_the_successor_alone_is_refused_naming_the_chain(alice: Dev) -> None:
    old, new = _outbox_chain(alice)
    before = snapshot(alice.clone, alice.home)
    err = alice.fails("submit", new)
    assert f"git memex submit {old[:10]} {new[:10]}" in err and "nothing moved" in err
    assert snapshot(alice.clone, alice.home) == before
    err = alice.fails("submit", old)  # the retired end alone: its successor is missing
    assert f"git memex submit {old[:10]} {new[:10]}" in err


def test_submitting_the_chain_together_passes_verify(alice: Dev) -> None:
    old, new = _outbox_chain(alice)
    out = alice.run("submit", old, new)
    assert sorted(x["id"] for x in out["submitted"]) == sorted([old, new])
    assert alice.run("show", old)["status"] == "superseded"
    assert alice.run("show", new)["supersedes"] == old
    assert alice.run("verify")["ok"] is True


def test_a_draft_superseding_nothing_that_exists_is_refused(alice: Dev) -> None:
    draft = alice.draft("Points at a ghost")
    path = next((alice.home / "outbox").rglob(f"{draft}.md"))
    ghost = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    text = path.read_text("utf-8").replace("\nscope:", f"\nsupersedes: {ghost}\nscope:", 1)
    path.write_text(text, "utf-8")
    assert alice.run("show", draft)["supersedes"] == ghost
    err = alice.fails("submit", draft)
    assert ghost in err and "neither in the repo nor in the outbox" in err


def test_submit_all_takes_live_drafts_and_their_chains_only(alice: Dev) -> None:
    old, new = _outbox_chain(alice)
    gone = alice.draft("Retracted before anyone saw it")
    alice.run("forget", gone)
    shelved = alice.draft("Archived idea")
    alice.run("status", shelved, "archived")
    warned = alice.draft("Still true, but on its way out")
    alice.run("status", warned, "deprecated")
    out = alice.run("submit", "--all")
    assert sorted(x["id"] for x in out["submitted"]) == sorted([old, new, warned])
    notices = " ".join(out["notices"])
    assert f"left {gone}" in notices and "retracted" in notices
    assert f"left {shelved}" in notices and "archived" in notices
    assert alice.run("show", gone)["home"] == "outbox"
    assert alice.run("verify")["ok"] is True
    assert "no live drafts" in alice.fails("submit", "--all")


def test_an_explicit_retracted_draft_is_refused(alice: Dev) -> None:
    gone = alice.draft("Never mind")
    alice.run("forget", gone)
    assert "only live drafts are submitted" in alice.fails("submit", gone)
