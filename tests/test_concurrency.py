"""Several processes writing one store at once (issue 13, items 3 and 4): every write
lands, identical captures make one file, the index survives, nothing crashes; a clean
"busy" failure only past memex.lockTimeout."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from memex.storage import homes, locks
from tests.helpers import invoke, invoke_json

ROOT = Path(__file__).resolve().parent.parent


def _spawn(repo: Path, number: int, steps: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.concurrent_worker", str(number),
                             *steps], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_concurrent_captures_updates_searches_and_reindex(repo: Path) -> None:
    invoke("init")
    target = invoke_json("capture", "the draft every updater tags")["id"]
    capturers, captures, updaters, tags = 3, 6, 2, 5
    procs = []
    for w in range(capturers):
        steps = [f"capture|writer {w} note {i} on topic{w}q{i}" for i in range(captures)]
        steps.insert(2, "capture|one text that every writer captures")
        procs.append(_spawn(repo, w, steps))
    for w in range(updaters):
        procs.append(_spawn(repo, 10 + w, [f"update|{target}|--tag|u{w}t{i}"
                                            for i in range(tags)]))
    procs.append(_spawn(repo, 20, ["search|note", "list", "search|topic", "context"] * 2))
    procs.append(_spawn(repo, 30, ["reindex|--full"] * 3))
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and "Traceback" not in err, err
        assert set(out.split("\n")) <= {"ok", ""}, out
    outbox = homes.workspace(repo).outbox_dir
    texts = [p.read_text(encoding="utf-8") for p in outbox.glob("*.md")]
    assert len(texts) == 1 + capturers * captures + 1
    assert sum("one text that every writer captures" in t for t in texts) == 1
    tagged = invoke_json("show", target)["tags"]
    assert sorted(tagged) == sorted(f"u{w}t{i}" for w in range(updaters) for i in range(tags))
    assert not list(outbox.glob(".*.tmp"))
    report = invoke_json("reindex")
    assert report["memories"] == len(texts) and not report["quarantined"]


def test_busy_only_past_the_lock_timeout(repo: Path) -> None:
    invoke("init")
    ws = homes.workspace(repo)
    lock_path = ws.home / locks.LOCK_NAME
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a") as holder:
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)  # another process's write in progress
        subprocess.run(["git", "config", "memex.lockTimeout", "0"], cwd=repo, check=True)
        busy = invoke("capture", "waits for nobody")
        assert busy.exit_code == 1 and "busy" in busy.stderr and "memex.lockTimeout" in \
            busy.stderr
        assert not list(ws.outbox_dir.glob("*.md"))
        subprocess.run(["git", "config", "--unset", "memex.lockTimeout"], cwd=repo, check=True)
        # Under the default wait, the write waits for the holder and lands.
        release = threading.Timer(0.3, fcntl.flock, (holder.fileno(), fcntl.LOCK_UN))
        release.start()
        waited = invoke("capture", "waits for the holder")
        release.join()
    assert waited.exit_code == 0, waited.stderr
    assert len(list(ws.outbox_dir.glob("*.md"))) == 1


def test_write_lock_is_reentrant_in_a_process(tmp_path: Path) -> None:
    done = []
    with locks.write_lock(tmp_path, timeout=0), locks.write_lock(tmp_path, timeout=0):
        done.append(time.monotonic())
    assert done


def test_an_older_or_damaged_index_is_rebuilt_in_place(repo: Path) -> None:
    """Never deleted or renamed: another process may hold the file open."""
    import sqlite3

    from memex.index import build

    invoke("init")
    invoke("capture", "lychee orchards need frost protection")
    db = build.db_path(homes.workspace(repo))
    inode = db.stat().st_ino
    build.forget_connections()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    found = invoke("search", "lychee", "--json")
    assert found.exit_code == 0 and "lychee" in found.stdout
    assert "rebuilt" in found.stderr
    build.forget_connections()
    db.write_bytes(b"garbage, not a database" * 200)
    Path(f"{db}-wal").unlink(missing_ok=True)  # else SQLite reads page 1 from the WAL
    found = invoke("search", "lychee", "--json")
    assert found.exit_code == 0 and "lychee" in found.stdout and "rebuilt" in found.stderr
    assert db.stat().st_ino == inode


def test_write_lock_excludes_another_thread(tmp_path: Path) -> None:
    """Re-entrant in a thread only: an MCP server's second thread waits its turn."""
    inside = threading.Event()
    release = threading.Event()
    seen: list[str] = []

    def holder() -> None:
        with locks.write_lock(tmp_path):
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    inside.wait(10)
    try:
        with locks.write_lock(tmp_path, timeout=0):
            seen.append("entered")
    except locks.LockBusy:
        seen.append("busy")
    release.set()
    thread.join()
    assert seen == ["busy"]
