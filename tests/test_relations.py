"""link A REL B, shown by show both ways; pin / unpin."""

from __future__ import annotations

from pathlib import Path

from memex.core import frontmatter
from tests.helpers import invoke, invoke_json


def data_of(path: str) -> dict[str, object]:
    return frontmatter.parse(Path(path).read_text(encoding="utf-8")).data


def test_link_shown_both_ways_and_removed(repo: Path) -> None:
    a = invoke_json("capture", "--tag", "db", "Use Postgres 16 for the app database")
    b = invoke_json("capture", "--tag", "db", "Postgres runs in docker compose locally")
    out = invoke_json("link", a["id"], "extends", b["id"])
    assert out["changed"] and out["extends"] == [b["id"]]
    data = data_of(a["path"])
    assert data["extends"] == [b["id"]] and data["revision"] == 2
    shown = invoke_json("show", a["id"])
    assert shown["links"] == [{"relation": "extends", "direction": "out", "id": b["id"],
                               "title": "Postgres runs in docker compose locally"}]
    other = invoke("show", b["id"])
    assert f"<- extends {a['id'][:10]}" in other.stdout
    again = invoke("link", a["id"], "extends", b["id"])
    assert again.exit_code == 0 and "already" in again.stderr
    assert data_of(a["path"])["revision"] == 2
    removed = invoke_json("link", a["id"], "extends", b["id"][:6], "--remove")
    assert removed["extends"] == [] and "extends" not in data_of(a["path"])


def test_link_bad_input(repo: Path) -> None:
    a = invoke_json("capture", "first memory")
    b = invoke_json("capture", "second memory")
    before = Path(a["path"]).read_bytes()
    bad_rel = invoke("link", a["id"], "supersedes", b["id"])
    assert bad_rel.exit_code == 2 and "supersedes" in bad_rel.output
    unknown = invoke("link", a["id"], "related", "01JZZZZZZZ")
    assert unknown.exit_code == 1 and "no memory matches" in unknown.stderr
    not_an_id = invoke("link", "hello!", "related", b["id"])
    assert not_an_id.exit_code == 2
    itself = invoke("link", a["id"], "related", a["id"])
    assert itself.exit_code == 2 and "itself" in itself.stderr
    missing = invoke("link", a["id"], "related", b["id"], "--remove")
    assert missing.exit_code == 1 and "no related link" in missing.stderr
    assert Path(a["path"]).read_bytes() == before


def test_shared_memory_never_links_to_personal(repo: Path) -> None:
    mine = invoke_json("capture", "--scope", "personal", "I like tabs")
    draft = invoke_json("capture", "Project style notes")
    src = Path(draft["path"])
    target = repo / ".memex" / src.name
    target.parent.mkdir()
    target.write_text(src.read_text().replace("review_state: draft", "review_state: published"))
    src.unlink()
    result = invoke("link", draft["id"], "related", mine["id"])
    assert result.exit_code == 1 and "personal" in result.stderr
    assert "related" not in data_of(str(target))


def test_pin_and_unpin(repo: Path) -> None:
    out = invoke_json("capture", "--scope", "personal", "Keep this forever")
    pinned = invoke_json("pin", out["id"])
    assert pinned["pinned"] is True and data_of(out["path"])["pinned"] is True
    twice = invoke("pin", out["id"])
    assert twice.exit_code == 0 and "already pinned" in twice.stderr
    invoke_json("unpin", out["id"])
    assert "pinned" not in data_of(out["path"])
    assert invoke("pin", "01JZZZZZZZZZ").exit_code == 1


def test_link_problems_for_verify(repo: Path) -> None:
    from memex.storage import homes, store
    from memex.workflows import relations

    a = invoke_json("capture", "first memory")
    b = invoke_json("capture", "second memory")
    invoke_json("link", a["id"], "related", b["id"])
    ws = homes.workspace()
    items, _ = store.read_all(ws)
    assert relations.problems(items) == []
    Path(b["path"]).unlink()
    items, _ = store.read_all(ws)
    assert relations.problems(items) == [(a["id"], f"{a['id']} related {b['id']}, "
                                                   "which is not here")]


def test_shared_memory_never_links_to_an_outbox_draft(repo: Path) -> None:
    shared = invoke_json("capture", "Project style notes")
    src = Path(shared["path"])
    target = repo / ".memex" / src.name
    target.parent.mkdir()
    target.write_text(src.read_text().replace("review_state: draft", "review_state: published"))
    src.unlink()
    before = target.read_bytes()
    draft = invoke_json("capture", "An unsubmitted idea")
    result = invoke("link", shared["id"], "related", draft["id"])
    assert result.exit_code == 1
    assert "outbox draft" in result.stderr and f"git memex submit {draft['id'][:10]}" in (
        result.stderr)
    assert target.read_bytes() == before
    assert invoke("verify").exit_code == 0
    back = invoke_json("link", draft["id"], "related", shared["id"])  # a draft may point in
    assert back["related"] == [shared["id"]]
