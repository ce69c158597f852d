"""Whole-process cost of everyday commands at 1k / 10k (/ 100k) memories (not a test).

Builds a temp repo of N realistic memories (~3 KB bodies; the vocabulary and text of
bench/index_search.py) with an isolated HOME and GIT_MEMEX_HOME, indexes it once,
then times whole processes of the commands hooks and agents run on every prompt,
with `git grep -l` for the same word as the floor: a rare word (in ~3% of the
memories) and a common one (in ~39%: a search scores every memory holding it). Each
figure is the median of --runs runs; the CPU seconds (user + system of the child,
resource.getrusage) stand beside the wall seconds because the machine is shared:
under load the wall time mostly measures the neighbours. The load average is printed with the table.

    python bench/scale.py [--sizes 1000 10000] [--huge] [--runs 5] [--words 450]
                          [--only capture context] [--keep DIR]

--huge adds N = 100,000 (building it takes minutes). --keep DIR builds each store
under DIR/N once and reuses it on later runs (the timed writes add a few memories
to it each run). `import` times importing the store's own export (made once) into a
fresh repo and memory home each run, and the same memories as an open-memex folder
(another tool's files, made once; the folders made are removed after the timed runs).
"reindex --full" (whole process) is timed only when --only names it.
"""

from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(ROOT / "bench"))

import index_search  # noqa: E402

# The rare search word: the generator's word of rank 900 (index_search.vocabulary, as
# populate draws it), in 3.3% of the memories at 10,000 and 3.4% at 100,000 ("kauph";
# its Porter stem is itself, so `git grep -l` finds the same files). The common one, a
# topical word, is in 39% (3,938 of 10,001): every search of it scores ~40% of the rows.
RARE_WORD = index_search.vocabulary(random.Random(11))[900]
COMMON_WORD = "staging"


def populate(repo: Path, n: int, words: int, seed: int = 11) -> list[str]:
    """N memories of about WORDS words (450: ~3 KB) under repo/.memex; their ids."""
    paths = index_search.populate(repo, n, seed, (words // 2, words * 3 // 2))
    return [path.stem for path in paths]


def open_memex_folder(export: Path, folder: Path) -> None:
    """The memories of EXPORT (an archive) as open-memex writes them, in FOLDER's
    `.ai/open-memex/`: quoted times with milliseconds, block lists, a history entry as a
    block mapping, its project keys and nulls; every tenth id not a ULID (import gives
    it a new one)."""
    from memex.core import frontmatter

    target = folder / ".ai" / "open-memex"
    target.mkdir(parents=True)
    lines = export.read_bytes().splitlines()[1:]
    for n, raw in enumerate(lines):
        parsed = frontmatter.parse(json.loads(raw)["text"])
        data = parsed.data
        at = json.dumps(str(data["created_at"]).replace("Z", ".211Z"))
        name = data["id"] if n % 10 != 3 else f"note-{n}"
        header = [
            f"id: {json.dumps(name)}", "schema_version: 2",
            'scope_key: "project__remote__9c570c1e24d2"', 'scope: "project"',
            f"visibility: {json.dumps(data.get('visibility', 'internal'))}",
            'project_name: "remote"', f"type: {json.dumps(data['type'])}",
            f"title: {json.dumps(data.get('title'))}",
            f"importance: {json.dumps(data.get('importance', 'normal'))}",
            f"status: {json.dumps(data.get('status', 'active'))}", "tags:",
            *(f"  - {tag}" for tag in data.get("tags", [])), 'source: "cli"',
            f"created_at: {at}", f"updated_at: {at}", "supersedes: null",
            'review_state: "proposed"', 'proposed_by: "alice"', "approved_by: null",
            "review_history:", f"  - at: {at}", '    by: "alice"', '    from: "draft"',
            '    to: "proposed"', '    note: "submitted to branch main"']
        (target / f"{name}.md").write_text("---\n" + "\n".join(header) + "\n---\n\n"
                                           + parsed.body + "\n")


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system) and stdout of one whole process. The
    output is read as bytes and decoded after the clock stops: decoding `list --json`'s
    43 MB at 10k as text took this process 0.2-0.4 s of the command's wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # grep: 1 when nothing matched
        raise SystemExit(f"{' '.join(argv[:3])} failed ({done.returncode}): "
                         f"{done.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.decode()


def peak_mb(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Peak resident memory of one process (a fresh parent whose only child it is)."""
    probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, "
             "stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stdout.strip()) / 1024  # Linux reports KiB


def measure(n: int, runs: int, words: int, only: list[str], keep: Path | None = None
            ) -> dict[str, tuple[float, float]]:
    tmp = keep / str(n) if keep is not None else Path(tempfile.mkdtemp(prefix="memex-scale-"))
    reuse = (tmp / "ids").is_file()
    try:
        repo = tmp / "repo"
        repo.mkdir(parents=True, exist_ok=reuse)
        home = tmp / "home"
        home.mkdir(exist_ok=reuse)
        gitconfig = tmp / "gitconfig"
        gitconfig.write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        bindir = str(Path(sys.executable).parent)
        env = {
            "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "GIT_MEMEX_HOME": str(tmp / "memex-home"), "GIT_CONFIG_GLOBAL": str(gitconfig),
            "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8",
        }
        if os.environ.get("PYTHONPATH"):  # to time another checkout's code
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]

        def git(*args: str) -> None:
            subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

        exe = shutil.which("git-memex", path=bindir) or "git-memex"
        if reuse:
            ids = (tmp / "ids").read_text().split()
        else:
            git("init", "-q", "-b", "main")
            git("remote", "add", "origin", "https://example.com/bench/repo")
            started = time.perf_counter()
            ids = populate(repo, n, words)
            git("add", "-A")
            git("commit", "-qm", "memories")
            print(f"N = {n:,}: wrote and committed in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
            started = time.perf_counter()
            run([exe, "list", "--json"], repo, env)  # builds the index
            print(f"N = {n:,}: first index in {time.perf_counter() - started:.1f} s",
                  file=sys.stderr)
            (tmp / "ids").write_text("\n".join(ids))
        if not (tmp / "export.jsonl").is_file():
            run([exe, "export", "--output", str(tmp / "export.jsonl")], repo, env)
        rng = random.Random(5)
        vocab = index_search.vocabulary(random.Random(11))
        counter = [0]

        nonce = time.time_ns()  # a kept store has this run's texts from earlier runs

        def capture() -> list[str]:
            counter[0] += 1
            text = (f"bench note {counter[0]} of run {nonce}: "
                    + index_search.make_text(rng, vocab, words))
            return [exe, "capture", text, "--tag", vocab[counter[0] % 200]]

        _, _, out = run([exe, "capture", "the update target of this bench run", "--json"],
                        repo, env)
        target = json.loads(out)["id"]
        imports = [0]
        # Every import and control run writes into folders of its own, all removed after
        # the timed runs: files made right after N files were deleted cost the kernel
        # more than the import itself on this sandbox's ext4 without a journal (each new
        # inode skips every one freed in the last 60-360 s: ext4's recently_deleted;
        # perf: 5 s of system time for 10,000 files instead of 0.5).
        made: list[Path] = []

        def fresh_target(source: Path) -> list[str]:
            """A new repo and memory home, and the command importing SOURCE there."""
            imports[0] += 1
            target = tmp / f"import-repo-{os.getpid()}-{imports[0]}"
            target_home = tmp / f"import-home-{os.getpid()}-{imports[0]}"
            made.extend((target, target_home))
            target.mkdir()
            subprocess.run(["git", "init", "-q", "-b", "main"], cwd=target, env=env,
                           check=True)
            subprocess.run(["git", "remote", "add", "origin",
                            f"https://example.com/bench/import-{imports[0]}"],
                           cwd=target, env=env, check=True)
            return ["env", "-C", str(target), f"GIT_MEMEX_HOME={target_home}", exe,
                    "import", str(source)]

        def import_export() -> list[str]:
            return fresh_target(tmp / "export.jsonl")

        def import_folder() -> list[str]:
            """Another tool's files: the export as an open-memex folder (made once)."""
            folder = tmp / "open-memex-export"
            if not folder.is_dir():
                open_memex_folder(tmp / "export.jsonl", folder)
            return fresh_target(folder)

        index = repo / ".git" / "memex" / "index.sqlite"
        # Floors beside the commands, in the same runs: what list --json cannot avoid
        # (inflating every stored body) and what import cannot (creating its files: a
        # temp file each, written, renamed, one flush).
        decompress = [sys.executable, "-c", "import sqlite3, sys, zlib\n"
                      "for (b,) in sqlite3.connect(sys.argv[1]).execute("
                      "'SELECT zbody FROM memories'):\n"
                      "    zlib.decompress(b) if type(b) is bytes else b", str(index)]

        def create_files() -> list[str]:
            imports[0] += 1
            target = tmp / f"control-files-{os.getpid()}-{imports[0]}"
            made.append(target)
            return [sys.executable, "-c", "import json, os, sys\n"
                    "os.mkdir(sys.argv[2]); lines = open(sys.argv[1]).read().splitlines()\n"
                    "for n, line in enumerate(lines[1:]):\n"
                    "    tmp = os.path.join(sys.argv[2], f'.{n}.tmp')\n"
                    "    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)\n"
                    "    os.write(fd, json.loads(line)['text'].encode()); os.close(fd)\n"
                    "os.sync()\n"
                    "for n in range(len(lines) - 1):\n"
                    "    os.replace(os.path.join(sys.argv[2], f'.{n}.tmp'), "
                    "os.path.join(sys.argv[2], f'{n}.md'))\n",
                    str(tmp / "export.jsonl"), str(target)]

        commands = {
            "capture": capture,
            "context": lambda: [exe, "context"],
            "show": lambda: [exe, "show", ids[counter[0] % len(ids)]],
            "update": lambda: [exe, "update", target, "--tag", f"t{counter[0]}"],
            "list --json": lambda: [exe, "list", "--json"],
            "verify (warm)": lambda: [exe, "verify"],
            f"search {RARE_WORD} (rare word, ~3%)": lambda: [exe, "search", RARE_WORD],
            f"search {COMMON_WORD} (common word, ~39%)": lambda: [exe, "search", COMMON_WORD],
            # from cold: neither the paired results (hygiene-cache.json) nor each memory's
            # word set (words.sqlite, workflows/word_cache.py) kept (the index is warm), so
            # every pass runs; then with only the paired results gone (a changed store whose
            # word sets were kept by an earlier report: the word pass reads them back)
            "health (cold)": lambda: ["sh", "-c", "rm -f .git/memex/hygiene-cache.json "
                                      ".git/memex/words.sqlite* && "
                                      f"exec '{exe}' health"],
            "health (pairs gone, word sets kept)": lambda: [
                "sh", "-c", f"rm -f .git/memex/hygiene-cache.json && exec '{exe}' health"],
            "health (warm)": lambda: [exe, "health"],
            f"git grep -l {RARE_WORD} (floor, rare)": lambda: ["git", "grep", "-l", RARE_WORD],
            f"git grep -l {COMMON_WORD} (floor, common)": lambda: ["git", "grep", "-l",
                                                                  COMMON_WORD],
            "reindex --full": lambda: [exe, "reindex", "--full", "-q"],
            "import (its own export, fresh repo)": import_export,
            "import (the export as an open-memex folder, fresh repo)": import_folder,
            "list --json floor: decompress every body (control)": lambda: decompress,
            "import floor: create its files (control)": create_files,
        }
        commands = {k: v for k, v in commands.items() if (not only and k != "reindex --full")
                    or any(o in k for o in only)}
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        run([exe, "verify"], repo, env)  # warm what verify caches
        for _ in range(runs):  # in turn, so a burst of load spreads over all of them
            for name, argv in commands.items():
                counter[0] += 1
                wall, cpu, _ = run(argv(), repo, env)
                samples[name].append((wall, cpu))
        out = {name: (statistics.median(w for w, _ in got),
                      statistics.median(c for _, c in got))
               for name, got in samples.items()}
        out["list --json peak memory (MB)"] = (peak_mb([exe, "list", "--json"], repo, env),
                                               0.0)
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
        return out
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--huge", action="store_true", help="also N = 100,000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--words", type=int, default=450, help="body words (450: ~3 KB)")
    parser.add_argument("--only", nargs="+", default=[],
                        help="time only the commands whose name holds one of these")
    parser.add_argument("--keep", type=Path, help="build each store under DIR/N once, "
                        "and reuse it")
    args = parser.parse_args()
    sizes = list(args.sizes) + ([100_000] if args.huge else [])
    load_before = os.getloadavg()
    results = {n: measure(n, args.runs, args.words, args.only, args.keep) for n in sizes}
    load_after = os.getloadavg()
    print(f"median of {args.runs} whole processes; wall s / CPU s (user+sys); load average "
          f"{load_before[0]:.1f} before, {load_after[0]:.1f} after "
          f"({os.cpu_count()} cores)")
    print("| command | " + " | ".join(f"N = {n:,} wall / CPU" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in next(iter(results.values())):
        cells = " | ".join(f"{results[n][name][0]:.0f} MB" if "(MB)" in name else
                           f"{results[n][name][0]:.3f} / {results[n][name][1]:.3f}"
                           for n in sizes)
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
