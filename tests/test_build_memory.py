"""A refresh lets go of each file's bytes once its rows are made (a full build of 100,000
memories held ~330 MB of them to its end; a full build now reads each file with its rows:
tests/test_build_ahead.py). The index is the same (tests/test_build_ahead.py compares
every table and posting of a build)."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from memex.index import build
from memex.storage import homes
from tests.helpers import memfiles


def test_a_build_lets_go_of_each_files_bytes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = repo / ".memex"
    hour_ago = time.time() - 3600  # not racy: the next refresh does not hash it again
    os.utime(folder / f"{memfiles.put(folder, 'note before')}.md", (hour_ago, hour_ago))
    ws = homes.workspace()
    build.refresh(ws)
    for i in range(4):
        memfiles.put(folder, f"note {i}")
    left: list[dict[str, bytes]] = []
    apply = build._apply

    def watched(conn: sqlite3.Connection, ws: homes.Workspace, plan: object,
                disk: object, kinds: object, contents: dict[str, bytes],
                *rest: object) -> object:
        assert len(contents) == 4  # read for their hashes
        out = apply(conn, ws, plan, disk, kinds, contents, *rest)  # type: ignore[arg-type]
        left.append(dict(contents))
        return out

    monkeypatch.setattr(build, "_apply", watched)
    build.refresh(ws)  # four new files, read for their hashes
    assert left == [{}]
