"""Real git set-ups for the team-flow tests: a bare remote and developer clones.

Each developer has their own clone, memory home (GIT_MEMEX_HOME) and git identity;
`Dev.use()` makes them the one the in-process CLI runs as (cwd + env).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git, invoke


@dataclass
class Dev:
    name: str
    clone: Path
    home: Path
    monkeypatch: pytest.MonkeyPatch

    def use(self) -> Dev:
        self.monkeypatch.chdir(self.clone)
        self.monkeypatch.setenv("GIT_MEMEX_HOME", str(self.home))
        return self

    def run(self, *args: str) -> Any:
        """Run a step as this developer; returns the parsed --json output (exit 0)."""
        self.use()
        result = invoke(*args, "--json")
        assert result.exit_code == 0, result.stderr + result.stdout
        return json.loads(result.stdout)

    def fails(self, *args: str, code: int = 1) -> str:
        self.use()
        result = invoke(*args)
        assert result.exit_code == code, result.stderr + result.stdout
        return result.stderr

    def git(self, *args: str, check: bool = True) -> str:
        return git(*args, cwd=self.clone, check=check)

    def personal(self, text: str, *extra: str) -> str:
        out = self.run("capture", "--scope", "personal", text, *extra)
        return str(out["id"])

    def draft(self, text: str) -> str:
        """A personal memory proposed into the outbox; returns the draft id."""
        return str(self.run("propose", self.personal(text))[0]["id"])


def make_team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, names: tuple[str, ...] = (
        "alice", "bob"), origin: str | None = None) -> tuple[Path, list[Dev]]:
    """A bare remote with one commit (.memexconfig, .memex/README.md) and a clone each.

    With `origin` (e.g. git@github.com:Acme/App.git) the clones name that URL as
    origin, and git's url.<remote>.insteadOf sends it to the bare remote.
    """
    from tests.conftest import copy_template

    copy_template(f"team-{'-'.join(names)}-{origin}",
                  lambda folder: _make_team(folder, names, origin), tmp_path)
    devs = [Dev(name, tmp_path / name, tmp_path / f"home-{name}", monkeypatch)
            for name in names]
    return tmp_path / "remote.git", devs


def _make_team(tmp_path: Path, names: tuple[str, ...], origin: str | None) -> None:
    remote = tmp_path / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    seed = tmp_path / "seed"
    git("clone", "-q", str(remote), str(seed), cwd=tmp_path)
    (seed / ".memex").mkdir()
    (seed / ".memex" / "README.md").write_text("memories\n", encoding="utf-8")
    (seed / ".memexconfig").write_text("[memex]\n\tdir = .memex\n", encoding="utf-8")
    (seed / "app.py").write_text("print('hi')\n", encoding="utf-8")
    git("add", "-A", cwd=seed)
    git("commit", "-q", "-m", "initial", cwd=seed)
    git("push", "-q", "origin", "main", cwd=seed)
    for name in names:
        clone = tmp_path / name
        git("clone", "-q", str(remote), str(clone), cwd=tmp_path)
        git("config", "user.email", f"{name}@example.com", cwd=clone)
        git("config", "user.name", name.title(), cwd=clone)
        if origin:
            git("config", f"url.{remote}.insteadOf", origin, cwd=clone)
            git("remote", "set-url", "origin", origin, cwd=clone)


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under the roots (outside .git, plus .git/index), path -> bytes; a
    home's kept check verdict (index/.home-check, a cache any command may write) left
    out, as git's own files are."""
    out: dict[str, bytes] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if rel.parts and rel.parts[0] == ".git" and rel != Path(".git/index"):
                continue
            if rel == Path("index/.home-check"):
                continue
            if path.is_file():
                out[str(path)] = path.read_bytes()
    return out
