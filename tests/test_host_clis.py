"""The real agent hosts read what `git memex init --client` writes (marker `hosts`; the
CI step .ci/hosts installs pinned Claude Code, Codex and opencode from npm into
.cache/hosts). Each host: merged into a config that already has another server (and
comments where the format has them), re-run after git-memex moved, and listed by the
host's own CLI offline. Claude Code and opencode start our real server to list it;
Codex only parses. Under CI=true a missing CLI fails; elsewhere it skips."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import BIN
from tests.helpers import invoke_json

pytestmark = pytest.mark.hosts
ROOT = Path(__file__).resolve().parent.parent
HOSTS_BIN = ROOT / ".cache" / "hosts" / "node_modules" / ".bin"


def host_cli(name: str) -> str:
    found = HOSTS_BIN / name
    if found.exists():
        return str(found)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    message = f"{name} is not installed (.ci/hosts installs it into {HOSTS_BIN})"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def moved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """git-memex reinstalled elsewhere: only the new place is on PATH (with node)."""
    where = tmp_path / "reinstalled" / "bin"
    where.mkdir(parents=True)
    for exe in BIN.glob("git-memex*"):
        (where / exe.name).symlink_to(exe)
    node = shutil.which("node")
    extra = f":{Path(node).parent}" if node else ""
    monkeypatch.setenv("PATH", f"{where}:{HOSTS_BIN}{extra}:/usr/bin:/bin")
    return where


def run(argv: list[str], cwd: Path, stdout_only: bool = False, **env: str) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL)
    return proc.stdout if stdout_only else proc.stdout + proc.stderr


def test_claude_code_lists_and_connects(repo: Path, isolated: Path, moved: Path) -> None:
    claude = host_cli("claude")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "other": {"type": "stdio", "command": "other-server", "args": []}}}), "utf-8")
    invoke_json("init", "--client", "claude", "--hooks")
    invoke_json("init", "--client", "vs")  # once broke .mcp.json for Claude Code
    again = invoke_json("init", "--client", "claude")
    assert again["client"]["changes"][0]["action"] == "unchanged"
    # Trust the folder as a person would at the first `claude` run, so that listing
    # starts the project's servers (it reports "pending approval" otherwise).
    (isolated / ".claude.json").write_text(json.dumps({"projects": {str(repo): {
        "hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["memex"]}}}), "utf-8")
    out = run([claude, "mcp", "list"], repo)
    assert "memex: git-memex mcp - ✔ Connected" in out, out
    assert "other: other-server" in out and "Error" not in out, out


def test_codex_lists_the_moved_command(repo: Path, tmp_path: Path, moved: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    codex = host_cli("codex")
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    config = home / "config.toml"
    config.write_text('# mine\nmodel = "o4"\n\n[mcp_servers.other]\ncommand = "other"  # x\n\n'
                      '[mcp_servers.memex]\ncommand = "/old/venv/bin/git-memex"\n'
                      'args = ["mcp"]\n', "utf-8")
    config.chmod(0o600)
    invoke_json("init", "--client", "codex")
    assert (config.stat().st_mode & 0o777) == 0o600 and "# mine" in config.read_text()
    listed = {s["name"]: s for s in json.loads(run([codex, "mcp", "list", "--json"], repo,
                                                 stdout_only=True))}
    assert set(listed) == {"memex", "other"}
    assert listed["memex"]["transport"]["command"] == str(moved / "git-memex")
    assert listed["memex"]["transport"]["args"] == ["mcp"] and listed["memex"]["enabled"]
    assert tomllib.loads(config.read_text())["model"] == "o4"


OPENCODE = """\
{
  // the team's opencode settings
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "memex": { "type": "local", "command": ["/old/venv/bin/git-memex", "mcp"] },
    "other": { "type": "local", "command": ["other-server"], "enabled": false }, // off
  },
}
"""


def test_opencode_lists_and_connects(repo: Path, moved: Path) -> None:
    opencode = host_cli("opencode")
    (repo / "opencode.jsonc").write_text(OPENCODE, "utf-8")
    invoke_json("init", "--client", "opencode")  # a stale entry in a commented file
    text = (repo / "opencode.jsonc").read_text("utf-8")
    assert "// the team's opencode settings" in text and "/old/" not in text
    out = run([opencode, "mcp", "list"], repo, OPENCODE_DISABLE_AUTOUPDATE="1",
              OPENCODE_DISABLE_MODELS_FETCH="1")
    assert "memex" in out and "connected" in out, out
    assert "git-memex mcp" in out and "other" in out, out
