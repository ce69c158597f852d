"""Symlinks, FIFOs, devices and loops in memory folders (issue 13, item 6): links
inside a home are never followed, special files are skipped with a reason and never
opened (a FIFO never blocks a read), and a memory folder that resolves outside the
repo is refused with a clear message."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers import invoke
from tests.helpers.memfiles import memory, write

GOOD = "Use pnpm for installs"


def test_links_fifos_devices_and_loops_are_skipped(repo: Path, tmp_path: Path) -> None:
    invoke("init")
    good = write(repo, memory(title=GOOD, body="We use pnpm."))
    outside = tmp_path / "outside.md"
    outside.write_text(write(tmp_path, memory(title="Outside secret")).read_text())
    folder = repo / ".memex"
    loop = folder / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md"
    loop.symlink_to(loop.name)
    os.mkfifo(folder / "01BRZ3NDEKTSV4RRFFQ69G5FAV.md")
    (folder / "01CRZ3NDEKTSV4RRFFQ69G5FAV.md").symlink_to("/dev/zero")
    (folder / "01DRZ3NDEKTSV4RRFFQ69G5FAV.md").symlink_to(outside)
    before = outside.read_bytes()
    for args in (["list"], ["search", "pnpm"], ["search", "secret"], ["doctor"],
                 ["reindex", "--full"], ["health"], ["context"], ["diff"], ["scan"],
                 ["sync-status"], ["conflicts"], ["review", "HEAD"],
                 ["export", "--output", str(tmp_path / "out.jsonl")]):
        result = invoke(*args)  # a traceback fails here; a FIFO opened would hang
        assert result.exit_code == 0, (args, result.output)
        assert "Outside secret" not in result.stdout, args
    assert GOOD in invoke("list").stdout
    verify = invoke("verify", "--json")
    assert verify.exit_code == 1
    assert verify.stdout.count("links inside a memory folder are not followed") >= 1
    assert "not a regular file" in verify.stdout
    assert outside.read_bytes() == before and good.exists()


def test_a_memory_folder_outside_the_repo_is_refused(repo: Path, tmp_path: Path) -> None:
    invoke("init")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    stranger = write(tmp_path, memory(title="Not the team's"), folder="elsewhere")
    before = stranger.read_bytes()
    assert invoke("capture", "a draft waiting to be submitted").exit_code == 0
    (repo / ".memex" / "README.md").unlink()
    (repo / ".memex").rmdir()
    (repo / ".memex").symlink_to(outside)
    for args in (["list"], ["verify"], ["update", stranger.stem, "--tag", "x"],
                 ["submit", "--all"], ["export"]):
        result = invoke(*args)
        assert result.exit_code == 1, (args, result.output)
        assert "outside the repository" in result.stderr, (args, result.stderr)
    assert stranger.read_bytes() == before
    assert sorted(p.name for p in outside.iterdir()) == [stranger.name]
