"""When the semantic lane is on and when vectors are computed (issue 19): `auto` turns
the default lane on only where its package is installed, writes never wait for a
slow provider, one background run at a time fills the vectors."""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memex.search import dense as embed
from memex.search import engine as search
from memex.search.dense import vectors
from memex.storage import homes
from memex.workflows import embedding
from tests.helpers import invoke
from tests.test_embed import (
    capture,
    configure,
    fresh_process_state,  # noqa: F401 - autouse here too
    lanes,
    vector_rows,
)


def test_auto_is_the_default_lane_only_when_its_package_is_installed(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find(name: str, *args: object) -> object:
        return object() if name == embed.DEFAULT_PACKAGE else real(name, *args)  # type: ignore[arg-type]

    def missing(name: str, *args: object) -> object:
        return None if name == embed.DEFAULT_PACKAGE else real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(importlib.util, "find_spec", find)
    assert embed.chosen(None) == embed.chosen("auto") == embed.DEFAULT
    assert embed.chosen("off") is None and embed.chosen("Static") == "static"
    monkeypatch.setattr(importlib.util, "find_spec", missing)
    assert embed.chosen(None) is None and embed.chosen("auto") is None
    # The test suite's global config says off; unset, auto without the package: BM25 only.
    subprocess.run(["git", "config", "memex.embeddings", "auto"], cwd=repo, check=True)
    mid = capture("We deploy staging over the VPN")
    result = invoke("search", "staging", "--json")
    assert result.exit_code == 0 and result.stderr == ""
    assert lanes("staging") == {mid: "bm25"}


def test_static_lane_falls_back_when_its_package_is_missing(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "static_model", None)
    configure(repo, "static")
    mid = capture("We deploy staging over the VPN")  # the write succeeds all the same
    result = invoke("search", "staging", "--json")
    assert result.exit_code == 0 and "tokenlearn-static-model" in result.stderr
    assert lanes("staging") == {mid: "bm25"}


def _wait_for(predicate: object, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_background_run_fills_missing_vectors(repo: Path) -> None:
    configure(repo, "hashing")
    subprocess.run(["git", "config", "memex.embedBackground", "false"], cwd=repo, check=True)
    subprocess.run(["git", "config", "memex.embeddings", "off"], cwd=repo, check=True)
    ids = [capture("We deploy staging over the VPN"), capture("Deploys need approvals")]
    configure(repo, "hashing")
    ws = homes.workspace(repo)
    assert embedding.start_background(ws) == [] and not (ws.index_dir / "embed.log").exists()
    subprocess.run(["git", "config", "--unset", "memex.embedBackground"], cwd=repo, check=True)
    ws = homes.workspace(repo)
    embedding.start_background(ws)  # a detached `git memex embed --background`
    db = ws.index_dir / vectors.DB_NAME

    def done() -> bool:
        try:
            return db.exists() and vector_rows(repo) == 2
        except sqlite3.Error:  # the run is creating the file right now
            return False

    assert _wait_for(done)
    assert set(lanes("deploy").values()) == {"bm25+vector"} and len(ids) == 2
    assert (ws.index_dir / "embed.log").read_text(encoding="utf-8") == ""  # no error


def test_one_run_at_a_time_and_one_waiting(repo: Path) -> None:
    configure(repo, "hashing")
    capture("We deploy staging over the VPN")
    ws = homes.workspace(repo)
    provider = search.provider("hashing")
    with embedding._try_lock(ws.index_dir / embedding.WAIT_LOCK) as mine:
        assert mine  # this test holds the waiting slot
        assert embedding.run_background(ws, provider) is None  # another one waits
        assert embedding.start_background(ws) == []
        assert not (ws.index_dir / embedding.LOG_NAME).exists()  # no process was started
    report = embedding.run_background(ws, provider)
    assert report is not None and report.memories == 1
