"""The usage log: 1,000 record() calls, and entries() over a full log.

Run: python bench/usage_log.py
In a temp home, median of 5 runs each:
- 1,000 record() calls of a search with 5 ids, on a log below the limit (the usual
  case: open, one O_APPEND write, one fstat, close);
- 1,000 record() calls with a limit of one line, so every call also rotates (lock,
  stat, rename): the worst case;
- entries() over a full 8 MiB current file, and over the 8 MiB old generation plus an
  8 MiB current file (the most the log holds at the default limit).
Only record(home, repo_id, op, ids) and entries(home) are called with a default
limit, so the same script times an older checkout (PYTHONPATH=that checkout).
"""

from __future__ import annotations

import inspect
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memex.storage import usage

REPO = "git-origin-sha256:" + "ab" * 32
IDS = ["01JD" + f"{n:022d}" for n in range(5)]
MIB = 1024 * 1024


def median(func: Callable[[], object], runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def fill(path: Path, size: int) -> int:
    line = json.dumps({"at": "2026-12-01T00:00:00Z", "repo_id": REPO, "op": "search",
                       "ids": IDS}) + "\n"
    count = size // len(line)
    path.write_text(line * count, encoding="utf-8")
    return count


def show(label: str, seconds: float) -> None:
    print(f"{label:42} {seconds * 1000:7.1f} ms")


def main() -> None:
    rotating = "max_bytes" in inspect.signature(usage.record).parameters
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)

        def appends() -> None:
            usage.log_path(home).unlink(missing_ok=True)
            for _ in range(1000):
                usage.record(home, REPO, "search", IDS, usage.DEFAULT_MAX_BYTES)

        show("1,000 record() below the limit", median(appends))
        if rotating:
            def rotations() -> None:
                for _ in range(1000):
                    usage.record(home, REPO, "search", IDS, 1)

            show("1,000 record() each rotating", median(rotations))
        for name in ("usage.jsonl", "usage.jsonl.1"):
            (home / name).unlink(missing_ok=True)
        lines = fill(usage.log_path(home), 8 * MIB)
        show(f"entries() over 8 MiB ({lines:,} lines)",
             median(lambda: sum(1 for _ in usage.entries(home))))
        if rotating:
            fill(usage.old_path(home), 8 * MIB)
            show(f"entries() over 8 + 8 MiB ({2 * lines:,} lines)",
                 median(lambda: sum(1 for _ in usage.entries(home))))


if __name__ == "__main__":
    main()
