"""`git memex init --client NAME`: each host's file created, merged, idempotent; hooks;
AGENTS.md; JSON with comments kept; files it cannot merge refused, never clobbered."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memex.core import jsonc
from memex.workflows import clients
from tests.conftest import BIN
from tests.helpers import invoke, invoke_json

EXE = str(BIN / "git-memex")

# client -> (file, keys to the memex entry, the entry expected)
# Shared (committed) files hold the portable command, never this machine's path.
VSCODE_ENTRY = {"type": "stdio", "command": "git-memex",
                "args": ["mcp", "--repo", "${workspaceFolder}"]}
HOSTS: dict[str, tuple[str, tuple[str, ...], dict[str, Any]]] = {
    "claude": (".mcp.json", ("mcpServers", "memex"),
               {"type": "stdio", "command": "git-memex", "args": ["mcp"]}),
    "vs": (".vscode/mcp.json", ("servers", "memex"), VSCODE_ENTRY),
    "vscode": (".vscode/mcp.json", ("servers", "memex"), VSCODE_ENTRY),
    "cursor": (".cursor/mcp.json", ("mcpServers", "memex"),
               {"command": "git-memex", "args": ["mcp"]}),
    "opencode": ("opencode.jsonc", ("mcp", "memex"),
                 {"type": "local", "command": ["git-memex", "mcp"], "enabled": True}),
}
OTHER = {"command": "other-server", "args": ["--flag"]}


def dig(data: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        data = data[key]
    return data


def load(path: Path) -> Any:
    return jsonc.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("client", list(HOSTS))
def test_created(repo: Path, client: str) -> None:
    file, keys, entry = HOSTS[client]
    out = invoke_json("init", "--client", client)
    assert dig(load(repo / file), keys) == entry
    actions = {Path(c["path"]).name: c["action"] for c in out["client"]["changes"]}
    assert actions[Path(file).name] == "created" and actions["AGENTS.md"] == "created"
    assert (repo / ".memexconfig").exists()  # the repo is set up as by plain init


@pytest.mark.parametrize("client", list(HOSTS))
def test_merged_into_existing_and_idempotent(repo: Path, client: str) -> None:
    file, keys, entry = HOSTS[client]
    path = repo / file
    path.parent.mkdir(parents=True, exist_ok=True)
    existing: dict[str, Any] = {"theme": "dark"}
    node = existing
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node["other"] = OTHER
    path.write_text(json.dumps(existing, indent=4) + "\n", encoding="utf-8")
    invoke_json("init", "--client", client)
    data = load(path)
    assert dig(data, keys) == entry
    assert dig(data, (*keys[:-1], "other")) == OTHER and data["theme"] == "dark"
    assert '    "theme"' in path.read_text(encoding="utf-8")  # the file's indent kept
    before = path.read_bytes()
    again = invoke_json("init", "--client", client)
    assert {c["action"] for c in again["client"]["changes"]} == {"unchanged"}
    assert path.read_bytes() == before


@pytest.mark.parametrize("client", list(HOSTS))
def test_shared_files_hold_no_absolute_path(repo: Path, client: str) -> None:
    invoke_json("init", "--client", client, "--hooks") if client == "claude" else \
        invoke_json("init", "--client", client)
    text = (repo / HOSTS[client][0]).read_text(encoding="utf-8")
    assert str(BIN) not in text and '"/' not in text and "python" not in text


def test_visual_studio_no_longer_collides_with_claude_code(repo: Path) -> None:
    invoke_json("init", "--client", "claude")
    invoke_json("init", "--client", "vs")
    assert set(load(repo / ".mcp.json")) == {"mcpServers"}  # no "servers" key in it
    assert load(repo / ".vscode/mcp.json")["servers"]["memex"] == VSCODE_ENTRY
    again = invoke_json("init", "--client", "vscode")  # the same entry serves both
    assert again["client"]["changes"][0]["action"] == "unchanged"


def test_our_entry_is_updated_keeping_its_extra_keys(repo: Path) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"memex": {
        "command": "/old/venv/git-memex", "args": ["mcp"], "env": {"X": "1"}}}}),
        encoding="utf-8")
    out = invoke_json("init", "--client", "claude")
    assert out["client"]["changes"][0]["action"] == "updated"
    entry = load(repo / ".mcp.json")["mcpServers"]["memex"]
    assert entry["command"] == "git-memex" and entry["env"] == {"X": "1"}


OPENCODE_WITH_COMMENTS = """\
{
  // my opencode settings
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight", /* keep me */
  "mcp": {
    "other": { "type": "local", "command": ["other"], }, // trailing comma
  },
}
"""


def test_jsonc_comments_survive(repo: Path) -> None:
    path = repo / "opencode.jsonc"
    path.write_text(OPENCODE_WITH_COMMENTS, encoding="utf-8")
    invoke_json("init", "--client", "opencode")
    text = path.read_text(encoding="utf-8")
    for kept in ("// my opencode settings", "/* keep me */", "// trailing comma"):
        assert kept in text
    data = jsonc.loads(text)
    assert data["mcp"]["memex"] == HOSTS["opencode"][2]
    assert data["mcp"]["other"] == {"type": "local", "command": ["other"]}
    before = path.read_bytes()
    invoke_json("init", "--client", "opencode")
    assert path.read_bytes() == before


def test_commented_file_with_a_stale_entry_is_updated_in_place(repo: Path) -> None:
    path = repo / "opencode.jsonc"
    text = OPENCODE_WITH_COMMENTS.replace('"other":', '"memex": {"type": "local", '
                                          '"command": ["/old/git-memex", "mcp"]},\n    "other":')
    path.write_text(text, encoding="utf-8")
    result = invoke("init", "--client", "opencode", "--json")
    assert result.exit_code == 0, result.stderr
    new = path.read_text(encoding="utf-8")
    for kept in ("// my opencode settings", "/* keep me */", "// trailing comma"):
        assert kept in new
    data = jsonc.loads(new)
    assert data["mcp"]["memex"] == HOSTS["opencode"][2] and "/old/" not in new
    assert data["mcp"]["other"] == {"type": "local", "command": ["other"]}
    invoke_json("init", "--client", "opencode")
    assert path.read_text(encoding="utf-8") == new


def test_opencode_follows_the_files_layout(repo: Path) -> None:
    (repo / "opencode.json").write_text(json.dumps({"mcp": {"servers": {"x": OTHER}}}),
                                        encoding="utf-8")
    invoke_json("init", "--client", "opencode")
    assert not (repo / "opencode.jsonc").exists()
    data = load(repo / "opencode.json")
    assert set(data["mcp"]["servers"]) == {"x", "memex"}


def test_new_opencode_file_names_its_schema(repo: Path) -> None:
    invoke_json("init", "--client", "opencode")
    assert load(repo / "opencode.jsonc")["$schema"] == clients.OPENCODE_SCHEMA


@pytest.mark.parametrize("content", ["{ not json", "[1, 2]", '{"mcpServers": [1]}'])
def test_unmergeable_json_is_refused(repo: Path, content: str) -> None:
    (repo / ".mcp.json").write_text(content, encoding="utf-8")
    result = invoke("init", "--client", "claude")
    assert result.exit_code == 1 and "nothing was changed" in result.stderr
    assert (repo / ".mcp.json").read_text(encoding="utf-8") == content


def test_codex_toml_created_merged_idempotent(repo: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    codex = tmp_path / "codex-home"
    monkeypatch.setenv("CODEX_HOME", str(codex))
    invoke_json("init", "--client", "codex")
    config = codex / "config.toml"
    assert tomllib.loads(config.read_text())["mcp_servers"]["memex"] == \
        {"command": EXE, "args": ["mcp"]}
    config.write_text('# my codex config\nmodel = "o4"\n\n[mcp_servers.other]\n'
                      'command = "x"\n\n' + config.read_text(), encoding="utf-8")
    before = config.read_bytes()
    again = invoke_json("init", "--client", "codex")
    assert again["client"]["changes"][0]["action"] == "unchanged"
    assert config.read_bytes() == before


def test_codex_stale_entry_is_rewritten_in_place(repo: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    config = codex / "config.toml"
    config.write_text('model = "o4"  # keep\n\n[mcp_servers.memex]\ncommand = "/old/git-memex"'
                      '\nargs = ["mcp"]\nstartup_timeout_sec = 20\n\n[mcp_servers.memex.env]\n'
                      'A = "1"\n\n[profiles.x]\nmodel = "y"\n', encoding="utf-8")
    invoke_json("init", "--client", "codex")
    text = config.read_text()
    data = tomllib.loads(text)
    assert data["mcp_servers"]["memex"] == {"command": EXE, "args": ["mcp"],
                                            "startup_timeout_sec": 20, "env": {"A": "1"}}
    assert data["profiles"] == {"x": {"model": "y"}} and "# keep" in text


def test_codex_without_codex_home_uses_dot_codex(repo: Path, isolated: Path) -> None:
    invoke_json("init", "--client", "codex")
    assert (isolated / ".codex" / "config.toml").exists()


def test_codex_bad_toml_is_refused(repo: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    (tmp_path / "config.toml").write_text("this is = = not toml", encoding="utf-8")
    result = invoke("init", "--client", "codex")
    assert result.exit_code == 1 and "not valid TOML" in result.stderr


def test_agents_md_created_appended_and_kept(repo: Path) -> None:
    invoke_json("init", "--client", "cursor")
    text = (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert clients.BEGIN in text and "memory_search" in text
    (repo / "AGENTS.md").write_text("# Our agents\n\nUse tabs.\n", encoding="utf-8")
    invoke_json("init", "--client", "cursor")
    text = (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert text.startswith("# Our agents\n\nUse tabs.\n") and text.count(clients.BEGIN) == 1
    stale = text.replace("memory_search", "old_tool", 1)
    (repo / "AGENTS.md").write_text(stale + "\nafter\n", encoding="utf-8")
    invoke_json("init", "--client", "cursor")
    text = (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert text.count(clients.BEGIN) == 1 and "old_tool" not in text
    assert text.endswith("\nafter\n") and text.startswith("# Our agents")


def test_claude_hooks_written_merged_idempotent(repo: Path) -> None:
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "echo hi"}
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls)"]},
                                    "hooks": {"SessionStart": [{"hooks": [theirs]}]}}),
                        encoding="utf-8")
    invoke_json("init", "--client", "claude", "--hooks")
    data = load(settings)
    start = [h for g in data["hooks"]["SessionStart"] for h in g["hooks"]]
    prompt = [h for g in data["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert theirs in start and data["permissions"] == {"allow": ["Bash(ls)"]}
    assert f"{EXE} context --hook claude" in {h["command"] for h in start}
    assert [h["command"] for h in prompt] == [f"{EXE} capture --hook claude"]
    before = settings.read_bytes()
    invoke_json("init", "--client", "claude", "--hooks")
    assert settings.read_bytes() == before


def test_hooks_only_for_claude_and_options_need_a_client(repo: Path) -> None:
    assert invoke("init", "--client", "cursor", "--hooks").exit_code == 2
    assert invoke("init", "--print-config").exit_code == 2
    assert invoke("init", "--client", "emacs").exit_code == 2


def test_print_config_writes_nothing(repo: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    for client in ("claude", "codex"):
        result = invoke("init", "--client", client, "--print-config", *(
            ["--hooks"] if client == "claude" else []))
        assert result.exit_code == 0
        assert "memex" in result.stdout and clients.BEGIN in result.stdout
    out = invoke("init", "--client", "codex", "--print-config").stdout
    assert tomllib.loads(out.split("\n# ")[0].split("\n", 1)[1])["mcp_servers"]["memex"]
    assert sorted(p.name for p in repo.iterdir()) == [".git", "README.md"]
    assert not (tmp_path / "codex").exists()


def test_the_command_falls_back_to_this_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    cmd = clients.server_command()
    assert cmd[1:] == ["-m", "memex.adapters.cli", "mcp"]
    assert clients.hook_command("context").endswith("-m memex.adapters.cli context --hook claude")


def test_outside_git_configures_the_host_in_the_cwd(nogit_dir: Path) -> None:
    result = invoke("init", "--client", "cursor", "--json")
    assert result.exit_code == 0 and "not a git repository" in result.stderr
    assert (nogit_dir / ".cursor" / "mcp.json").exists()


def test_installed_hook_commands_really_answer(repo: Path) -> None:
    invoke_json("capture", "Releases are cut on Tuesdays")
    invoke_json("init", "--client", "claude", "--hooks")
    data = load(repo / ".claude" / "settings.local.json")
    commands = {event: groups[0]["hooks"][0]["command"]
                for event, groups in data["hooks"].items()}
    payloads = {
        "SessionStart": {"hook_event_name": "SessionStart", "source": "startup",
                         "cwd": str(repo)},
        "UserPromptSubmit": {"hook_event_name": "UserPromptSubmit", "cwd": str(repo),
                             "prompt": "TIL tags are signed. When are releases cut?"},
    }
    for event, command in commands.items():
        proc = subprocess.run(command, shell=True, input=json.dumps(payloads[event]).encode(),
                              capture_output=True, cwd=repo)
        assert proc.returncode == 0, proc.stderr
        answer = json.loads(proc.stdout)["hookSpecificOutput"]
        assert answer["hookEventName"] == event
        assert "Releases are cut on Tuesdays" in answer["additionalContext"]
    assert "tags are signed" in invoke("list").stdout


def test_rerun_after_the_executable_moved(repo: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A reinstall elsewhere: the per-user Codex entry follows it, keeping its file's
    comments and 0600 mode; the shared files, portable, need nothing."""
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    invoke_json("init", "--client", "codex")
    invoke_json("init", "--client", "claude")
    config = tmp_path / "codex" / "config.toml"
    config.write_text("# token below\n" + config.read_text(), encoding="utf-8")
    config.chmod(0o600)
    moved = tmp_path / "newvenv" / "bin"
    moved.mkdir(parents=True)
    (moved / "git-memex").symlink_to(EXE)
    monkeypatch.setenv("PATH", f"{moved}:/usr/bin:/bin")
    out = invoke_json("init", "--client", "codex")
    assert out["client"]["changes"][0]["action"] == "updated"
    text = config.read_text(encoding="utf-8")
    assert tomllib.loads(text)["mcp_servers"]["memex"]["command"] == str(moved / "git-memex")
    assert text.startswith("# token below\n") and (config.stat().st_mode & 0o777) == 0o600
    again = invoke_json("init", "--client", "claude")
    assert again["client"]["changes"][0]["action"] == "unchanged"


def test_local_settings_are_excluded_from_git(repo: Path) -> None:
    invoke_json("init", "--client", "claude", "--hooks")
    exclude = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    assert exclude.count("/.claude/settings.local.json") == 1
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=repo, capture_output=True, text=True, check=True).stdout
    assert ".claude/settings.local.json" not in status and ".mcp.json" in status
    invoke_json("init", "--client", "claude", "--hooks")
    exclude = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8")
    assert exclude.count("/.claude/settings.local.json") == 1


def test_existing_claude_md_imports_agents_md_once(repo: Path) -> None:
    invoke_json("init", "--client", "claude")
    assert not (repo / "CLAUDE.md").exists()  # none: nothing created
    (repo / "CLAUDE.md").write_text("# House rules\n\nRun make check.", encoding="utf-8")
    invoke_json("init", "--client", "claude")
    assert (repo / "CLAUDE.md").read_text(encoding="utf-8") == \
        "# House rules\n\nRun make check.\n\n@AGENTS.md\n"
    again = invoke_json("init", "--client", "claude")
    assert {c["action"] for c in again["client"]["changes"]} == {"unchanged"}
    invoke_json("init", "--client", "cursor")  # other hosts leave CLAUDE.md alone
    assert (repo / "CLAUDE.md").read_text(encoding="utf-8").count("@AGENTS.md") == 1


def test_doctor_on_shared_configs(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    invoke_json("init", "--client", "cursor")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"memex": {
        "command": EXE, "args": ["mcp"]}}}), encoding="utf-8")  # an older init's file
    checks = [c for c in json.loads(invoke("doctor", "--json").stdout)["checks"]
              if c["name"] == "mcp"]
    levels = {c["message"].split(":")[0]: c["level"] for c in checks}
    assert levels[".mcp.json"] == "warn" and "a path of one machine" in checks[0]["message"]
    assert "ok" in levels.values()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # git-memex no longer resolves
    checks = [c for c in json.loads(invoke("doctor", "--json").stdout)["checks"]
              if c["name"] == "mcp" and c["level"] == "fail"]
    assert [c["message"] for c in checks] == [
        ".cursor/mcp.json: git-memex is not on PATH here, so the host cannot start the server"]
