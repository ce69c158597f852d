from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memex.storage import homes


@pytest.mark.parametrize("url", [
    "git@github.com:Acme/App.git",
    "https://github.com/Acme/App",
    "https://github.com/Acme/App.git/",
    "ssh://git@GitHub.com:22/Acme/App.git",
    "https://user:pw@github.com/Acme/App",
    "git+ssh://git@github.com/Acme/App.git",
])
def test_same_repo_same_id(url: str) -> None:
    assert homes.normalise_url(url) == "github.com/Acme/App"
    assert homes.repo_id_for(url, Path("/x")) == homes.repo_id_for(
        "git@github.com:Acme/App.git", Path("/y"))


def test_different_repos_differ() -> None:
    a = homes.repo_id_for("git@github.com:Acme/App.git", Path("/x"))
    b = homes.repo_id_for("git@github.com:Acme/Other.git", Path("/x"))
    assert a != b and a.startswith("git-origin-sha256:")


def test_path_fallback(tmp_path: Path) -> None:
    rid = homes.repo_id_for(None, tmp_path)
    assert rid.startswith("path-sha256:") and len(rid) == len("path-sha256:") + 64


def test_home_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GIT_MEMEX_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert homes.memex_home() == tmp_path / "xdg" / "git-memex"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert homes.memex_home() == Path.home() / ".local" / "share" / "git-memex"
    monkeypatch.setenv("GIT_MEMEX_HOME", str(tmp_path / "explicit"))
    assert homes.memex_home() == tmp_path / "explicit"


def test_workspace_in_repo(repo: Path, memex_home: Path) -> None:
    ws = homes.workspace()
    assert ws.repo is not None and ws.repo.toplevel == repo
    assert ws.memory_dir == repo / ".memex"
    assert ws.repo_id == homes.repo_id_for("git@github.com:Acme/App.git", repo)
    assert ws.outbox_dir.parent == memex_home / "outbox"
    assert ws.index_dir == repo / ".git" / "memex"
    assert ws.identity() == "local:test@example.com"


def test_memory_dir_from_memexconfig_and_personal_override(repo: Path) -> None:
    subprocess.run(["git", "config", "-f", ".memexconfig", "memex.dir", "docs/memory"],
                   check=True)
    assert homes.workspace().memory_dir == repo / "docs" / "memory"
    subprocess.run(["git", "config", "memex.dir", "mine"], check=True)
    assert homes.workspace().memory_dir == repo / "mine"
    subprocess.run(["git", "config", "memex.dir", "../escape"], check=True)
    assert homes.workspace().memory_dir == repo / "docs" / "memory"


def test_identity_override(repo: Path) -> None:
    subprocess.run(["git", "config", "memex.identity", "github:octo"], check=True)
    assert homes.workspace().identity() == "github:octo"


def test_outside_git(nogit_dir: Path) -> None:
    ws = homes.workspace()
    assert ws.repo is None and ws.memory_dir is None
    assert ws.repo_id.startswith("path-sha256:")


def test_worktree_has_own_index_dir(repo: Path, tmp_path: Path) -> None:
    subprocess.run(["git", "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    ws = homes.workspace(tmp_path / "wt")
    assert ws.repo is not None and ws.repo.toplevel == tmp_path / "wt"
    assert ws.index_dir != homes.workspace(repo).index_dir
    assert ws.repo_id == homes.workspace(repo).repo_id
