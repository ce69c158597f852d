"""Concurrent writers on one repo: every write lands, and how fast.

Run: python bench/concurrency.py [--writers 8] [--captures 200] [--updates 0]
     python bench/concurrency.py --single 40
In a throwaway repo with its own HOME and GIT_MEMEX_HOME:
- WRITERS processes each run CAPTURES distinct `capture`s (one interpreter per
  writer, the CLI's own code path, tests/helpers/concurrent_worker.py), plus one capture of
  the same text by every writer; then UPDATES `update --tag` per writer on one draft.
  Reported: captures per second over the whole run, failures by message, tracebacks,
  files on disk against captures that said ok, tags kept against tags added, and
  copies of the shared text (1 is right).
- --single N: N captures one after another in one process, the median time of one:
  the cost of the write lock on an uncontended capture. Run it on an older checkout
  with PYTHONPATH=that checkout for the before figure.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def environment(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
    home = tmp / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n",
        encoding="utf-8")
    env.update(HOME=str(home), GIT_MEMEX_HOME=str(tmp / "memex-home"),
               GIT_CONFIG_GLOBAL=str(home / ".gitconfig"), GIT_CONFIG_NOSYSTEM="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                         env.get("PYTHONPATH", "")])))
    return env


def make_repo(tmp: Path, env: dict[str, str]) -> Path:
    repo = tmp / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["commit", "-q", "--allow-empty", "-m", "i"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    worker(repo, env, 0, ["init"])
    return repo


def worker(repo: Path, env: dict[str, str], number: int, steps: list[str]
           ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tests.helpers.concurrent_worker", str(number),
                           *steps], cwd=repo, env=env, capture_output=True, text=True)


def spawn(repo: Path, env: dict[str, str], number: int, steps: list[str]
          ) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.concurrent_worker", str(number),
                             *steps], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def drafts(env: dict[str, str]) -> list[Path]:
    return sorted(Path(env["GIT_MEMEX_HOME"]).glob("outbox/*/*.md"))


def run_all(procs: list[subprocess.Popen[str]]) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    tracebacks: list[str] = []
    for proc in procs:
        out, err = proc.communicate()
        lines += out.splitlines()
        if proc.returncode != 0 or "Traceback" in err:
            tracebacks.append(err.strip().splitlines()[-1] if err.strip() else "no output")
    return lines, tracebacks


def concurrent(writers: int, captures: int, updates: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = environment(tmp)
        repo = make_repo(tmp, env)
        procs = []
        started = time.perf_counter()
        for w in range(writers):
            steps = [f"capture|writer {w} capture {i} about topic{w}x{i}"
                     for i in range(captures)]
            steps.insert(captures // 2, "capture|the same text from every writer")
            procs.append(spawn(repo, env, w, steps))
        lines, tracebacks = run_all(procs)
        seconds = time.perf_counter() - started
        ok = sum(1 for line in lines if line == "ok")
        failed = collections.Counter(line for line in lines if line != "ok")
        files = drafts(env)
        same = sum(1 for p in files
                   if "the same text from every writer" in p.read_text(encoding="utf-8"))
        print(f"{writers} writers x {captures} captures (+1 shared text each): "
              f"{seconds:.1f} s, {ok / seconds:.1f} captures/s")
        print(f"  ok {ok}, failed {sum(failed.values())}, tracebacks {len(tracebacks)}")
        for message, count in failed.most_common(5):
            print(f"    {count} x {message[:150]}")
        for message in tracebacks[:5]:
            print(f"    traceback: {message[:150]}")
        print(f"  files {len(files)} (expected {writers * captures + 1}); "
              f"copies of the shared text {same} (expected 1)")
        if updates:
            target = files[0].stem
            procs = [spawn(repo, env, w, [f"update|{target}|--tag|w{w}t{i}"
                                          for i in range(updates)])
                     for w in range(writers)]
            started = time.perf_counter()
            lines, tracebacks = run_all(procs)
            seconds = time.perf_counter() - started
            text = files[0].read_text(encoding="utf-8")
            kept = sum(1 for w in range(writers) for i in range(updates)
                       if f"w{w}t{i}" in text.replace("[", " ").replace("]", " ")
                       .replace(",", " ").split())
            print(f"{writers} writers x {updates} `update --tag` on one draft: "
                  f"{seconds:.1f} s; ok {lines.count('ok')}, tracebacks {len(tracebacks)}, "
                  f"tags kept {kept} of {writers * updates}")


def single(count: int) -> None:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = environment(tmp)
        repo = make_repo(tmp, env)
        code = (
            "import sys, time\n"
            "from tests.helpers.concurrent_worker import run\n"
            "samples = []\n"
            f"for i in range({count}):\n"
            "    t = time.perf_counter()\n"
            "    run(['capture', f'single capture number {i} text'])\n"
            "    samples.append(time.perf_counter() - t)\n"
            "print(' '.join(str(s) for s in samples))\n")
        out = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env,
                             capture_output=True, text=True, check=True).stdout
        samples = [float(s) for s in out.split()]
        print(f"one capture, uncontended, {count} in a row: median "
              f"{statistics.median(samples) * 1000:.1f} ms, "
              f"min {min(samples) * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--captures", type=int, default=200)
    parser.add_argument("--updates", type=int, default=0)
    parser.add_argument("--single", type=int, default=0)
    args = parser.parse_args()
    if args.single:
        single(args.single)
    else:
        concurrent(args.writers, args.captures, args.updates)


if __name__ == "__main__":
    main()
