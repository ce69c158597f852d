"""The usage log: one JSON line per read or write, for local gates (`verify --since`)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from memex import clock


def log_path(home: Path) -> Path:
    return home / "usage.jsonl"


def record(home: Path, repo_id: str, operation: str, ids: Iterable[str]) -> None:
    """Append one line; a log that cannot be written never fails the command."""
    line = json.dumps(
        {"at": clock.now_str(), "repo_id": repo_id, "op": operation, "ids": list(ids)},
        ensure_ascii=False,
    )
    with contextlib.suppress(OSError):
        home.mkdir(parents=True, exist_ok=True)
        # O_APPEND writes of one short line are atomic enough between processes.
        fd = os.open(log_path(home), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)


def entries(home: Path) -> Iterator[dict[str, object]]:
    try:
        handle = log_path(home).open(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict):
                    yield item
