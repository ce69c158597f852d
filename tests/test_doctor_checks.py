"""doctor's index and MCP-config checks: read-only, and each can fail."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.helpers import git, invoke, invoke_json


def checks(name: str) -> list[dict[str, object]]:
    result = invoke("doctor", "--json")
    data = json.loads(result.stdout)
    items = data["checks"] if isinstance(data, dict) else data
    return [c for c in items if c["name"] == name]


def test_index_missing_healthy_damaged(repo: Path) -> None:
    assert "no index yet" in str(checks("index")[0]["message"])
    out = invoke_json("capture", "something to index")
    old = time.time() - 60  # older than the index's racy-write window
    os.utime(out["path"], (old, old))
    invoke_json("list")
    index = repo / ".git" / "memex" / "index.sqlite"
    assert index.exists()
    assert "healthy and current" in str(checks("index")[0]["message"])
    invoke_json("capture", "one more, not yet indexed")
    assert "changed since" in str(checks("index")[0]["message"])
    from memex.index import build

    build.forget_connections()
    for extra in index.parent.glob("index.sqlite-*"):
        extra.unlink()  # the WAL would still hold good pages
    index.write_bytes(b"not a database" * 100)
    before = index.read_bytes()
    found = checks("index")[0]
    assert found["level"] == "warn", found
    assert index.read_bytes() == before  # doctor never repairs


def test_mcp_config_pointing_nowhere_fails(repo: Path) -> None:
    assert checks("mcp") == []
    (repo / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"memex": {"command": "/nonexistent/git-memex", "args": ["mcp"]},
                        "other": {"command": "whatever"}}}))
    found = checks("mcp")
    assert [c["level"] for c in found] == ["fail"]
    assert invoke("doctor").exit_code == 1
    invoke("init", "--client", "claude")
    assert [c["level"] for c in checks("mcp")] == ["ok"]


def test_usage_log_that_is_not_rotating_is_a_warning(repo: Path, memex_home: Path) -> None:
    from memex.storage import usage

    assert checks("usage-log")[0]["level"] == "ok"
    log = usage.log_path(memex_home)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text('{"at": "x"}\n' * 40)
    found = checks("usage-log")[0]
    assert found["level"] == "ok" and "rotated at" in str(found["message"])
    git("config", "memex.usageMaxBytes", "100", cwd=repo)  # 480 bytes: past twice that
    found = checks("usage-log")[0]
    assert found["level"] == "warn" and "not being rotated" in str(found["message"])
    assert log.stat().st_size == 480  # doctor only looks
