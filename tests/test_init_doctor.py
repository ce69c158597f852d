"""init's merge-driver setup and doctor's checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memex.storage import gitio
from tests.helpers import git_proc, invoke
from tests.helpers.memfiles import memory, write


def test_init_writes_gitattributes_and_driver_config_idempotently(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.png binary")  # no trailing newline
    assert invoke("init", "--yes").exit_code == 0
    text = (repo / ".gitattributes").read_text()
    assert text == ("*.png binary\n.memex/[0-7]?????????????????????????.md merge=memex "
                    "diff=memex\n")
    driver = git_proc("config", "--get", "merge.memex.driver", cwd=repo).stdout.strip()
    assert driver.endswith("merge-driver %O %A %B %L %P")
    assert Path(driver.split()[0]).is_absolute()  # GUI clients have no venv on PATH
    assert git_proc("config", "--get", "merge.memex.name", cwd=repo).stdout.strip()
    again = json.loads(invoke("init", "--yes", "--json").stdout)
    assert again["changed"] == []
    assert (repo / ".gitattributes").read_text() == text
    probe = git_proc("check-attr", "merge", "--", ".memex/01ARZ3NDEKTSV4RRFFQ69G5FAV.md", cwd=repo)
    assert probe.stdout.strip().endswith(": memex")
    for other in (".memex/README.md", ".memex/notes/01ARZ3NDEKTSV4RRFFQ69G5FAV.md"):
        probe = git_proc("check-attr", "merge", "--", other, cwd=repo)
        assert probe.stdout.strip().endswith(": unspecified"), other


def test_init_with_another_folder(repo: Path) -> None:
    assert invoke("init", "--yes", "--dir", "docs/memory").exit_code == 0
    assert "docs/memory/[0-7]" in (repo / ".gitattributes").read_text()


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
    git_proc("config", "merge.memex.name", "x", cwd=repo)
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


def test_doctor_fails_when_the_driver_does_not_resolve_and_fix_repoints(repo: Path) -> None:
    invoke("init", "--yes")
    wanted = git_proc("config", "--get", "merge.memex.driver", cwd=repo).stdout.strip()
    git_proc("config", "merge.memex.driver", "/old/venv/bin/git-memex merge-driver %O %A %B",
             cwd=repo)
    result = invoke("doctor")
    assert result.exit_code == 1 and "fail merge-driver" in result.stdout
    assert "does not exist" in result.stdout and "doctor --fix" in result.stdout
    git_proc("config", "merge.memex.driver", "git-memex merge-driver %O %A %B %L %P", cwd=repo)
    result = invoke("doctor")  # by name: works here, not in a GUI client
    assert result.exit_code == 0 and "warn merge-driver" in result.stdout
    git_proc("config", "merge.memex.driver", "no-such-memex merge-driver %O %A %B", cwd=repo)
    assert invoke("doctor").exit_code == 1
    fixed = invoke("doctor", "--fix")
    assert fixed.exit_code == 0, fixed.stdout + fixed.stderr
    assert "fixed: set git config merge.memex.driver" in fixed.stderr
    assert git_proc("config", "--get", "merge.memex.driver", cwd=repo).stdout.strip() == wanted
    assert "ok   merge-driver" in fixed.stdout
    again = invoke("doctor", "--fix")
    assert "fixed:" not in again.stderr

