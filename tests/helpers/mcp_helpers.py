"""A synchronous handle on a real `git memex mcp` process, driven by the official SDK's
stdio client in a background event loop (one process can serve a whole test module)."""

from __future__ import annotations

import json
import os
import subprocess
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from tests.conftest import BIN

UNTRACED_IMPORTS = Path(__file__).parent / "untraced_imports"


def make_env(root: Path) -> dict[str, str]:
    """An isolated HOME, git config and memory home under ROOT (like conftest's)."""
    home = root / "userhome"
    home.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test User\n\temail = test@example.com\n"
                         "[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    return {
        "HOME": str(home), "GIT_MEMEX_HOME": str(root / "memex-home"),
        "GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1",
        "XDG_DATA_HOME": str(home / ".local/share"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        # coverage's subprocess measurement, when the suite runs under it, with the
        # server's imports of other packages untraced (untraced_imports/sitecustomize.py)
        **{k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")},
        **({"PYTHONPATH": str(UNTRACED_IMPORTS)} if "COVERAGE_PROCESS_CONFIG" in os.environ
           else {}),
    }


def make_repo(path: Path, env: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    full = dict(os.environ, **env)
    for args in (["init", "-q", "-b", "main"],
                 ["remote", "add", "origin", "git@github.com:Acme/App.git"],
                 ["commit", "-q", "--allow-empty", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=path, env=full, check=True, capture_output=True)
    return path


class Server(AbstractContextManager["Server"]):
    """`git-memex mcp --repo REPO` with ENV; call(tool, args) -> CallToolResult."""

    def __init__(self, repo: Path, env: dict[str, str], command: list[str] | None = None
                 ) -> None:
        argv = command or [str(BIN / "git-memex"), "mcp", "--repo", str(repo)]
        self.params = StdioServerParameters(command=argv[0], args=argv[1:], env=env,
                                            cwd=str(repo))
        self.log = repo.parent / f"mcp-stderr-{repo.name}.log"
        self._stack = ExitStack()
        self.portal: BlockingPortal | None = None
        self.session: ClientSession | None = None

    def __enter__(self) -> Server:
        self.portal = self._stack.enter_context(start_blocking_portal())
        # The server's stderr goes to a file beside the repo, to read when a test fails.
        errlog = self._stack.enter_context(self.log.open("a", encoding="utf-8"))
        read, write = self._stack.enter_context(
            self.portal.wrap_async_context_manager(stdio_client(self.params, errlog=errlog)))
        self.session = self._stack.enter_context(
            self.portal.wrap_async_context_manager(ClientSession(read, write)))
        self.portal.call(self.session.initialize)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def call(self, tool: str, args: dict[str, Any] | None = None) -> CallToolResult:
        assert self.portal is not None and self.session is not None
        result: CallToolResult = self.portal.call(self.session.call_tool, tool, args or {})
        return result

    def ok(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = self.call(tool, args)
        assert not result.is_error, result.content
        data = json.loads(text_of(result))
        assert result.structured_content == data
        assert isinstance(data, dict)
        return data

    def error(self, tool: str, args: dict[str, Any] | None = None) -> str:
        result = self.call(tool, args)
        assert result.is_error, text_of(result)
        return text_of(result)

    def list_tools(self) -> Any:
        assert self.portal is not None and self.session is not None
        return self.portal.call(self.session.list_tools)


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    text = getattr(block, "text", None)
    assert isinstance(text, str)
    return text
