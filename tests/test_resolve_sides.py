"""resolve names the sides of a rebase for people, and stages a hand-resolved file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import git_proc, invoke
from tests.test_merge_git import _branches, _setup


def _rebase_conflict(repo: Path) -> Path:
    path = _setup(repo, driver=False)
    _branches(repo, path, {"importance": "high", "title": "Mine"},
              {"importance": "low", "title": "Upstream"})
    git_proc("checkout", "-q", "topic", cwd=repo)
    assert git_proc("rebase", "main", check=False, cwd=repo).returncode != 0
    return path


def test_rebase_sides_are_named_for_people(repo: Path) -> None:
    path = _rebase_conflict(repo)
    replayed = git_proc("rev-parse", "REBASE_HEAD", cwd=repo).stdout.strip()[:10]
    listed = invoke("resolve")
    assert "upstream (HEAD, the branch being rebased onto) 'low'" in listed.stdout
    assert f"yours (the commit being replayed, {replayed}) 'high'" in listed.stdout
    assert " ours " not in listed.stdout and " theirs " not in listed.stdout
    result = invoke("resolve", path.stem)
    assert result.exit_code == 1
    text = path.read_text()
    assert "<<<<<<< upstream (HEAD)" in text and f">>>>>>> yours ({replayed})" in text
    data = json.loads(invoke("resolve", "--json").stdout)
    assert data["memories"][0]["sides"]["theirs"].startswith("yours")


def test_a_hand_resolved_file_is_staged_and_the_rebase_continues(repo: Path) -> None:
    path = _rebase_conflict(repo)
    invoke("resolve", path.stem)  # writes the markers
    lines = path.read_text().splitlines()
    kept: list[str] = []
    skip = False
    for line in lines:  # the person keeps their own side of every block
        if line.startswith("<<<<<<<"):
            skip = True
        elif line.startswith("======="):
            skip = False
        elif line.startswith(("|||||||",)):
            skip = True
        elif line.startswith(">>>>>>>"):
            skip = False
        elif not skip:
            kept.append(line)
    path.write_text("\n".join(kept) + "\n")
    result = invoke("resolve", path.stem)
    assert result.exit_code == 0, result.output
    assert "staged it as your decision" in result.stdout
    assert "a human must decide" not in result.stdout
    assert git_proc("ls-files", "-u", cwd=repo).stdout == ""
    done = git_proc("-c", "core.editor=true", "rebase", "--continue", check=False, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "title: Mine" in path.read_text() and "importance: high" in path.read_text()
