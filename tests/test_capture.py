from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter
from tests.conftest import run_cli
from tests.helpers import invoke, invoke_json


def read_memory(path: str) -> tuple[dict[str, object], str]:
    parsed = frontmatter.parse(Path(path).read_text(encoding="utf-8"))
    return parsed.data, parsed.body


def test_project_capture_is_an_outbox_draft(repo: Path, memex_home: Path) -> None:
    out = invoke_json("capture", "Run tests with pytest -q", "--type", "workflow",
                      "--tag", "ci", "--tag", "tests", "--importance", "high",
                      "--paths", "tests/**", "--confidence", "high")
    assert out["scope"] == "project" and out["status"] == "active"
    assert out["review_state"] == "draft" and out["created"] is True
    path = Path(out["path"])
    assert path.parent.parent == memex_home / "outbox"
    assert path.name == f"{out['id']}.md"
    data, body = read_memory(out["path"])
    assert data["type"] == "workflow" and data["tags"] == ["ci", "tests"]
    assert data["importance"] == "high" and data["paths"] == ["tests/**"]
    assert data["trust_level"] == "reviewed" and data["source"] == "user"
    assert data["via"] == "cli" and data["visibility"] == "internal"
    assert data["created_by"] == "local:test@example.com"
    assert str(data["repo_id"]).startswith("git-origin-sha256:")
    assert body == "Run tests with pytest -q"
    status = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""


def test_personal_capture(repo: Path, memex_home: Path) -> None:
    out = invoke_json("capture", "--scope", "personal", "--type", "preference", "I like tabs")
    assert Path(out["path"]).parent == memex_home / "personal"
    data, _ = read_memory(out["path"])
    assert "review_state" not in data and "repo_id" not in data


def test_stdin_and_dash(repo: Path) -> None:
    a = invoke_json("capture", input="from stdin\n")
    b = invoke_json("capture", "-", input="from dash\n")
    assert read_memory(a["path"])[1] == "from stdin"
    assert read_memory(b["path"])[1] == "from dash"


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_empty_capture_is_usage_error(repo: Path, memex_home: Path, text: str) -> None:
    result = invoke("capture", text)
    assert result.exit_code == 2 and "empty" in result.stderr
    assert not (memex_home / "outbox").exists()


def test_too_big_capture_refused(repo: Path, memex_home: Path) -> None:
    result = invoke("capture", input="x" * (2 * 1024 * 1024))
    assert result.exit_code == 1 and "limit" in result.stderr
    assert not (memex_home / "outbox").exists()


def test_max_bytes_setting(repo: Path) -> None:
    subprocess.run(["git", "config", "memex.maxBytes", "10"], check=True)
    assert invoke("capture", "short").exit_code == 0
    assert invoke("capture", "this is longer than ten").exit_code == 1


def test_binary_stdin_refused(repo: Path, memex_home: Path) -> None:
    proc = run_cli("git-memex-capture", input_bytes=b"\x00\x01\xff\xfebinary")
    assert proc.returncode == 2 and b"binary" in proc.stderr
    proc = run_cli("git-memex-capture", input_bytes=b"\xff\xfe\xfa not utf8")
    assert proc.returncode == 2 and b"UTF-8" in proc.stderr
    assert not (memex_home / "outbox").exists()


@pytest.mark.parametrize("scope", ["team", "public"])
def test_reserved_scopes_rejected(repo: Path, scope: str) -> None:
    result = invoke("capture", "--scope", scope, "text")
    assert result.exit_code == 2 and "reserved" in result.stderr


def test_unknown_type_is_usage_error(repo: Path) -> None:
    result = invoke("capture", "--type", "banana", "text")
    assert result.exit_code == 2


def test_dry_run_writes_nothing_and_shows_redaction(repo: Path, memex_home: Path) -> None:
    token = "ghp_" + "Ab12" * 9
    result = invoke("capture", "--dry-run", f"token {token} <private>mine</private>")
    assert result.exit_code == 0
    assert "ghp_xxxx" in result.stdout and token not in result.stdout
    assert "[REDACTED]" in result.stdout and "mine" not in result.stdout
    assert "dry run" in result.stderr
    assert not (memex_home / "outbox").exists()


def test_redaction_on_capture(repo: Path) -> None:
    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    result = invoke("capture", "--json", "--title", f"key {key}", f"aws {key} <private>x</private>")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    text = Path(out["path"]).read_text()
    assert key not in text and "AKIAxxxxxxxxxxxxxxxx" in text and "[REDACTED]" in text
    assert "masked" in result.stderr and key not in result.stderr


def test_identical_content_returns_existing(repo: Path, memex_home: Path) -> None:
    a = invoke_json("capture", "We deploy on Fridays")
    b = invoke_json("capture", "  We deploy   on\nFridays  ")
    assert b["id"] == a["id"] and b["created"] is False
    assert len(list(Path(a["path"]).parent.glob("*.md"))) == 1
    c = invoke_json("capture", "--scope", "personal", "We deploy on Fridays")
    assert c["created"] is True and c["id"] != a["id"]


def test_near_duplicate_reported(repo: Path) -> None:
    a = invoke_json("capture", "--title", "Deploys", "We deploy on Fridays after lunch")
    result = invoke("capture", "--json", "--title", "deploys", "Deploy happens Thursday")
    out = json.loads(result.stdout)
    assert out["created"] is True and out["near_duplicates"] == [a["id"]]
    assert "supersede" in result.stderr


def test_outside_git_project_is_local_with_notice(nogit_dir: Path, memex_home: Path) -> None:
    result = invoke("capture", "--scope", "project", "--json", "local note")
    assert result.exit_code == 0 and "not in a git repository" in result.stderr
    assert Path(json.loads(result.stdout)["path"]).parent.parent == memex_home / "outbox"
    result = invoke("capture", "--json", "another")
    assert json.loads(result.stdout)["scope"] == "personal"
    assert "saved as a personal memory" in result.stderr


def test_json_fields(repo: Path) -> None:
    out = invoke_json("capture", "fields")
    assert {"id", "scope", "status", "review_state", "path", "created"} <= set(out)


def test_human_output(repo: Path) -> None:
    result = invoke("capture", "human readable")
    assert result.exit_code == 0 and result.stdout.startswith("saved ")
    assert "[draft]" in result.stdout


def test_capture_without_git_binary_in_a_repo_is_an_error(
        repo: Path, monkeypatch: pytest.MonkeyPatch, memex_home: Path) -> None:
    from memex.storage import gitio

    monkeypatch.setattr(gitio, "git_binary", lambda: None)
    result = invoke("capture", "no git here")
    assert result.exit_code == 1 and "git is not installed" in result.stderr
    assert not memex_home.exists()


def test_capture_without_git_binary_outside_a_repo(
        nogit_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memex.storage import gitio

    monkeypatch.setattr(gitio, "git_binary", lambda: None)
    assert invoke_json("capture", "no git, no repo")["scope"] == "personal"


def test_bom_and_rule_lines_do_not_become_the_title(repo: Path) -> None:
    out = invoke_json("capture", input="\ufeff---\nThe real title\nbody\n".encode())
    data = frontmatter.parse(Path(out["path"]).read_text(encoding="utf-8")).data
    assert data["title"] == "The real title"


def test_bad_tag_is_usage_error(repo: Path) -> None:
    result = invoke("capture", "--tag", "has space", "text")
    assert result.exit_code == 2 and "tag" in result.stderr
