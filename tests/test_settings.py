"""The settings registry: every memex.* key typed, git's integer suffixes, and one clear
error naming key, value and file; agent hooks log it and go on with the default."""

from __future__ import annotations

import json
import os
import re
import stat
from datetime import timedelta
from pathlib import Path

import pytest

from memex.storage import homes, hooklog, settings, store
from tests.helpers import git, invoke

ROOT = Path(__file__).resolve().parent.parent


def test_git_integer_suffixes() -> None:
    assert settings.parse_int("64") == 64
    assert settings.parse_int("64k") == 64 * 1024
    assert settings.parse_int("8M") == 8 * 1024 * 1024
    assert settings.parse_int(" 1g ") == 1024**3
    assert settings.parse_int("-2") == -2
    for bad in ("", "1.5k", "12q", "k", "1 kb", "0x10"):
        assert settings.parse_int(bad) is None, bad


def test_registry_defaults_parse_and_match_the_code() -> None:
    from memex.storage import usage, writelock
    from memex.workflows import freshness

    for spec in settings.REGISTRY:
        assert spec.name.startswith("memex.") and spec.doc.endswith(".")
        if spec.default is not None:
            assert spec.parse(spec.default) is not None, spec.name
    assert settings.default("memex.maxBytes") == 64 * 1024
    assert usage.DEFAULT_MAX_BYTES == 8 * 1024 * 1024
    assert timedelta(days=7) == freshness.DEFAULT_STALE_AFTER
    assert settings.default("memex.lockTimeout") == writelock.LOCK_TIMEOUT


def test_every_key_the_code_reads_is_registered() -> None:
    used: set[str] = set()
    for path in (ROOT / "memex").rglob("*.py"):
        used |= set(re.findall(r"[\"'](memex\.[A-Za-z]+)[\"']", path.read_text("utf-8")))
    used -= {"memex.lock"}  # the repository lock file's name, not a setting
    missing = {key for key in used if settings.lookup(key) is None}
    assert not missing, f"add these to memex/storage/settings.py REGISTRY: {sorted(missing)}"
    assert used  # the scan found the keys it is there to check


def test_suffix_applies_to_a_real_command(repo: Path) -> None:
    git("config", "memex.maxBytes", "1k", cwd=repo)
    too_big = invoke("capture", "Big\n" + "x" * 1500)
    assert too_big.exit_code == 1 and "over the 1024-byte limit" in too_big.stderr
    assert invoke("capture", "Small\n" + "x" * 900).exit_code == 0


def test_bad_value_is_one_line_naming_key_value_and_file(repo: Path) -> None:
    git("config", "memex.maxProjectMemories", "lots", cwd=repo)
    result = invoke("context")
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "memex.maxProjectMemories = 'lots'" in lines[0]
    assert str(repo / ".git" / "config") in lines[0]
    assert "whole number" in lines[0] and "Traceback" not in result.output


def test_bad_global_duration_names_the_global_file(repo: Path, isolated: Path) -> None:
    git("config", "--global", "memex.staleAfter", "banana", cwd=repo)
    (repo / ".git" / "FETCH_HEAD").write_text("")
    result = invoke("list")
    assert result.exit_code == 1
    assert "memex.staleAfter = 'banana'" in result.stderr
    assert str(isolated / ".gitconfig") in result.stderr and "duration" in result.stderr
    git("config", "--global", "memex.staleAfter", "1.5d", cwd=repo)
    health = invoke("health", "--json")
    assert health.exit_code == 0 and '"stale_after_days": 1.5' in health.stdout


def test_bad_team_value_names_memexconfig(repo: Path) -> None:
    git("config", "-f", ".memexconfig", "memex.maxBytes", "64kb", cwd=repo)
    result = invoke("capture", "A fact")
    assert result.exit_code == 1
    assert f"memex.maxBytes = '64kb' (set in {repo / '.memexconfig'})" in result.stderr


def test_below_minimum_is_an_error(repo: Path) -> None:
    git("config", "memex.nudgeItems", "-1", cwd=repo)
    with pytest.raises(homes.SettingError, match="at least 0"):
        homes.workspace(repo).int_setting("memex.nudgeItems")


def test_hook_logs_a_bad_setting_and_goes_on_with_the_default(repo: Path,
                                                            memex_home: Path) -> None:
    invoke("capture", "Deploys go through the staging cluster first")
    git("config", "memex.maxProjectMemories", "lots", cwd=repo)
    payload = json.dumps({"cwd": str(repo), "hook_event_name": "SessionStart"})
    result = invoke("context", "--hook", "claude", input=payload)
    assert result.exit_code == 0 and result.stderr == ""
    answer = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "staging cluster" in answer  # the default of 8 project memories applied
    logged = hooklog.since(memex_home, settings_epoch())
    assert [e["hook"] for e in logged] == ["session_start"]
    assert "memex.maxProjectMemories = 'lots'" in logged[0]["error"]
    assert "using 8" in logged[0]["error"]


def settings_epoch() -> object:
    from datetime import UTC, datetime

    return datetime(2000, 1, 1, tzinfo=UTC)


def test_a_failing_hook_leaves_a_trace_that_doctor_reports(repo: Path,
                                                          memex_home: Path) -> None:
    assert "agent-hooks" in invoke("doctor").stdout  # ok line: none yet
    memex_home.mkdir(exist_ok=True)
    (memex_home / "outbox").write_text("not a folder")  # a project draft cannot be saved
    payload = {"cwd": str(repo), "prompt": "remember: deploys go through staging"}
    result = invoke("capture", "--hook", "claude", input=json.dumps(payload))
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""
    logged = hooklog.since(memex_home, settings_epoch())
    assert [e["hook"] for e in logged] == ["user_prompt_submit"]
    assert "Not a directory" in logged[0]["error"]
    broken = invoke("context", "--hook", "claude", input="{not json")  # a raised error
    assert broken.exit_code == 0 and broken.stdout == ""
    logged = hooklog.since(memex_home, settings_epoch())
    assert logged[-1]["hook"] == "session_start" and "JSONDecodeError" in logged[-1]["error"]
    doctor = invoke("doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["agent-hooks"]["level"] == "warn"
    assert "2 agent hook failure(s)" in checks["agent-hooks"]["message"]
    assert "JSONDecodeError" in checks["agent-hooks"]["message"]


def test_hook_log_stays_small(memex_home: Path) -> None:
    for i in range(2000):
        hooklog.record(memex_home, "session_start", f"error {i} " + "x" * 60)
    assert hooklog.log_path(memex_home).stat().st_size <= hooklog.MAX_BYTES + 200
    assert hooklog.since(memex_home, settings_epoch())[-1]["error"].startswith("error 1999")


def test_rewrite_keeps_a_files_mode_and_new_files_follow_the_umask(tmp_path: Path) -> None:
    secret = tmp_path / "config.toml"
    secret.write_text("token = 1\n")
    os.chmod(secret, 0o600)
    store.write_atomic(secret, "token = 2\n")
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    old = os.umask(0o027)
    try:
        store.write_atomic(tmp_path / "new.json", "{}\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640
