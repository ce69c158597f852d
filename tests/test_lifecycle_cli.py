from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter, lifecycle, model
from tests.helpers import invoke, invoke_json


def data_of(path: str | Path) -> dict[str, object]:
    return frontmatter.parse(Path(path).read_text(encoding="utf-8")).data


def put_in_repo(repo: Path, out: dict[str, object], review_state: str) -> Path:
    """Move an outbox draft into the repo's memory folder as if submitted."""
    src = Path(str(out["path"]))
    memory, _ = frontmatter.load(src.read_text(encoding="utf-8"))
    memory.review_state = review_state
    target = repo / ".memex" / src.name
    target.parent.mkdir(exist_ok=True)
    target.write_text(frontmatter.emit(memory), encoding="utf-8")
    src.unlink()
    return target


def test_update_bumps_revision_keeps_created(repo: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-01T00:00:00Z")
    out = invoke_json("capture", "--tag", "a", "first text")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-02T00:00:00Z")
    up = invoke_json("update", out["id"][:6], "--body", "second text", "--tag", "b",
                     "--untag", "a", "--importance", "high")
    data = data_of(up["path"])
    assert data["revision"] == 2
    assert data["created_at"] == "2026-11-01T00:00:00Z"
    assert data["updated_at"] == "2026-11-02T00:00:00Z"
    assert data["tags"] == ["b"] and data["importance"] == "high"
    assert frontmatter.parse(Path(up["path"]).read_text()).body == "second text"


def test_update_redacts_again(repo: Path) -> None:
    out = invoke_json("capture", "plain")
    token = "glpat-" + "abcdEFGH1234ijklMNOP"
    result = invoke("update", out["id"], "--body", f"now with {token}")
    assert result.exit_code == 0 and "masked" in result.stderr
    assert token not in Path(out["path"]).read_text()


def test_update_nothing_changed(repo: Path) -> None:
    out = invoke_json("capture", "same")
    result = invoke("update", out["id"], "--body", "same")
    assert "nothing changed" in result.stderr
    assert data_of(out["path"])["revision"] == 1


def test_update_hand_edited_keeps_comment(repo: Path) -> None:
    out = invoke_json("capture", "--scope", "personal", "hand")
    path = Path(out["path"])
    text = path.read_text().replace("---\nid:", "---\n# keep this comment\nid:", 1)
    text = text.replace("via: cli\n", "via: cli\nextra_thing: 42\n")
    path.write_text(text)
    invoke_json("update", out["id"], "--tag", "edited")
    after = path.read_text()
    assert "# keep this comment" in after and "extra_thing: 42" in after
    assert data_of(path)["tags"] == ["edited"] and data_of(path)["revision"] == 2


def test_supersede_chain(repo: Path) -> None:
    old = invoke_json("capture", "--type", "decision", "--tag", "build", "We use npm")
    new = invoke_json("supersede", old["id"], "We use pnpm")
    old_data, new_data = data_of(old["path"]), data_of(new["path"])
    assert old_data["status"] == "superseded" and old_data["superseded_by"] == new["id"]
    assert "retired_at" in old_data
    assert new_data["supersedes"] == old["id"] and new_data["type"] == "decision"
    assert new_data["tags"] == ["build"]
    listed = [m["id"] for m in invoke_json("list")]
    assert listed == [new["id"]]
    everything = [m["id"] for m in invoke_json("list", "--include", "all")]
    assert old["id"] in everything
    again = invoke("supersede", old["id"], "third")
    assert again.exit_code == 1 and "already superseded" in again.stderr


def test_half_written_chain_completed_in_reads_not_files(repo: Path) -> None:
    old = invoke_json("capture", "--scope", "personal", "old fact")
    new = invoke_json("capture", "--scope", "personal", "new fact")
    path = Path(new["path"])
    path.write_text(path.read_text().replace("status: active\n",
                                             f"status: active\nsupersedes: {old['id']}\n"))
    before = Path(old["path"]).read_bytes()
    result = invoke("list", "--json")
    assert [m["id"] for m in json.loads(result.stdout)] == [new["id"]]
    assert "half-written" in result.stderr
    shown = invoke_json("show", old["id"])
    assert shown["status"] == "superseded" and shown["superseded_by"] == new["id"]
    assert Path(old["path"]).read_bytes() == before


def test_forget_and_restore(repo: Path) -> None:
    out = invoke_json("capture", "temporary")
    gone = invoke_json("forget", out["id"], "--note", "wrong")
    assert gone["status"] == "retracted"
    assert invoke_json("list") == []
    assert [m["id"] for m in invoke_json("list", "--include", "all")] == [out["id"]]
    back = invoke_json("status", out["id"], "active")
    data = data_of(back["path"])
    assert data["status"] == "active" and "retired_at" not in data
    history = data["status_history"]
    assert isinstance(history, list)
    assert [(h["from"], h["to"]) for h in history] == [("active", "retracted"),
                                                        ("retracted", "active")]
    assert history[0]["note"] == "wrong"


def test_forget_hard_needs_confirmation_without_tty(repo: Path) -> None:
    out = invoke_json("capture", "delete me")
    result = invoke("forget", out["id"], "--hard")
    assert result.exit_code == 2 and "--yes" in result.stderr
    assert Path(out["path"]).exists()
    result = invoke("forget", out["id"], "--hard", "--yes")
    assert result.exit_code == 0 and not Path(out["path"]).exists()


def test_status_moves(repo: Path) -> None:
    out = invoke_json("capture", "status test")
    dep = invoke_json("status", out["id"], "deprecated")
    assert dep["status"] == "deprecated"
    assert [m["id"] for m in invoke_json("list")] == [out["id"]]  # still listed
    invoke_json("status", out["id"], "archived")
    assert invoke_json("list") == []
    same = invoke("status", out["id"], "archived")
    assert same.exit_code == 1 and "already archived" in same.stderr
    bad = invoke("status", out["id"], "zombie")
    assert bad.exit_code == 2


def test_superseded_cannot_be_restored_by_status() -> None:
    m = model.Memory(id="01JAAAAAAAAAAAAAAAAAAAAAAA", scope="personal", status="superseded")
    with pytest.raises(lifecycle.TransitionError, match="chain"):
        lifecycle.set_status(m, "active", "2026-12-01T00:00:00Z", "local:x")


def test_shared_approved_edit_returns_to_proposed(repo: Path) -> None:
    out = invoke_json("capture", "shared text")
    path = put_in_repo(repo, out, "approved")
    result = invoke("update", out["id"], "--body", "changed shared text")
    assert result.exit_code == 0
    assert "proposed again" in result.stderr and "working tree" in result.stderr
    data = data_of(path)
    assert data["review_state"] == "proposed"
    history = data["review_history"]
    assert isinstance(history, list) and history[-1]["to"] == "proposed"
    tag_only = invoke_json("update", out["id"], "--tag", "x")
    assert data_of(tag_only["path"])["review_state"] == "proposed"


def test_shared_published_is_superseded_not_edited(repo: Path, memex_home: Path) -> None:
    out = invoke_json("capture", "published text")
    path = put_in_repo(repo, out, "published")
    before = path.read_bytes()
    result = invoke("update", out["id"], "--body", "edit")
    assert result.exit_code == 1 and "superseded" in result.stderr
    assert path.read_bytes() == before
    sup = invoke("supersede", out["id"], "--json", "the successor")
    assert sup.exit_code == 0, sup.stderr
    succ = json.loads(sup.stdout)
    assert Path(succ["path"]).parent.parent == memex_home / "outbox"
    assert path.read_bytes() == before  # retired only when the successor is submitted
    assert data_of(succ["path"])["supersedes"] == out["id"]
    # The draft is a proposal: the published memory stays live until the submit commit.
    assert {m["id"] for m in invoke_json("list")} == {succ["id"], out["id"]}
    assert invoke_json("show", out["id"])["status"] == "active"
    assert "half-written" not in invoke("list").stderr
    status = subprocess.run(["git", "status", "--porcelain", "--", ".memex"],
                            capture_output=True, text=True)
    assert status.stdout.startswith("??")  # only the put_in_repo file, unchanged since


def test_show_human_and_json(repo: Path) -> None:
    out = invoke_json("capture", "--title", "Title here", "show me")
    result = invoke("show", out["id"])
    assert result.exit_code == 0 and "Title here" in result.stdout and "show me" in result.stdout
    data = invoke_json("show", out["id"])
    assert data["body"] == "show me" and data["title"] == "Title here"
    assert set(model.FIELD_ORDER) <= set(data)


def test_list_never_shows_another_project(repo: Path, tmp_path: Path) -> None:
    mine = invoke_json("capture", "mine")
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://github.com/Acme/Other"],
                   cwd=other, check=True)
    import os

    os.chdir(other)
    theirs = invoke_json("capture", "theirs")
    personal = invoke_json("capture", "--scope", "personal", "me")
    assert {m["id"] for m in invoke_json("list")} == {theirs["id"], personal["id"]}
    os.chdir(repo)
    assert {m["id"] for m in invoke_json("list")} == {mine["id"], personal["id"]}
    assert invoke("show", theirs["id"]).exit_code == 1


def test_list_table(repo: Path) -> None:
    invoke_json("capture", "--scope", "personal", "a personal one")
    invoke_json("capture", "a project one")
    result = invoke("list")
    assert "[draft]" in result.stdout and "[personal]" in result.stdout
    assert result.stdout.splitlines()[0].split()[:3] == ["ID", "STATE", "TYPE"]


def test_list_empty(repo: Path) -> None:
    result = invoke("list")
    assert result.exit_code == 0 and result.stdout == "" and "no memories" in result.stderr
    assert invoke_json("list") == []


def test_next_update_repairs_half_written_chain(repo: Path) -> None:
    old = invoke_json("capture", "--scope", "personal", "old fact")
    new = invoke_json("capture", "--scope", "personal", "new fact")
    path = Path(new["path"])
    path.write_text(path.read_text().replace("status: active\n",
                                             f"status: active\nsupersedes: {old['id']}\n"))
    result = invoke("update", new["id"], "--tag", "fixed")
    assert result.exit_code == 0 and "repaired" in result.stderr
    old_data = data_of(old["path"])
    assert old_data["status"] == "superseded" and old_data["superseded_by"] == new["id"]
    assert "half-written" not in invoke("list").stderr
    edit_old = invoke("update", old["id"], "--body", "x")
    assert edit_old.exit_code == 1 and "superseded" in edit_old.stderr


def test_update_masks_a_secret_a_hand_edit_left(repo: Path) -> None:
    out = invoke_json("capture", "--scope", "personal", "clean text")
    path = Path(out["path"])
    token = "ghp_" + "Zz99" * 9
    path.write_text(path.read_text().replace("clean text", f"clean text {token}"))
    result = invoke("update", out["id"], "--tag", "x")
    assert result.exit_code == 0 and "masked" in result.stderr
    assert token not in path.read_text() and "ghp_xxxx" in path.read_text()


def test_update_body_rederives_a_derived_title(repo: Path) -> None:
    out = invoke_json("capture", "first line\nmore")
    up = invoke_json("update", out["id"], "--body", "brand new line\nrest")
    assert data_of(up["path"])["title"] == "brand new line"
    kept = invoke_json("capture", "--title", "Chosen", "body one")
    up2 = invoke_json("update", kept["id"], "--body", "body two")
    assert data_of(up2["path"])["title"] == "Chosen"
