"""World time (valid_from / valid_until) apart from system time (created_at, retired_at)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex.core import frontmatter
from tests.helpers import invoke, invoke_json


def ids(*args: str) -> list[str]:
    return [m["id"] for m in invoke_json("list", *args)]


def test_superseded_last_week_is_seen_as_of_two_weeks_ago(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-01T09:00:00Z")
    old = invoke_json("capture", "--scope", "personal", "We deploy with Fabric scripts")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-24T09:00:00Z")  # last week
    new = invoke_json("supersede", old["id"], "We deploy with GitHub Actions")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T09:00:00Z")  # today
    assert ids("--as-of", "2026-11-17T09:00:00Z") == [old["id"]]
    assert ids("--as-of", "2w") == [old["id"]]  # relative to the pinned clock
    assert ids() == [new["id"]]
    assert ids("--as-of", "2026-12-01T09:00:00Z") == [new["id"]]
    assert ids("--as-of", "2026-10-01T00:00:00Z") == []  # before either was written


def test_valid_until_is_world_time_retired_at_is_system_time(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-01T00:00:00Z")
    fact = invoke_json("capture", "--scope", "personal", "--valid-until",
                       "2026-11-20T00:00:00Z", "The API gateway is Kong")
    retired = invoke_json("capture", "--scope", "personal", "Staging lives on host s1")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-18T00:00:00Z")
    assert invoke("status", retired["id"], "archived").exit_code == 0
    data = frontmatter.parse(Path(fact["path"]).read_text()).data
    assert "retired_at" not in data  # the fact ended in the world; the system kept it
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T00:00:00Z")
    assert set(ids("--as-of", "2026-11-10T00:00:00Z")) == {fact["id"], retired["id"]}
    assert ids("--as-of", "2026-11-19T00:00:00Z") == [fact["id"]]  # retired on the 18th
    assert ids("--as-of", "2026-11-25T00:00:00Z") == []  # no longer true on the 20th
    assert ids() == []


def test_expired_drops_out_on_read_and_clean_records_retirement(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-01T00:00:00Z")
    out = invoke_json("capture", "--scope", "personal", "--expires-at", "2026-11-20T00:00:00Z",
                      "The release freeze runs until the 20th")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T00:00:00Z")
    path = Path(out["path"])
    before = path.read_bytes()
    assert ids() == []
    assert path.read_bytes() == before  # reads never write
    result = invoke("clean", "--yes", "--json")
    assert result.exit_code == 0, result.output
    data = frontmatter.parse(path.read_text()).data
    assert data["status"] == "archived"
    assert data["retired_at"] == "2026-12-01T00:00:00Z"
    assert "expired at 2026-11-20T00:00:00Z" in str(data["status_history"])
    assert ids("--as-of", "2026-11-10T00:00:00Z") == [out["id"]]


def test_bad_as_of_is_a_usage_error(repo: Path) -> None:
    result = invoke("list", "--as-of", "last tuesday")
    assert result.exit_code == 2 and "not a time" in result.output


def test_list_with_nothing_matching_is_not_an_empty_store(repo: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    empty = invoke("list")
    assert empty.exit_code == 0 and "no memories yet" in empty.stderr
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-01T00:00:00Z")
    invoke_json("capture", "A project fact")
    before = invoke("list", "--as-of", "2020-01-01T00:00:00Z")
    assert before.exit_code == 0 and before.stdout == ""
    assert "no memories match" in before.stderr and "no memories yet" not in before.stderr
    other_scope = invoke("list", "--scope", "personal")
    assert "no memories match" in other_scope.stderr


def test_parse_time_canonical_shortcut_agrees() -> None:
    from datetime import UTC, datetime

    from memex.core import clock

    assert clock.parse_time("2026-12-01T06:00:00Z") == datetime(2026, 12, 1, 6, tzinfo=UTC)
    assert clock.parse_time("2026-12-01T06:00:00Z").tzinfo is UTC
    assert clock.parse_time("2026-12-01T08:00:00+02:00") == clock.parse_time(
        "2026-12-01T06:00:00Z")
    with pytest.raises(ValueError, match="not a time: '2026-13-01T06:00:00Z'"):
        clock.parse_time("2026-13-01T06:00:00Z")  # canonical shape, impossible date
