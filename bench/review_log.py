"""`git memex review` on a PR of 20 memories over a base of 10,000, and `git memex log`
on a memory with 200 commits of history (not a test).

review: an origin whose main holds N memories (bench/index_search.populate); a branch
adds 20 more (words from the same vocabulary, so the near-duplicate and contradiction
heuristics have work). Per run, a fresh clone of the branch and a fresh
GIT_MEMEX_HOME: `git-memex review origin/main...HEAD` timed as a whole process cold (a
fresh CI clone: no index, and review builds none) and warm (after `reindex` and one
untimed review: the index is there).

log: one memory edited in 200 commits (title, body, review state, tags in turn);
`git-memex log ID` and `--json` timed warm.

    python bench/review_log.py [--base 10000] [--pr 20] [--commits 200] [--runs 3]

Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.index_search import AT, git, make_text, populate, vocabulary  # noqa: E402
from memex.core import frontmatter, model  # noqa: E402
from memex.core.ulid import new_ulid  # noqa: E402

BIN = Path(sys.executable).parent
EXE = shutil.which("git-memex", path=str(BIN)) or "git-memex"
IDENT = ["-c", "user.name=b", "-c", "user.email=b@example.com"]


def env_for(home: Path) -> dict[str, str]:
    return dict(os.environ, GIT_MEMEX_HOME=str(home), GIT_MEMEX_NOW=AT,
                PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


CPU: dict[str, list[float]] = {}  # label -> CPU seconds (user + sys) of each run


def timed(args: list[str], cwd: Path, env: dict[str, str], label: str = "") -> float:
    """Wall seconds of one process; its CPU seconds go to CPU[label] (a figure the
    machine's load changes far less than the wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([EXE, *args], cwd=cwd, env=env, capture_output=True)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{args} failed ({done.returncode}): {done.stderr!r}")
    if label:
        CPU.setdefault(label, []).append(after.ru_utime - before.ru_utime
                                         + after.ru_stime - before.ru_stime)
    return seconds


def pr_memories(folder: Path, count: int) -> None:
    rng = random.Random(11)
    vocab = vocabulary(random.Random(7))  # populate's vocabulary: shared tags and words
    for _ in range(count):
        memory = model.Memory(
            id=new_ulid(), scope="project", type="decision", title=make_text(rng, vocab, 6),
            body=make_text(rng, vocab, rng.randint(20, 120)),
            tags=model.normalise_tags([rng.choice(vocab[:200]) for _ in range(2)]),
            repo_id="git-origin-sha256:x", review_state="proposed", created_at=AT,
            updated_at=AT, trust_level="reviewed", paths=["src/**"])
        (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")


def measure_review(base: int, pr: int, runs: int) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="memex-bench-review-"))
    try:
        origin = tmp / "origin"
        origin.mkdir()
        git("init", "-q", "-b", "main", cwd=origin)
        populate(origin, base)
        (origin / "src").mkdir()
        (origin / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
        git("add", "-A", cwd=origin)
        git(*IDENT, "commit", "-qm", "base", cwd=origin)
        git("switch", "-q", "-c", "pr", cwd=origin)
        pr_memories(origin / ".memex", pr)
        git("add", "-A", cwd=origin)
        git(*IDENT, "commit", "-qm", "pr", cwd=origin)
        git("switch", "-q", "main", cwd=origin)
        cold: list[float] = []
        warm: list[float] = []
        cold_label = f"`review` {pr}-memory PR over {base:,}: fresh clone (no index)"
        warm_label = f"`review` {pr}-memory PR over {base:,}: warm index"
        for i in range(runs):
            clone = tmp / f"clone{i}"
            subprocess.run(["git", "clone", "-q", "--branch", "pr", str(origin), str(clone)],
                           check=True, capture_output=True)
            env = env_for(tmp / f"home{i}")
            cold.append(timed(["review", "origin/main...HEAD"], clone, env, cold_label))
            timed(["reindex"], clone, env)  # review builds no index: the warm run needs one
            timed(["review", "origin/main...HEAD"], clone, env)  # the OS caches warm
            warm.append(timed(["review", "origin/main...HEAD"], clone, env, warm_label))
            shutil.rmtree(clone, ignore_errors=True)
        return {cold_label: statistics.median(cold), warm_label: statistics.median(warm)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def measure_log(commits: int, runs: int) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="memex-bench-log-"))
    try:
        repo = tmp / "repo"
        repo.mkdir()
        git("init", "-q", "-b", "main", cwd=repo)
        populate(repo, 200)  # neighbours in the folder, touched by no commit below
        git("add", "-A", cwd=repo)
        git(*IDENT, "commit", "-qm", "neighbours", cwd=repo)
        memory = model.Memory(id=new_ulid(), scope="project", title="Retries", body="Retry.",
                              review_state="proposed", created_at=AT, updated_at=AT,
                              repo_id="git-origin-sha256:x")
        path = repo / ".memex" / f"{memory.id}.md"
        states = ("proposed", "approved", "published")
        for n in range(commits):
            memory.revision = n + 1
            if n % 4 == 1:
                memory.title = f"Retries, take {n}"
            elif n % 4 == 2:
                memory.body = f"Retry {n} times.\n\nLine two."
            elif n % 4 == 3:
                memory.tags = [f"t{n}"]
            else:
                memory.review_state = states[(n // 4) % 3]
                memory.review_history.append({"at": AT, "by": f"local:r{n}@example.com",
                                              "from": "proposed", "to": memory.review_state})
            path.write_text(frontmatter.emit(memory), encoding="utf-8")
            git("add", str(path), cwd=repo)
            git(*IDENT, "commit", "-qm", f"edit {n}", cwd=repo)
        env = env_for(tmp / "home")
        timed(["log", memory.id], repo, env)  # warm git's caches
        people_label = f"`log ID` ({commits} commits)"
        data_label = f"`log ID --json` ({commits} commits)"
        people = [timed(["log", memory.id], repo, env, people_label) for _ in range(runs)]
        data = [timed(["log", memory.id, "--json"], repo, env, data_label)
                for _ in range(runs)]
        return {people_label: statistics.median(people), data_label: statistics.median(data)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=10_000)
    parser.add_argument("--pr", type=int, default=20)
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rows = measure_review(args.base, args.pr, args.runs)
    rows.update(measure_log(args.commits, args.runs))
    print(f"| what | wall seconds (median of {args.runs}) | CPU seconds (median) |")
    print("|---|---|---|")
    for what, seconds in rows.items():
        print(f"| {what} | {seconds:.2f} | {statistics.median(CPU[what]):.2f} |")


if __name__ == "__main__":
    main()
