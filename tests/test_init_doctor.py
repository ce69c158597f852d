"""init's merge-driver setup and doctor's checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memex.storage import gitio
from tests.helpers import invoke
from tests.memfiles import git, memory, write


def test_init_writes_gitattributes_and_driver_config_idempotently(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.png binary")  # no trailing newline
    assert invoke("init", "--yes").exit_code == 0
    text = (repo / ".gitattributes").read_text()
    assert text == "*.png binary\n.memex/*.md merge=memex diff=memex\n"
    driver = git(repo, "config", "--get", "merge.memex.driver").stdout.strip()
    assert driver.endswith("merge-driver %O %A %B %L %P")
    assert git(repo, "config", "--get", "merge.memex.name").stdout.strip()
    again = json.loads(invoke("init", "--yes", "--json").stdout)
    assert again["changed"] == []
    assert (repo / ".gitattributes").read_text() == text
    probe = git(repo, "check-attr", "merge", "--", ".memex/01ARZ3NDEKTSV4RRFFQ69G5FAV.md")
    assert probe.stdout.strip().endswith(": memex")


def test_init_with_another_folder(repo: Path) -> None:
    assert invoke("init", "--yes", "--dir", "docs/memory").exit_code == 0
    assert "docs/memory/*.md merge=memex" in (repo / ".gitattributes").read_text()


def test_doctor_ok_after_init(repo: Path) -> None:
    invoke("init", "--yes")
    result = invoke("doctor", "--json")
    assert result.exit_code == 0
    checks = {c["name"]: c["level"] for c in json.loads(result.stdout)["checks"]}
    assert checks["git"] == "ok" and checks["merge-driver"] == "ok"
    assert checks["hooks"] == "warn" and checks["quarantine"] == "ok"


def test_doctor_warns_attribute_without_driver(repo: Path) -> None:
    (repo / ".gitattributes").write_text(".memex/*.md merge=memex\n")
    result = invoke("doctor")
    assert result.exit_code == 0  # a warning is advice, not a failure
    assert "warn merge-driver" in result.stdout and "silently falls back" in result.stdout
    git(repo, "config", "merge.memex.name", "x")
    failing = invoke("doctor")
    assert failing.exit_code == 1 and "fail merge-driver" in failing.stdout


def test_doctor_warns_about_quarantined_files(repo: Path) -> None:
    invoke("init", "--yes")
    write(repo, memory())
    (repo / ".memex" / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md").write_text("garbage\n")
    result = invoke("doctor")
    assert result.exit_code == 0
    assert "warn quarantine: 1 unreadable" in result.stdout


def test_doctor_fails_without_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    gitio.git_binary.cache_clear()
    result = invoke("doctor")
    assert result.exit_code == 1 and "fail git" in result.stdout
