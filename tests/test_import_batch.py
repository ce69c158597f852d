"""import writes its files in batches flushed to disk once (not an fsync per file),
each still atomically: a file that cannot be written is refused alone, with no temp
file or half-written memory left behind."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from memex.storage import homes
from tests.conftest import BIN
from tests.helpers import invoke, invoke_json


def _export(repo: Path, tmp_path: Path, count: int) -> Path:
    for n in range(count):
        invoke_json("capture", f"Imported note number {n} about caches")
    archive = tmp_path / "export.jsonl"
    assert invoke("export", "--output", str(archive)).exit_code == 0
    return archive


def _import(repo: Path, archive: Path, home: Path, **extra: str
            ) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_MEMEX_HOME=str(home), **extra)
    return subprocess.run([str(BIN / "git-memex"), "import", str(archive), "--json"],
                          cwd=repo, env=env, capture_output=True, text=True)


def _steps(log: Path) -> list[str]:
    return [line.split()[1] for line in log.read_text().splitlines()]


def test_one_flush_for_many_files(repo: Path, tmp_path: Path) -> None:
    archive = _export(repo, tmp_path, 5)
    log = tmp_path / "steps.log"
    done = _import(repo, archive, tmp_path / "other-home", GIT_MEMEX_FAULT_LOG=str(log))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert len(report["imported"]) == 5
    steps = _steps(log)
    assert steps.count("fsync") == 1 and steps.count("rename") == 5
    for item in report["imported"]:
        text = Path(item["path"]).read_text(encoding="utf-8")
        assert "Imported note number" in text and "review_state: draft" in text


def test_a_file_that_cannot_be_written_is_refused_alone(repo: Path, tmp_path: Path) -> None:
    archive = _export(repo, tmp_path, 4)
    log = tmp_path / "steps.log"
    _import(repo, archive, tmp_path / "dry-home", GIT_MEMEX_FAULT_LOG=str(log))
    second_rename = [n for n, step in enumerate(_steps(log), 1) if step == "rename"][1]
    home = tmp_path / "other-home"
    done = _import(repo, archive, home, GIT_MEMEX_FAULT=f"ENOSPC@{second_rename}")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert len(report["imported"]) == 3
    (rejected,) = report["rejected"]
    assert "No space left on device" in rejected["reason"]
    assert "nothing was changed" in rejected["reason"]
    ws = homes.workspace(repo, home=home)
    on_disk = sorted(p.name for p in ws.outbox_dir.iterdir())
    assert on_disk == sorted(Path(i["path"]).name for i in report["imported"])
    git_dir = repo / ".git"
    assert not [p for p in git_dir.rglob("*.memex-tmp")]  # no temp file left
