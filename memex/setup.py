"""Setting a repository up for git-memex (`git memex init`): idempotent steps."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memex import gitio, homes
from memex.errors import MemexError, UsageError
from memex.homes import Workspace

FOLDER_README = """\
# Project memories (git-memex)

Each `<ULID>.md` file here is one memory: YAML front matter, then Markdown.
They arrive by `git memex submit` and are reviewed in pull requests like code.
See https://github.com/ (git-memex README) or `git help memex`.
"""


@dataclass
class InitResult:
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def init_repo(ws: Workspace, dir_name: str | None = None) -> InitResult:
    if ws.repo is None:
        raise MemexError("not inside a git repository: `git memex init` sets up a repo "
                         "(personal memories need no setup)")
    top = ws.repo.toplevel
    result = InitResult()
    name = dir_name or ws.memory_dir_name
    if dir_name is not None and not homes._safe_dir_name(dir_name):
        raise UsageError(f"not a folder inside the repo: {dir_name!r}")
    config_file = top / homes.MEMEXCONFIG
    current = gitio.config_map(top, config_file).get("memex.dir")
    if current != name:
        gitio.run(["config", "--file", str(config_file), "memex.dir", name], cwd=top)
        result.changed.append(f"wrote memex.dir = {name} to {homes.MEMEXCONFIG}")
        ws.team_config["memex.dir"] = name
    else:
        result.unchanged.append(f"{homes.MEMEXCONFIG} already sets memex.dir = {name}")
    folder = top / name
    readme = folder / "README.md"
    if not folder.is_dir():
        folder.mkdir(parents=True)
        result.changed.append(f"created {name}/")
    if not readme.exists():
        readme.write_text(FOLDER_README, encoding="utf-8")
        result.changed.append(f"wrote {name}/README.md")
    else:
        result.unchanged.append(f"{name}/ exists")
    return result


def folder_of(ws: Workspace) -> Path | None:
    return ws.memory_dir
