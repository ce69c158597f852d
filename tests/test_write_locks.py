"""Every read-modify-write of memory files takes the write lock, whatever the command
(issue 13, item 4): with another process holding it and `memex.lockTimeout` 0, each
writing command fails "busy" and changes nothing (so under the default wait it queues
behind the holder instead of interleaving with it)."""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from pathlib import Path

import pytest

from memex.storage import homes, locks
from tests.helpers import git, invoke, invoke_json
from tests.helpers.memfiles import memory, write
from tests.test_migrate import write_v1


def _files(repo: Path, memex_home: Path) -> dict[str, bytes]:
    found = [*memex_home.rglob("*.md"), *(repo / ".memex").glob("*.md")]
    return {str(p): p.read_bytes() for p in found}


def _propose(repo: Path, tmp_path: Path) -> list[str]:
    mid = invoke_json("capture", "a personal note to share", "--scope", "personal")["id"]
    return ["propose", mid]


def _promote(repo: Path, tmp_path: Path) -> list[str]:
    mid = invoke_json("capture", "a fact for the team")["id"]
    assert invoke("submit", mid).exit_code == 0
    return ["promote", mid]


def _import(repo: Path, tmp_path: Path) -> list[str]:
    invoke_json("capture", "a memory that goes out and comes back")
    archive = tmp_path / "out.jsonl"
    assert invoke("export", "--output", str(archive)).exit_code == 0
    for draft in homes.workspace(repo).outbox_dir.glob("*.md"):
        draft.unlink()
    return ["import", str(archive)]


def _verify_fix(repo: Path, tmp_path: Path) -> list[str]:
    old = memory()
    write(repo, old)  # half-written chain: old still active
    write(repo, memory(supersedes=old.id))
    return ["verify", "--fix"]


def _migrate(repo: Path, tmp_path: Path) -> list[str]:
    write_v1(homes.workspace(repo).personal_dir)
    return ["migrate", "--yes"]


SETUPS: dict[str, Callable[[Path, Path], list[str]]] = {
    "propose": _propose, "promote": _promote, "import": _import, "verify --fix": _verify_fix,
    "migrate": _migrate,
}


@pytest.mark.parametrize("name", list(SETUPS))
def test_writes_wait_for_the_write_lock(repo: Path, memex_home: Path, tmp_path: Path,
                                        name: str) -> None:
    invoke("init")
    args = SETUPS[name](repo, tmp_path)
    before = _files(repo, memex_home)
    head = git("rev-parse", "HEAD", cwd=repo)
    lock = homes.workspace(repo).home / locks.LOCK_NAME
    lock.parent.mkdir(parents=True, exist_ok=True)
    git("config", "memex.lockTimeout", "0", cwd=repo)
    with lock.open("a") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)  # another process's write
        busy = invoke(*args)
    assert busy.exit_code == 1, (busy.stdout, busy.stderr)
    assert "busy" in busy.stderr
    assert _files(repo, memex_home) == before
    assert git("rev-parse", "HEAD", cwd=repo) == head
    git("config", "--unset", "memex.lockTimeout", cwd=repo)
    done = invoke(*args)  # nobody holds it: the write lands
    assert done.exit_code == 0, (done.stdout, done.stderr)
    assert _files(repo, memex_home) != before
