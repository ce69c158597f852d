"""`import` of an export alone, in process (not a test): CPU and wall of
portable.import_path into a fresh repo and memory home, with the forked helper forced on
or off (or the load gate's choice), beside another checkout's code run the same way in the
same minutes, in turn. The helper's CPU (a reaped child) is shown apart from the
importing process's own.

    python bench/import_speed.py EXPORT [--runs 3] [--modes off on] [--base /tmp/base]
                                 [--work DIR] [--profile]

EXPORT: a `git memex export` archive (bench/scale.py --keep DIR leaves DIR/N/export.jsonl).
--base PATH: also time that checkout's import (PYTHONPATH=PATH; it takes no fork option).
--profile: one cProfile run of this checkout (helper off), the top of it by own time.
Each run is a whole child process (a fresh interpreter); only the import is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHILD = r"""
import cProfile, io, json, os, pstats, resource, sys, time
from pathlib import Path
export, mode = Path(sys.argv[1]), sys.argv[2]
from memex.storage import homes
from memex.workflows import portable
ws = homes.workspace()
kwargs = {} if mode in ("auto", "base") else {"fork": mode == "on"}
profile = cProfile.Profile() if mode == "profile" else None
if profile is not None:
    kwargs = {"fork": False}
before, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
    resource.RUSAGE_CHILDREN)
started = time.perf_counter()
if profile is not None:
    profile.enable()
report = portable.import_path(ws, export, **kwargs)
if profile is not None:
    profile.disable()
wall = time.perf_counter() - started
after, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
    resource.RUSAGE_CHILDREN)
out = {"wall": wall, "user": after.ru_utime - before.ru_utime,
       "sys": after.ru_stime - before.ru_stime,
       "helper": (reaped.ru_utime - children.ru_utime) + (reaped.ru_stime - children.ru_stime),
       "imported": len(report.imported), "load": os.getloadavg()[0],
       "faults": after.ru_minflt - before.ru_minflt,
       "switches": after.ru_nivcsw - before.ru_nivcsw}
if profile is not None:
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(25)
    out["profile"] = text.getvalue()
print(json.dumps(out))
"""


def one(export: Path, mode: str, work: Path, pythonpath: str | None) -> dict[str, Any]:
    """One import into a fresh repo and home under WORK (removed after)."""
    root = Path(tempfile.mkdtemp(prefix="import-", dir=work))
    try:
        repo, home = root / "repo", root / "home"
        repo.mkdir()
        home.mkdir()
        gitconfig = root / "gitconfig"
        gitconfig.write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
               "GIT_MEMEX_HOME": str(root / "memex-home"),
               "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
               "LANG": "C.UTF-8"}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        for argv in (["git", "init", "-q", "-b", "main"],
                     ["git", "remote", "add", "origin", "https://example.com/bench/import"]):
            subprocess.run(argv, cwd=repo, env=env, check=True)
        done = subprocess.run([sys.executable, "-c", CHILD, str(export), mode], cwd=repo,
                              env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{mode} failed: {done.stderr}")
        result: dict[str, Any] = json.loads(done.stdout)
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("export", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=["off", "on"],
                        choices=["off", "on", "auto"])
    parser.add_argument("--base", help="another checkout, timed the same way in turn")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    export = args.export.resolve()
    here = str(Path(__file__).resolve().parent.parent)
    runs = [(mode, here) for mode in args.modes]
    if args.base:
        runs.insert(0, ("base", args.base))
    print("| code, helper | wall s | CPU s importing process (user + sys) | helper CPU s "
          "| load |")
    print("|---|---:|---:|---:|---:|")
    for _ in range(args.runs):  # in turn, so a burst of load spreads over all of them
        for mode, path in runs:
            got = one(export, mode, args.work, path)
            name = "base" if mode == "base" else f"this, helper {mode}"
            print(f"| {name} | {got['wall']:.2f} | {float(got['user']) + float(got['sys']):.2f}"
                  f" ({got['user']:.2f} + {got['sys']:.2f}) | {got['helper']:.2f} "
                  f"| {got['load']:.1f} |", flush=True)
    if args.profile:
        got = one(export, "profile", args.work, here)
        print(got["profile"])


if __name__ == "__main__":
    main()
