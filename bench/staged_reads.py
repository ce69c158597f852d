"""Staged memory files read for `scan --staged` (the pre-commit hook): the git binary
(what gitio does: `git diff --cached --name-only` + one `git cat-file --batch`) against
pygit2 in process (import included, as a hook pays it on every commit).

Usage: pip install pygit2; python bench/staged_reads.py [--runs 20]
pygit2 is not a dependency of git-memex (docs/decisions.md says why); this script is
the measurement behind that decision. Each sample is a fresh interpreter.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

GIT = r'''
import subprocess, time
t = time.perf_counter()
names = subprocess.run(["git", "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR",
                        "--", ".memex"], capture_output=True, check=True).stdout
paths = [p for p in names.decode().split("\0") if p]
subprocess.run(["git", "cat-file", "--batch"], capture_output=True,
               input="".join(f":{p}\n" for p in paths).encode())
print(time.perf_counter() - t, len(paths))
'''
PYGIT2 = r'''
import time
t = time.perf_counter()
import pygit2
repo = pygit2.Repository(".")
diff = repo.index.diff_to_tree(repo.head.peel().tree)
paths = [d.new_file.path for d in diff.deltas
         if d.status_char() in "ACMR" and d.new_file.path.startswith(".memex/")]
texts = [repo[repo.index[p].id].data.decode("utf-8", "replace") for p in paths]
print(time.perf_counter() - t, len(paths))
'''


def sample(code: str, cwd: Path) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                         text=True, check=True).stdout.split()
    return float(out[0]), int(out[1])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    print(f"{'staged files':>12} {'git binary':>11} {'pygit2':>9}  (median of {args.runs}, ms)")
    for count in (5, 200):
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp)
            subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
            (repo / "README").write_text("x\n", encoding="utf-8")
            subprocess.run(["git", "add", "."], cwd=repo, check=True)
            subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True, env=env)
            (repo / ".memex").mkdir()
            for i in range(count):
                (repo / ".memex" / f"m{i:04d}.md").write_text(
                    f"---\nid: m{i}\n---\n" + "body text " * 50, encoding="utf-8")
            subprocess.run(["git", "add", "."], cwd=repo, check=True)
            git, pg = [], []
            for _ in range(args.runs):  # alternating, so load hits both alike
                git.append(sample(GIT, repo))
                pg.append(sample(PYGIT2, repo))
            assert {n for _, n in git} == {n for _, n in pg} == {count}
            print(f"{count:>12} {statistics.median(t for t, _ in git) * 1000:>11.1f} "
                  f"{statistics.median(t for t, _ in pg) * 1000:>9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
