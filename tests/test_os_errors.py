"""OS errors on every write step (issue 12 item 10): EACCES, EROFS and ENOSPC injected
at the store's I/O seam (tests run as root, where a read-only folder stops nothing)
give one line on stderr, exit 1, no traceback, and leave every memory file, the
outbox and git's state as they were."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memex.storage import iostep
from tests.helpers import invoke, invoke_json

ERRORS = ("EACCES", "EROFS", "ENOSPC")


def _state(repo: Path, home: Path) -> dict[str, bytes]:
    """Every memory file and git's view (HEAD, index), byte for byte."""
    files = {str(p): p.read_bytes() for p in home.rglob("*.md")}
    files.update({str(p): p.read_bytes() for p in (repo / ".memex").glob("*.md")})
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True)
    files["HEAD"] = head.stdout
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True)
    files["status"] = status.stdout
    return files


def _setup(repo: Path) -> dict[str, str]:
    invoke_json("init")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    draft = invoke_json("capture", "a draft to submit")["id"]
    other = invoke_json("capture", "a draft to change")["id"]
    personal = invoke_json("capture", "--scope", "personal", "a personal note")["id"]
    shared = invoke_json("capture", "a memory already in the repo")["id"]
    assert invoke("submit", shared).exit_code == 0
    return {"draft": draft, "other": other, "personal": personal, "shared": shared}


STEPS = {
    "capture": lambda ids: ["capture", "new text"],
    "capture-personal": lambda ids: ["capture", "--scope", "personal", "new personal"],
    "update": lambda ids: ["update", ids["other"], "--tag", "x"],
    "update-repo": lambda ids: ["update", ids["shared"], "--tag", "x"],
    "supersede": lambda ids: ["supersede", ids["other"], "a successor"],
    "forget": lambda ids: ["forget", ids["other"]],
    "status": lambda ids: ["status", ids["personal"], "archived"],
    "pin": lambda ids: ["pin", ids["personal"]],
    "link": lambda ids: ["link", ids["other"], "related", ids["draft"]],
    "submit": lambda ids: ["submit", ids["draft"]],
    "promote": lambda ids: ["promote", ids["shared"]],
    "propose": lambda ids: ["propose", ids["personal"]],
}


@pytest.mark.parametrize("error", ERRORS)
def test_every_write_step_fails_cleanly(repo: Path, memex_home: Path,
                                        monkeypatch: pytest.MonkeyPatch, error: str) -> None:
    ids = _setup(repo)
    for name, args in STEPS.items():
        before = _state(repo, memex_home)
        iostep.reset()
        monkeypatch.setenv("GIT_MEMEX_FAULT", f"{error}@*")
        result = invoke(*args(ids))  # catch_exceptions=False: a traceback fails here
        monkeypatch.delenv("GIT_MEMEX_FAULT")
        assert result.exit_code == 1, (name, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("git-memex: error: "), (name, lines)
        assert _state(repo, memex_home) == before, name


def test_submit_fails_cleanly_at_each_step(repo: Path, memex_home: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step of a submit in turn (the journal, the repo file, git, the outbox copy)
    fails with each error: nothing changes, until the step after the last, when the
    submit goes through."""
    ids = _setup(repo)
    for error in ERRORS:
        draft = invoke_json("capture", f"a draft that meets {error}")["id"]
        before = _state(repo, memex_home)
        n = 1
        while True:
            iostep.reset()
            monkeypatch.setenv("GIT_MEMEX_FAULT", f"{error}@{n}")
            result = invoke("submit", draft)
            monkeypatch.delenv("GIT_MEMEX_FAULT")
            if result.exit_code == 0:
                break  # past the last step
            assert result.exit_code == 1, (error, n, result.output)
            assert _state(repo, memex_home) == before, (error, n, result.stderr)
            n += 1
        assert n > 8, f"a submit makes more write steps than {n - 1}"
    assert ids
