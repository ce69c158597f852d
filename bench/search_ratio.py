"""`git memex search WORD` against `git grep -l WORD`, whole processes, in turn (not a test).

Issue 18's target for search is a ratio: a whole `search` process under 1.3x `git grep
-l` of the same word at 10,000 memories. On a shared machine one run of each says
little, so this runs them in turn, round after round: each round runs every TREE's
search (PYTHONPATH=TREE: main's code beside a branch's) and then git grep, on
stores made by `bench/scale.py --keep DIR` (DIR/N: repo/, home/, memex-home/,
gitconfig). Each process is started as the installed `git-memex` script starts it
(`from memex.adapters.cli.main import main`), not through `python -m` (runpy's
imports are not the command's). Printed: median and fastest wall and CPU seconds
(user + system of the child) of each, their ratio to git grep's, and the load average
before and after (under load the wall mostly measures the neighbours; the fastest runs
are the nearest to a quiet machine).

    python bench/search_ratio.py --store DIR/10000 [--store2 DIR2/10000] [--tree T ...]
                                 [--runs 9] [--word kauph] [--warm 2]

--tree defaults to this checkout. --store2: a second copy of the store for the second
tree (and on for each further tree; the last store serves the rest), so code that keeps
another walk digest or index schema than the first tree's does not rewrite the same
index on every turn. Each store is warmed first (--warm runs of each process, not
counted: the page cache, Python's .pyc files, git-memex's code cache).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

from scale import run  # one whole process timed: wall, CPU, stdout

ROOT = Path(__file__).resolve().parent.parent
ENTRY = ("import sys; from memex.adapters.cli.main import main; "
         "sys.argv[0] = 'git-memex'; sys.exit(main())")


def store_env(store: Path, tree: Path | None) -> dict[str, str]:
    """The isolated environment bench/scale.py runs a kept store's commands in."""
    home = store / "home"
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_MEMEX_HOME": str(store / "memex-home"),
        "GIT_CONFIG_GLOBAL": str(store / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
    }
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--store2", type=Path, action="append", default=[])
    parser.add_argument("--tree", type=Path, action="append", default=[])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--warm", type=int, default=2)
    parser.add_argument("--word", default="kauph")
    args = parser.parse_args()
    trees = args.tree or [ROOT]
    stores = [args.store, *args.store2]
    # (label, argv, cwd, env) of each process a round runs
    jobs: list[tuple[str, list[str], Path, dict[str, str]]] = []
    for i, tree in enumerate(trees):
        store = stores[min(i, len(stores) - 1)].resolve()
        jobs.append((f"search ({tree})", [sys.executable, "-c", ENTRY, "search", args.word],
                     store / "repo", store_env(store, tree.resolve())))
    grep_store = stores[0].resolve()
    jobs.append(("git grep -l", ["git", "grep", "-l", args.word], grep_store / "repo",
                 store_env(grep_store, None)))
    for _ in range(args.warm):
        for _, argv, cwd, env in jobs:
            run(argv, cwd, env)
    outputs = {label: run(argv, cwd, env)[2] for label, argv, cwd, env in jobs}
    searches = [out for label, out in outputs.items() if label.startswith("search")]
    same = all(out == searches[0] for out in searches)
    load_before = os.getloadavg()
    walls: dict[str, list[float]] = {label: [] for label, *_ in jobs}
    cpus: dict[str, list[float]] = {label: [] for label, *_ in jobs}
    for _ in range(args.runs):
        for label, argv, cwd, env in jobs:
            wall, cpu, _ = run(argv, cwd, env)
            walls[label].append(wall)
            cpus[label].append(cpu)
    load_after = os.getloadavg()
    grep = "git grep -l"
    print(f"{args.runs} rounds, word {args.word!r}, load average {load_before[0]:.2f} -> "
          f"{load_after[0]:.2f}; the searches' outputs are "
          f"{'the same' if same else 'NOT the same'}")
    print(f"{'process':<48} {'wall med':>8} {'wall min':>8} {'cpu med':>8} {'cpu min':>8} "
          f"{'x grep (med / min wall)':>24}")
    for label, *_ in jobs:
        w, c = walls[label], cpus[label]
        ratio = (f"{statistics.median(w) / statistics.median(walls[grep]):.2f} / "
                 f"{min(w) / min(walls[grep]):.2f}")
        print(f"{label[-48:]:<48} {statistics.median(w):8.3f} {min(w):8.3f} "
              f"{statistics.median(c):8.3f} {min(c):8.3f} {ratio:>24}")


if __name__ == "__main__":
    main()
