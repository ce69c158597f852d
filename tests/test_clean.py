"""clean: ROT candidates grouped with reasons; nothing changes without consent."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex.adapters.cli import _common
from memex.core import frontmatter
from tests.helpers import invoke, invoke_json


def data_of(path: str | Path) -> dict[str, object]:
    return frontmatter.parse(Path(path).read_text(encoding="utf-8")).data


@pytest.fixture
def store_with_rot(repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict[str, str]]:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-01-01T00:00:00Z")
    made = {
        "old": invoke_json("capture", "--scope", "personal",
                           "The staging database host is db-staging-3.internal"),
        "tiny": invoke_json("capture", "--scope", "personal", "ok"),
        "test": invoke_json("capture", "--scope", "personal", "test memory 123"),
        "pinned": invoke_json("capture", "--scope", "personal",
                              "Release notes go to the #releases channel"),
    }
    invoke_json("pin", made["pinned"]["id"])
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-29T00:00:00Z")
    made["keep"] = invoke_json("capture", "--scope", "personal",
                               "Run the linter with ruff check before every commit")
    made["dup"] = invoke_json("capture", "--scope", "personal",
                              "Run the linter with ruff check before every commit please")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T00:00:00Z")
    return made


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*.md")}


def test_lists_groups_with_reasons_and_changes_nothing_without_tty(
        store_with_rot: dict[str, dict[str, str]], memex_home: Path) -> None:
    before = snapshot(memex_home)
    result = invoke("clean")
    assert result.exit_code == 0
    out = result.stdout
    assert "Redundant" in out and "Obsolete" in out and "Trivial" in out
    assert "near-duplicate" in out and "not used for" in out and "tiny" in out
    assert "nothing changed" in result.stderr
    data = invoke_json("clean")
    groups = {c["id"]: c["group"] for c in data["candidates"]}
    m = store_with_rot
    assert groups[m["old"]["id"]] == "obsolete"
    assert groups[m["tiny"]["id"]] == "trivial" and groups[m["test"]["id"]] == "trivial"
    assert groups[m["keep"]["id"] if m["keep"]["id"] in groups else m["dup"]["id"]] == \
        "redundant"
    assert m["pinned"]["id"] not in groups  # a person's keep is never offered
    assert data["applied"] == []
    assert snapshot(memex_home) == before


def test_yes_retires_never_deletes(store_with_rot: dict[str, dict[str, str]],
                                   memex_home: Path) -> None:
    files = set(snapshot(memex_home))
    data = invoke_json("clean", "--yes")
    assert {a["action"] for a in data["applied"]} == {"retired"}
    assert set(snapshot(memex_home)) == files  # every file still there
    old = data_of(store_with_rot["old"]["path"])
    assert old["status"] == "archived" and "clean: obsolete" in str(old["status_history"])
    assert invoke_json("clean")["candidates"] == []


def test_ids_restrict_and_unknown_id(store_with_rot: dict[str, dict[str, str]]) -> None:
    tiny = store_with_rot["tiny"]
    data = invoke_json("clean", "--yes", tiny["id"])
    assert [a["id"] for a in data["applied"]] == [tiny["id"]]
    assert data_of(store_with_rot["test"]["path"])["status"] == "active"
    assert invoke("clean", "--yes", "01JZZZZZZZZZ").exit_code == 1
    not_rot = invoke("clean", "--yes", store_with_rot["pinned"]["id"])
    assert not_rot.exit_code == 1 and "not a clean-up candidate" in not_rot.stderr


def test_delete_needs_explicit_flag(store_with_rot: dict[str, dict[str, str]]) -> None:
    tiny = Path(store_with_rot["tiny"]["path"])
    data = invoke_json("clean", "--yes", "--delete", store_with_rot["tiny"]["id"])
    assert data["applied"][0]["action"] == "deleted" and not tiny.exists()


def test_interactive_choice_per_item(store_with_rot: dict[str, dict[str, str]],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_common, "stdin_is_tty", lambda: True)
    count = len(invoke_json("clean")["candidates"])
    result = invoke("clean", input="r\n" + "s\n" * (count - 1))
    assert result.exit_code == 0, result.output
    assert "1 of" in result.stderr
    assert len(invoke_json("clean")["candidates"]) == count - 1
    quit_now = invoke("clean", input="q\n")
    assert "0 of" in quit_now.stderr


def test_shared_memory_is_retired_in_the_working_tree(repo: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    draft = invoke_json("capture", "test")
    src = Path(draft["path"])
    target = repo / ".memex" / src.name
    target.parent.mkdir()
    target.write_text(src.read_text().replace("review_state: draft", "review_state: published"))
    src.unlink()
    data = invoke_json("clean", "--yes", "--delete")
    assert data["applied"] == [{"id": draft["id"], "action": "retired", "path": str(target)}]
    assert target.exists() and data_of(target)["status"] == "archived"


def test_tiny_is_fair_to_cjk(repo: Path) -> None:
    english = invoke_json("capture", "--scope", "personal", "use vim")
    chinese = invoke_json("capture", "--scope", "personal", "我喜欢用 vim")
    short_chinese = invoke_json("capture", "--scope", "personal", "好的")
    reasons = {c["id"]: c["reason"] for c in invoke_json("clean")["candidates"]}
    assert reasons[english["id"]] == "tiny: 7 characters"
    assert chinese["id"] not in reasons
    assert reasons[short_chinese["id"]] == "tiny: 2 characters"
