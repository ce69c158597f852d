"""doctor names unreadable files wherever they are, and its hint points at a command
that really lists them."""

from __future__ import annotations

import json
from pathlib import Path

from memex.storage import homes
from tests.helpers import invoke
from tests.helpers.memfiles import memory, write


def test_unreadable_outbox_files_are_named_by_doctor(repo: Path) -> None:
    write(repo, memory())
    outbox = homes.workspace(repo).outbox_dir
    outbox.mkdir(parents=True)
    broken = outbox / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md"
    broken.write_text("not a memory\n")
    result = invoke("doctor")
    line = next(x for x in result.stdout.splitlines() if "quarantine" in x)
    assert line.startswith("warn") and str(broken) in line
    assert "outside the repo" in line and "verify" not in line
    verify = invoke("verify")  # verify is about the repo folder: it rightly passes
    assert verify.exit_code == 0
    checks = json.loads(invoke("doctor", "--json").stdout)["checks"]
    quarantine = next(c for c in checks if c["name"] == "quarantine")
    assert quarantine["paths"] == [str(broken)]


def test_unreadable_repo_files_point_at_verify(repo: Path) -> None:
    (repo / ".memex").mkdir()
    broken = repo / ".memex" / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md"
    broken.write_text("garbage\n")
    line = next(x for x in invoke("doctor").stdout.splitlines() if "quarantine" in x)
    assert "in the repo" in line and str(broken) in line and "git memex verify" in line
    assert broken.name in invoke("verify").stdout
