"""pull brings the search index up to date; verify checks the index covers every file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memex.index import build
from memex.storage import homes
from tests.helpers import invoke
from tests.helpers.farm import make_team
from tests.helpers.memfiles import memory, write


def test_pull_refreshes_the_index_and_says_how_many(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, (alice, bob) = make_team(tmp_path, monkeypatch)
    first = alice.draft("The staging database is reset every night")
    second = alice.draft("Releases are cut on Tuesdays")
    alice.run("submit", first, second)
    alice.git("push", "-q")
    bob.run("list")  # bob's index exists, without alice's memories
    receipt = bob.run("pull")
    assert receipt["indexed"] == 2 and receipt["index_memories"] == 2
    ws = homes.workspace(bob.clone, home=bob.home)
    with build.open_index(ws, refresh=False) as index:  # no refresh: pull did it
        paths = build.memory_paths(index.conn, "repo")
    assert {Path(p).stem for p in paths} == {first, second}
    bob.use()
    human = invoke("pull")
    assert human.exit_code == 0 and "already up to date" in human.stdout


def test_pull_human_receipt_names_the_indexed_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, (alice, bob) = make_team(tmp_path, monkeypatch)
    alice.run("submit", alice.draft("One memory"))
    alice.git("push", "-q")
    bob.use()
    result = invoke("pull")
    assert result.exit_code == 0
    assert "index: 1 file(s) indexed, 1 memories searchable" in result.stderr


def test_verify_fails_when_the_index_misses_a_file(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = write(repo, memory())
    missed = write(repo, memory(title="Never indexed"))
    assert invoke("verify").exit_code == 0
    build.forget_connections()
    real_scan = build.disk_stamps

    def lossy(ws: homes.Workspace, *args: Any) -> dict[str, build.Stamp]:
        stamps = real_scan(ws, *args)
        stamps.pop(str(missed), None)  # a refresh that overlooks one file
        return stamps

    monkeypatch.setattr(build, "disk_stamps", lossy)
    monkeypatch.setattr(build, "_lean_walk", lambda ws: None)  # the walk is disk_stamps
    result = invoke("verify")
    assert result.exit_code == 1
    assert "FAIL index (1)" in result.stdout and missed.name in result.stdout
    assert kept.name not in result.stdout
