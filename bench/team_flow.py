"""Time the team flow on N memories: propose, submit --all, push, pull in a second clone.

    python bench/team_flow.py [N]      (default 200)

Everything runs in a throwaway directory with its own memory homes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memex.storage import homes
from memex.workflows import pull, team, writes


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def timed(label: str, func: object, *args: object, **kw: object) -> object:
    start = time.perf_counter()
    result = func(*args, **kw)  # type: ignore[operator]
    print(f"{label:28} {time.perf_counter() - start:7.3f} s")
    return result


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    root = Path(tempfile.mkdtemp(prefix="memex-bench-team-"))
    os.environ["GIT_CONFIG_GLOBAL"] = str(root / "gitconfig")
    (root / "gitconfig").write_text("[user]\n\tname = B\n\temail = b@example.com\n")
    remote = root / "remote.git"
    git("init", "-q", "--bare", "-b", "main", str(remote), cwd=root)
    for name in ("a", "b"):
        git("clone", "-q", str(remote), name, cwd=root)
    a, b = root / "a", root / "b"
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    git("pull", "-q", cwd=b)
    ws = homes.workspace(a, home=root / "home-a")
    ids = [writes.capture(ws, writes.CaptureRequest(
        text=f"Fact number {i}: service {i} listens on port {8000 + i}", scope="personal")
    ).memory.id for i in range(n)]
    print(f"N = {n}")
    timed("propose N", team.propose, ws, ids)
    result = timed("submit --all (one commit)", team.submit, ws, (), True)
    assert result.commit  # type: ignore[attr-defined]
    git("push", "-q", "origin", "main", cwd=a)
    wsb = homes.workspace(b, home=root / "home-b")
    receipt = timed("pull (fetch + ff + receipt)", pull.pull, wsb)
    assert len(receipt.new) == n  # type: ignore[attr-defined]
    timed("sync-status", team.sync_status, wsb)
    subprocess.run(["rm", "-rf", str(root)], check=False)


if __name__ == "__main__":
    main()
