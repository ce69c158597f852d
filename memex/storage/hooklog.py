"""The trace an agent hook leaves when it fails: `$GIT_MEMEX_HOME/hook-errors.jsonl`.

Agent hooks never block the user's prompt, so their failures print nothing; one JSON
line here per failure (when, which hook, what) lets `doctor` say that memory injection
has stopped. Writing it never fails either; the file keeps its newest lines only.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import datetime
from pathlib import Path

from memex.core import clock
from memex.storage import store

NAME = "hook-errors.jsonl"
MAX_BYTES = 64 * 1024  # past this, the older half is dropped
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND


def log_path(home: Path) -> Path:
    return home / NAME


def record(home: Path, hook: str, message: str) -> None:
    """Append one failure; any error writing it is swallowed (hooks never block). The
    message is masked as a write would store it (the last guard: an error that quoted a
    value raw leaves no secret in the log), and cut only after masking."""
    from memex.core import redact  # only for a failure: its patterns compile for writes

    message = redact.redact(message).text
    line = json.dumps({"at": clock.now_str(), "hook": hook, "error": message[:2000]},
                      ensure_ascii=False) + "\n"
    path = log_path(home)
    with contextlib.suppress(OSError):
        home.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, _FLAGS, 0o600)
        try:
            os.write(fd, line.encode("utf-8"))
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > MAX_BYTES:
            _trim(path)


def _trim(path: Path) -> None:
    """Keep the newer half of the lines (a lost race costs a few lines of a log)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    store.write_atomic(path, "".join(lines[len(lines) // 2:]))


def since(home: Path, moment: datetime) -> list[dict[str, str]]:
    """The failures recorded at or after MOMENT, oldest first."""
    try:
        text = log_path(home).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out: list[dict[str, str]] = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
            at = clock.parse_time(item["at"])
        except (ValueError, KeyError, TypeError):
            continue
        if at >= moment and isinstance(item, dict):
            out.append({k: str(v) for k, v in item.items()})
    return out
