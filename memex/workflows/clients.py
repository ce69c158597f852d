"""Agent hosts: write each host's MCP configuration, AGENTS.md guidance, Claude hooks.

Every writer merges into what is there: other servers, other hooks, unknown keys and
(in JSON with comments) the comments stay; running it again changes nothing; an entry
of ours that is out of date is rewritten in place. A file that cannot be merged safely
(unparseable, or a section that is not an object) is refused, never overwritten.

Files a team commits (every project file below) hold the portable command `git-memex`
(the host finds it on PATH; `doctor` says when it does not resolve), never this
machine's path. Per-user files (Codex's config.toml, .claude/settings.local.json, which
git-memex adds to .git/info/exclude) hold the absolute path, so a host started without
the venv on PATH still finds it.

| host           | file                       | where servers go |
|----------------|----------------------------|------------------|
| Claude Code    | .mcp.json                  | mcpServers       |
| VS Code        | .vscode/mcp.json           | servers          |
| Visual Studio  | .vscode/mcp.json (it reads it too; .mcp.json is Claude Code's) | servers |
| Cursor         | .cursor/mcp.json           | mcpServers       |
| opencode       | opencode.jsonc (or .json)  | mcp (mcp.servers when the file uses it) |
| Codex          | $CODEX_HOME/config.toml    | [mcp_servers.memex] |
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.core import jsonc
from memex.core.errors import MemexError, UsageError
from memex.storage import gitio, store
from memex.workflows import agent

SERVER = "memex"
CLIENT_NAMES = ("claude", "vscode", "cursor", "codex", "opencode", "vs")
AGENTS_FILE = "AGENTS.md"
BEGIN = "<!-- git-memex: begin (written by `git memex init`; edit outside these markers) -->"
END = "<!-- git-memex: end -->"
HOOK_TIMEOUT = 15
OPENCODE_SCHEMA = "https://opencode.ai/config.json"
_HOOK_MARK = re.compile(r"\b(context|capture) --hook claude\b")


@dataclass
class Change:
    path: Path
    action: str  # created | updated | unchanged
    what: str

    def as_json(self) -> dict[str, str]:
        return {"path": str(self.path), "action": self.action, "what": self.what}


@dataclass
class Snippet:
    path: Path
    text: str


@dataclass
class Plan:
    """What `init --client` writes (or prints, with --print-config)."""

    changes: list[Change] = field(default_factory=list)
    snippets: list[Snippet] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


PORTABLE = ["git-memex", "mcp"]  # what shared files hold: resolved from PATH by the host


def server_command() -> list[str]:
    """The command that really starts the server here, for per-user files: git-memex on
    PATH (absolute), else this Python running the package."""
    exe = shutil.which("git-memex")
    if exe:
        return [str(Path(exe).resolve()) if not os.path.isabs(exe) else exe, "mcp"]
    return [sys.executable, "-m", "memex.adapters.cli", "mcp"]


def hook_command(step: str) -> str:
    argv = server_command()[:-1]
    return shlex.join([*argv, step, "--hook", "claude"])


# --- JSON hosts ------------------------------------------------------------------


@dataclass(frozen=True)
class JsonHost:
    name: str
    label: str
    file: str
    section: tuple[str, ...]
    entry: Callable[[list[str]], dict[str, Any]]


def _stdio(cmd: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": cmd[0], "args": cmd[1:]}


def _cursor(cmd: list[str]) -> dict[str, Any]:
    return {"command": cmd[0], "args": cmd[1:]}


def _vscode(cmd: list[str]) -> dict[str, Any]:
    # VS Code expands ${workspaceFolder}; the server then serves the opened folder.
    return {"type": "stdio", "command": cmd[0], "args": [*cmd[1:], "--repo", "${workspaceFolder}"]}


def _opencode(cmd: list[str]) -> dict[str, Any]:
    return {"type": "local", "command": cmd, "enabled": True}


JSON_HOSTS: dict[str, JsonHost] = {
    "claude": JsonHost("claude", "Claude Code", ".mcp.json", ("mcpServers",), _stdio),
    # Visual Studio also reads .vscode/mcp.json (same schema); in .mcp.json its
    # "servers" made Claude Code report the file broken. One entry serves both.
    "vs": JsonHost("vs", "Visual Studio", ".vscode/mcp.json", ("servers",), _vscode),
    "vscode": JsonHost("vscode", "VS Code", ".vscode/mcp.json", ("servers",), _vscode),
    "cursor": JsonHost("cursor", "Cursor", ".cursor/mcp.json", ("mcpServers",), _cursor),
    "opencode": JsonHost("opencode", "opencode", "opencode.jsonc", ("mcp",), _opencode),
}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise MemexError(f"cannot read {path}: {exc}") from None


def _indent(text: str) -> int:
    found = re.search(r"^([ \t]+)\"", text, re.MULTILINE)
    return len(found.group(1).expandtabs(4)) if found else 2


def _load_json(path: Path, text: str) -> dict[str, Any]:
    try:
        data = jsonc.loads(text)
    except jsonc.JsoncError as exc:
        raise MemexError(f"{path} is not valid JSON ({exc}); nothing was changed: fix it, "
                         "or use --print-config and merge by hand") from None
    if not isinstance(data, dict):
        raise MemexError(f"{path} does not hold a JSON object; nothing was changed")
    return data


def _node(data: dict[str, Any], path: Path, keys: tuple[str, ...]) -> dict[str, Any]:
    node = data
    for key in keys:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise MemexError(f"{path}: {'.'.join(keys)} is not a JSON object; "
                             "nothing was changed")
        node = child
    return node


def _write_json(path: Path, text: str, data: dict[str, Any], what: str,
                edit: Callable[[str], str] | None) -> Change:
    """Write DATA to PATH: a plain rewrite when the file has no comments, else EDIT
    (a text edit of our entry alone) when there is one, else a refusal."""
    action = "updated" if text else "created"
    if text and jsonc.has_comments(text):
        if edit is None:
            raise MemexError(
                f"{path} has comments, and adding {what} would mean rewriting part of it; "
                "nothing was changed: edit it by hand (git memex init --print-config "
                "shows the entry)")
        try:
            new_text = edit(text)
        except jsonc.JsoncError as exc:
            raise MemexError(f"{path}: could not edit {what} ({exc}); nothing was "
                             "changed: edit it by hand (--print-config shows the entry)"
                             ) from None
        if jsonc.loads(new_text) != data:
            raise MemexError(f"{path}: could not add {what} safely; nothing was changed")
    else:
        new_text = json.dumps(data, indent=_indent(text), ensure_ascii=False) + "\n"
    store.write_atomic(path, new_text)
    return Change(path, action, what)


def json_host_file(top: Path, host: JsonHost) -> Path:
    if host.name == "opencode" and not (top / host.file).exists() \
            and (top / "opencode.json").exists():
        return top / "opencode.json"
    return top / host.file


def _section(host: JsonHost, data: dict[str, Any]) -> tuple[str, ...]:
    # opencode's newer layout nests servers under mcp.servers; follow the file.
    if host.name == "opencode" and isinstance(data.get("mcp"), dict) \
            and isinstance(data["mcp"].get("servers"), dict):
        return ("mcp", "servers")
    return host.section


def merge_json_host(top: Path, host: JsonHost, cmd: list[str], dry: bool = False
                    ) -> tuple[Change | None, Snippet]:
    path = json_host_file(top, host)
    text = _read(path)
    data = _load_json(path, text)
    keys = _section(host, data)
    wanted = host.entry(cmd)
    snippet_data: dict[str, Any] = {SERVER: wanted}
    for key in reversed(keys):
        snippet_data = {key: snippet_data}
    snippet = Snippet(path, json.dumps(snippet_data, indent=2, ensure_ascii=False) + "\n")
    if dry:
        return None, snippet
    if not text and host.name == "opencode":
        data["$schema"] = OPENCODE_SCHEMA
    node = _node(data, path, keys)
    current = node.get(SERVER)
    what = f"{host.label} MCP server {'.'.join(keys)}.{SERVER}"
    merged = {**current, **wanted} if isinstance(current, dict) else wanted
    if current == merged:
        return Change(path, "unchanged", what), snippet
    node[SERVER] = merged

    def edit(old: str) -> str:
        if current is None:
            return jsonc.insert_entry(old, keys, SERVER, merged)
        return jsonc.replace_entry(old, keys, SERVER, merged)
    return _write_json(path, text, data, what, edit), snippet


# --- Codex (TOML) -----------------------------------------------------------------


def codex_config() -> Path:
    home = os.environ.get("CODEX_HOME")
    return (Path(home).expanduser() if home else Path.home() / ".codex") / "config.toml"


def codex_block(cmd: list[str]) -> str:
    return (f"[mcp_servers.{SERVER}]\ncommand = {json.dumps(cmd[0])}\n"
            f"args = {json.dumps(cmd[1:], ensure_ascii=False)}\n")


def _toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MemexError(f"{path} is not valid TOML ({exc}); nothing was changed") from None


def merge_codex(path: Path, cmd: list[str], dry: bool = False) -> tuple[Change | None, Snippet]:
    block = codex_block(cmd)
    snippet = Snippet(path, block)
    if dry:
        return None, snippet
    text = _read(path)
    data = _toml(path, text)
    servers = data.get("mcp_servers", {})
    current = servers.get(SERVER) if isinstance(servers, dict) else None
    what = f"Codex MCP server mcp_servers.{SERVER}"
    if isinstance(current, dict) and current.get("command") == cmd[0] \
            and current.get("args") == cmd[1:]:
        return Change(path, "unchanged", what), snippet
    if current is None:
        sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        new_text = text + sep + block
        action = "updated" if text else "created"
    else:
        new_text = _replace_codex_entry(path, text, cmd)
        action = "updated"
    expected = _toml(path, text)
    expected.setdefault("mcp_servers", {}).setdefault(SERVER, {}).update(
        {"command": cmd[0], "args": cmd[1:]})
    if _toml(path, new_text) != expected:
        raise MemexError(f"{path}: could not update [mcp_servers.{SERVER}] safely; nothing "
                         "was changed: edit it by hand (--print-config shows the entry)")
    store.write_atomic(path, new_text)
    return Change(path, action, what), snippet


def _replace_codex_entry(path: Path, text: str, cmd: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    header = re.compile(rf"^\s*\[\s*mcp_servers\.{SERVER}\s*\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        raise MemexError(f"{path} defines mcp_servers.{SERVER} in a form git-memex does not "
                         "edit; nothing was changed: edit it by hand")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
               len(lines))
    values = {"command": f"command = {json.dumps(cmd[0])}\n",
              "args": f"args = {json.dumps(cmd[1:], ensure_ascii=False)}\n"}
    body = []
    for line in lines[start + 1:end]:
        key = line.split("=", 1)[0].strip()
        if key in values:
            body.append(values.pop(key))
        else:
            body.append(line)
    missing = list(values.values())
    return "".join([*lines[: start + 1], *missing, *body, *lines[end:]])


# --- AGENTS.md and Claude hooks ------------------------------------------------------


def agents_block() -> str:
    return f"{BEGIN}\n{agent.POINTER}\n\n{agent.GUIDANCE}{END}\n"


def merge_agents_md(top: Path, dry: bool = False) -> tuple[Change | None, Snippet]:
    path = top / AGENTS_FILE
    block = agents_block()
    snippet = Snippet(path, block)
    if dry:
        return None, snippet
    text = _read(path)
    what = "agent guidance (git-memex section)"
    if BEGIN in text and END in text:
        start = text.index(BEGIN)
        end = text.index(END, start) + len(END)
        if end < len(text) and text[end] == "\n":
            end += 1
        if text[start:end] == block:
            return Change(path, "unchanged", what), snippet
        new_text = text[:start] + block + text[end:]
    elif text:
        new_text = text.rstrip("\n") + "\n\n" + block
    else:
        new_text = "# AGENTS.md\n\n" + block
    store.write_atomic(path, new_text)
    return Change(path, "updated" if text else "created", what), snippet


def claude_hooks(top: Path, dry: bool = False) -> tuple[Change | None, Snippet]:
    # settings.local.json: the hook commands hold this machine's path to git-memex, and
    # Claude Code keeps that file out of git (settings.json is shared with the team).
    path = top / ".claude" / "settings.local.json"
    wanted = {"SessionStart": hook_command("context"),
              "UserPromptSubmit": hook_command("capture")}
    shown = {"hooks": {event: [{"hooks": [{"type": "command", "command": command,
                                             "timeout": HOOK_TIMEOUT}]}]
                       for event, command in wanted.items()}}
    snippet = Snippet(path, json.dumps(shown, indent=2) + "\n")
    if dry:
        return None, snippet
    text = _read(path)
    data = _load_json(path, text)
    hooks = _node(data, path, ("hooks",))
    changed = False
    for event, command in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise MemexError(f"{path}: hooks.{event} is not a list; nothing was changed")
        ours = [h for g in groups if isinstance(g, dict) for h in g.get("hooks", [])
                if isinstance(h, dict) and _HOOK_MARK.search(str(h.get("command", "")))]
        if ours:
            for hook in ours:
                if hook.get("command") != command:
                    hook["command"] = command
                    changed = True
        else:
            groups.append({"hooks": [{"type": "command", "command": command,
                                      "timeout": HOOK_TIMEOUT}]})
            changed = True
    what = "Claude Code hooks SessionStart, UserPromptSubmit"
    if not changed:
        return Change(path, "unchanged", what), snippet
    return _write_json(path, text, data, what, None), snippet


CLAUDE_FILE = "CLAUDE.md"
CLAUDE_IMPORT = "@AGENTS.md"
LOCAL_SETTINGS = ".claude/settings.local.json"


def import_agents_md(top: Path, dry: bool = False) -> tuple[Change | None, Snippet]:
    """An existing CLAUDE.md is what Claude Code reads instead of AGENTS.md: give it an
    `@AGENTS.md` import line once (no CLAUDE.md: nothing to do)."""
    path = top / CLAUDE_FILE
    snippet = Snippet(path, CLAUDE_IMPORT + "\n")
    text = _read(path)
    what = f"{CLAUDE_IMPORT} import (Claude Code reads AGENTS.md through it)"
    if dry or not path.exists():
        return None, snippet
    if any(line.strip() == CLAUDE_IMPORT for line in text.splitlines()):
        return Change(path, "unchanged", what), snippet
    store.write_atomic(path, text.rstrip("\n") + ("\n\n" if text.strip() else "")
                       + CLAUDE_IMPORT + "\n")
    return Change(path, "updated", what), snippet


def exclude_local_settings(top: Path) -> Change | None:
    """.claude/settings.local.json holds this machine's hook commands: keep it out of
    `git add -A` through .git/info/exclude (unless git already ignores it)."""
    if gitio.git_binary() is None or gitio.discover(top) is None:
        return None
    probe = gitio.run(["check-ignore", "-q", "--no-index", LOCAL_SETTINGS], cwd=top,
                      check=False)
    exclude = gitio.git_path(top, "info/exclude")
    what = f"{LOCAL_SETTINGS} ignored (this machine's hook commands)"
    if probe.returncode == 0:
        return Change(exclude, "unchanged", what)
    text = _read(exclude)
    sep = "" if not text or text.endswith("\n") else "\n"
    store.write_atomic(exclude, f"{text}{sep}/{LOCAL_SETTINGS}\n")
    return Change(exclude, "updated" if text else "created", what)


# --- the whole setup -------------------------------------------------------------------


def setup(top: Path, client: str, hooks: bool = False, print_only: bool = False) -> Plan:
    """Configure CLIENT for the project at TOP (Codex: the user's config.toml)."""
    if client not in CLIENT_NAMES:
        raise UsageError(f"unknown client {client!r}; expected one of: {', '.join(CLIENT_NAMES)}")
    if hooks and client != "claude":
        raise UsageError("--hooks is for --client claude (Claude Code's hooks)")
    local = server_command()  # per-user files: this machine's path
    plan = Plan()
    steps: list[tuple[Change | None, Snippet]] = []
    if client == "codex":
        steps.append(merge_codex(codex_config(), local, print_only))
    else:
        steps.append(merge_json_host(top, JSON_HOSTS[client], PORTABLE, print_only))
    if hooks:
        steps.append(claude_hooks(top, print_only))
    steps.append(merge_agents_md(top, print_only))
    if client == "claude":
        steps.append(import_agents_md(top, print_only))
    for change, snippet in steps:
        plan.snippets.append(snippet)
        if change is not None:
            plan.changes.append(change)
    if hooks and not print_only and (excluded := exclude_local_settings(top)) is not None:
        plan.changes.append(excluded)
    uses_local = client == "codex" or hooks
    if uses_local and local[0] == sys.executable:
        plan.notices.append("git-memex is not on PATH; this machine's configuration runs "
                            f"{sys.executable} -m memex.adapters.cli")
    if client != "codex" and shutil.which(PORTABLE[0]) is None:
        plan.notices.append(f"{JSON_HOSTS[client].file} runs `{PORTABLE[0]}` from PATH, and "
                            f"it is not on PATH here: put {Path(sys.executable).parent} on "
                            "PATH for the host (git memex doctor checks it)")
    return plan
