from __future__ import annotations

from pathlib import Path

from tests.helpers import invoke, invoke_json


def test_capture_list_show(repo: Path) -> None:
    out = invoke_json("capture", "We use pnpm", "--type", "decision", "--tag", "tooling")
    assert out["created"] is True
    assert out["review_state"] == "draft"
    assert not (repo / ".memex").exists()
    listed = invoke_json("list")
    assert [m["id"] for m in listed] == [out["id"]]
    shown = invoke_json("show", out["id"][:8])
    assert shown["body"] == "We use pnpm"
    assert shown["tags"] == ["tooling"]


def test_unknown_step_exit_2() -> None:
    result = invoke("nosuchstep")
    assert result.exit_code == 2
    assert "capture" in result.stderr
