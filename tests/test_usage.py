"""The usage log: rotation past its size limit, reading across generations, appenders
in several processes at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memex.storage import homes, usage
from tests.helpers import git, invoke
from tests.helpers.memfiles import memory, write


def _ids(home: Path) -> list[str]:
    return [str(e["ids"][0]) for e in usage.entries(home)]  # type: ignore[index]


def _fill(home: Path, first: int, count: int, limit: int) -> None:
    for n in range(first, first + count):
        usage.record(home, "r", "search", [f"{n:04d}"], limit)


def _line_size(home: Path) -> int:
    _fill(home, 0, 1, 0)
    size = usage.log_path(home).stat().st_size
    usage.log_path(home).unlink()
    return size


def test_rotates_past_the_limit_and_reads_both_generations_in_order(memex_home: Path
                                                                   ) -> None:
    size = _line_size(memex_home)
    limit = 3 * size  # the fourth line takes the file past the limit
    _fill(memex_home, 0, 3, limit)
    assert not usage.old_path(memex_home).exists()
    _fill(memex_home, 3, 1, limit)
    assert usage.old_path(memex_home).stat().st_size == 4 * size
    assert not usage.log_path(memex_home).exists()
    _fill(memex_home, 4, 2, limit)
    assert usage.log_path(memex_home).stat().st_size == 2 * size
    assert _ids(memex_home) == [f"{n:04d}" for n in range(6)]


def test_a_second_rotation_drops_the_oldest_generation(memex_home: Path) -> None:
    size = _line_size(memex_home)
    limit = 3 * size
    _fill(memex_home, 0, 4, limit)  # generation 1: 0-3, rotated
    _fill(memex_home, 4, 4, limit)  # generation 2: 4-7, rotated over generation 1
    _fill(memex_home, 8, 1, limit)
    assert _ids(memex_home) == ["0004", "0005", "0006", "0007", "0008"]
    assert sorted(p.name for p in memex_home.glob("usage.jsonl*")) == [
        "usage.jsonl", "usage.jsonl.1"]


def test_no_limit_never_rotates(memex_home: Path) -> None:
    _fill(memex_home, 0, 20, 0)
    assert not usage.old_path(memex_home).exists() and len(_ids(memex_home)) == 20


def test_a_late_second_rotator_does_not_rotate_again(memex_home: Path) -> None:
    """Two processes saw the file over the limit; the second to take the lock finds
    the new, small file at the path and leaves the full generation alone."""
    size = _line_size(memex_home)
    _fill(memex_home, 0, 4, 3 * size)
    _fill(memex_home, 4, 1, 3 * size)
    usage._rotate(memex_home, 3 * size)  # the other process, after ours
    assert _ids(memex_home) == ["0000", "0001", "0002", "0003", "0004"]


def test_a_line_written_into_a_dropped_generation_is_written_again(
        memex_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that opened the log, then lost the race to two rotations, finds its
    descriptor's file unlinked (fstat's link count) and appends the line again."""
    _fill(memex_home, 0, 1, 0)
    real_open = os.open
    dropped: list[int] = []

    def open_then_lose_the_file(path: str, flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        if not dropped:
            os.unlink(path)  # what two rotations in between do to this descriptor's file
            dropped.append(fd)
        return fd

    monkeypatch.setattr(os, "open", open_then_lose_the_file)
    _fill(memex_home, 1, 1, 0)
    monkeypatch.undo()
    assert dropped and _ids(memex_home) == ["0001"]


def test_malformed_and_torn_lines_are_skipped(memex_home: Path) -> None:
    _fill(memex_home, 0, 1, 0)
    with usage.log_path(memex_home).open("a", encoding="utf-8") as handle:
        handle.write("not json\n[1, 2]\n\n")
        handle.write('{"at": "2026-01-01T00:00:00Z", "repo_id": "r", "op": "se')  # torn
    _fill(memex_home, 1, 1, 0)  # continues the torn line
    usage.old_path(memex_home).write_bytes(b'{"at": "x", "ids": ["old"]}\n\xff\xfe{"at"')
    assert _ids(memex_home) == ["old", "0000", "0001"]


def test_verify_since_finds_a_recall_in_the_rotated_file(repo: Path, memex_home: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    mem = memory()
    write(repo, mem)
    size = _line_size(memex_home)
    git("config", "memex.usageMaxBytes", str(3 * size), cwd=repo)
    assert usage.limit(homes.workspace(repo)) == 3 * size
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-03-01T00:00:00Z")
    for _ in range(3):
        usage.record(memex_home, "git-origin-sha256:someone-else", "read", ["X"], 0)
    assert invoke("show", mem.id).exit_code == 0  # the read; its append rotates
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-03-02T00:00:00Z")
    usage.record(memex_home, "git-origin-sha256:someone-else", "write", ["Y"], 0)
    assert mem.id in usage.old_path(memex_home).read_text(encoding="utf-8")
    assert mem.id not in usage.log_path(memex_home).read_text(encoding="utf-8")
    result = invoke("verify", "--json", "--since", "2026-02-01T00:00:00Z", "--require-recall")
    assert result.exit_code == 0, result.stdout
    late = invoke("verify", "--json", "--since", "2026-03-01T12:00:00Z", "--require-recall")
    assert late.exit_code == 1 and json.loads(late.stdout)["rules"]["recall"]["count"] == 1


def test_the_limit_takes_git_suffixes_and_a_bad_one_is_named(repo: Path) -> None:
    git("config", "memex.usageMaxBytes", "8M", cwd=repo)
    assert usage.limit(homes.workspace(repo)) == usage.DEFAULT_MAX_BYTES
    git("config", "memex.usageMaxBytes", "8MB", cwd=repo)
    with pytest.raises(homes.SettingError, match="memex.usageMaxBytes = '8MB'"):
        usage.limit(homes.workspace(repo))


WRITER = """
import sys, time
from pathlib import Path
from memex.storage import usage
home, name, count, limit = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
(home / f"ready-{name}").touch()
while not (home / "go").exists():  # start together, after every import
    time.sleep(0.001)
for n in range(count):
    usage.record(home, name, "search", [str(n)], limit)
"""


def _runs(entries: list[dict[str, object]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for entry in entries:
        ids = entry["ids"]
        assert isinstance(ids, list)
        out.setdefault(str(entry["repo_id"]), []).append(int(ids[0]))
    return out


def test_concurrent_appenders_keep_whole_lines_and_each_writers_latest_run(
        memex_home: Path) -> None:
    """Four processes append 1,000 lines each, rotating every ~4 lines, while this one
    reads the log again and again.

    Each line lands in one generation, and a writer's next line in the same or a later
    one; rotation keeps the last two generations whole. So, whatever the interleaving,
    every read sees, per writer, one run of consecutive lines in the order written, and
    after the end that run is the writer's last k lines (k >= 0): nothing is lost from
    the middle, duplicated or reordered; only older generations are dropped, whole.
    """
    writers, count = 4, 1000
    size = _line_size(memex_home)
    limit = 4 * size
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(memex_home), f"w{k}",
                               str(count), str(limit)]) for k in range(writers)]
    while len(list(memex_home.glob("ready-*"))) < writers:
        assert all(p.poll() is None for p in procs), "a writer died before starting"
        time.sleep(0.01)
    (memex_home / "go").touch()
    reads = 0
    while any(p.poll() is None for p in procs):
        for name, seen in _runs(list(usage.entries(memex_home))).items():
            assert seen == list(range(seen[0], seen[0] + len(seen))), (name, seen)
        reads += 1
    assert [p.wait() for p in procs] == [0] * writers and reads > 0
    assert usage.old_path(memex_home).exists()
    raw = b""
    for path in (usage.old_path(memex_home), usage.log_path(memex_home)):
        if path.exists():
            data = path.read_bytes()
            assert data == b"" or data.endswith(b"\n")
            raw += data
    parsed = [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # whole lines
    assert parsed == list(usage.entries(memex_home))
    by_writer = _runs(parsed)
    for name, seen in by_writer.items():
        assert seen == list(range(count - len(seen), count)), name
    # the last line anyone wrote is never dropped: at least one writer kept its last
    assert any(seen[-1] == count - 1 for seen in by_writer.values())
    assert len(raw) > limit  # the kept old generation was over the limit when rotated


def test_an_unreadable_generation_is_skipped_not_an_error(memex_home: Path) -> None:
    _fill(memex_home, 0, 2, 0)
    usage.old_path(memex_home).mkdir(parents=True)  # a folder where the old log goes
    assert _ids(memex_home) == ["0000", "0001"]
    usage.log_path(memex_home).unlink()
    usage.log_path(memex_home).mkdir()
    assert _ids(memex_home) == []


def test_ids_handed_out_one_by_one_make_the_line_a_list_makes(
        memex_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A streamed listing keeps its ids as their JSON text (usage.Handed): the line is
    the one a list of the same ids writes, for none, one and several (non-ASCII too)."""
    from memex.core import clock

    monkeypatch.setattr(clock, "now_str", lambda: "2026-12-02T00:00:00Z")
    for ids in ([], ["01AAAAAAAAAAAAAAAAAAAAAAAA"], ["a", 'quo"te', "déjà", "x\x7f"]):
        handed = usage.Handed()
        for memory_id in ids:
            handed.add(memory_id)
        listed, streamed = tmp_path / f"l{len(ids)}", tmp_path / f"s{len(ids)}"
        usage.record(listed, "rid", usage.Op.LIST, ids, 0)
        usage.record(streamed, "rid", usage.Op.LIST, handed, 0)
        line = usage.log_path(listed).read_bytes()
        assert usage.log_path(streamed).read_bytes() == line
        assert json.loads(line)["ids"] == ids
