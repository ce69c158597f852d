"""Time the pre-commit secret scan over N staged memory files (target: 1,000 under 1 s).

    python bench/hook_scan.py [N]

Builds a throwaway repo with N memory files (realistic bodies, some holding masked
tokens, none a live secret), stages them, then times `git-memex-scan --staged` as a
whole process (what the git hook runs) and the library call alone. Best of 3 runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memex.core import frontmatter, model
from memex.core.ulid import new_ulid
from memex.storage import homes
from memex.workflows import scan

BODY = (
    "We deploy with `make release` from a clean tree. The token for the registry lives in "
    "the vault (ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is the masked example), never in "
    "the repo.\n\n- step one: bump the version\n- step two: tag it\n- step three: push the "
    "tag; CI builds the wheel and uploads it.\n\nSee docs/release.md for the details. "
)


def build(root: Path, count: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_MEMEX_HOME": str(root / "home")}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    folder = repo / ".memex"
    folder.mkdir()
    for i in range(count):
        memory = model.Memory(
            id=new_ulid(), scope="project", title=f"Release step {i}", body=BODY * (1 + i % 3),
            tags=["release", f"t{i % 17}"], review_state="proposed",
            created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
        (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    return repo


def best(fn: object, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    exe = shutil.which("git-memex-scan") or str(Path(sys.executable).parent / "git-memex-scan")
    root = Path(tempfile.mkdtemp(prefix="git-memex-bench-"))
    try:
        repo = build(root, count)
        env = {**os.environ, "GIT_MEMEX_HOME": str(root / "home")}

        def process() -> None:
            proc = subprocess.run([exe, "--staged"], cwd=repo, env=env, capture_output=True)
            assert proc.returncode == 0, proc.stderr

        ws = homes.workspace(repo, home=root / "home")

        def library() -> None:
            scanned, findings = scan.scan_staged(ws)
            assert scanned == count and not findings

        whole = best(process)
        inner = best(library)
        print(f"{count} staged memory files: git-memex-scan --staged {whole:.3f} s "
              f"(whole process); library scan_staged {inner:.3f} s")
        return 0 if whole < 1.0 or count != 1000 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
