"""Setting a repository up for git-memex (`git memex init`): idempotent steps."""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from memex.core.errors import MemexError, UsageError
from memex.storage import gitio, homes, store
from memex.storage.homes import Workspace
from memex.workflows import githooks

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
    warnings: list[str] = field(default_factory=list)


def init_repo(ws: Workspace, dir_name: str | None = None, git_hooks: bool = False
              ) -> InitResult:
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
    _merge_attribute(top, name, result)
    _merge_driver_config(top, result)
    if git_hooks:
        hooks = githooks.install(top)
        result.changed += hooks.installed
        result.unchanged += hooks.unchanged
        result.warnings += hooks.skipped
    return result


# ---------------------------------------------------------------- the merge driver

DRIVER_NAME = "git-memex field-level merge of memory files"
DRIVER_ARGS = "merge-driver %O %A %B %L %P"


ATTRIBUTES = ("merge=memex", "diff=memex")


def attribute_line(dir_name: str) -> str:
    return f"{dir_name}/*.md {' '.join(ATTRIBUTES)}"


def _merge_attribute(top: Path, dir_name: str, result: InitResult) -> None:
    """Add `<dir>/*.md merge=memex` to .gitattributes, keeping whatever else it holds."""
    path = top / ".gitattributes"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise MemexError(f"cannot read {path}: {exc}") from None
    pattern = f"{dir_name}/*.md"
    lines = text.splitlines()
    for number, line in enumerate(lines):
        words = line.split()
        if not words or words[0] != pattern or "merge=memex" not in words[1:]:
            continue
        missing = [a for a in ATTRIBUTES if a not in words[1:]]
        if not missing:
            result.unchanged.append(f".gitattributes already names the memex merge and "
                                    f"diff drivers for {pattern}")
            return
        lines[number] = line.rstrip() + " " + " ".join(missing)  # an older init's line
        store.write_atomic(path, "\n".join(lines) + "\n")
        result.changed.append(f"added {' '.join(missing)} to {pattern} in .gitattributes")
        return
    if text and not text.endswith("\n"):
        text += "\n"
    text += attribute_line(dir_name) + "\n"
    store.write_atomic(path, text)
    result.changed.append(f"added `{attribute_line(dir_name)}` to .gitattributes")


def driver_command() -> str:
    """The merge driver command line: git-memex by name when PATH finds it, else by path."""
    found = shutil.which("git-memex")
    if found is None:
        beside = Path(sys.executable).parent / "git-memex"
        if beside.exists():
            return f"{shlex.quote(str(beside))} {DRIVER_ARGS}"
    return f"git-memex {DRIVER_ARGS}"


def textconv_command() -> str:
    """`diff.memex.textconv`: the installed git-memex by absolute path (git runs it for
    `git diff`, `git log -p` and `git show` whatever PATH holds then)."""
    found = shutil.which("git-memex")
    program = Path(found).resolve() if found else Path(sys.executable).parent / "git-memex"
    return f"{shlex.quote(str(program))} diff --textconv"


def _merge_driver_config(top: Path, result: InitResult) -> None:
    """merge.memex.name / .driver and diff.memex.textconv in this clone's git config (git
    config is not shared: every clone runs `git memex init` once; `git memex doctor`
    says when the driver is missing)."""
    current = gitio.config_map(top)
    wanted = {"merge.memex.name": DRIVER_NAME, "merge.memex.driver": driver_command(),
              "diff.memex.textconv": textconv_command()}
    for key, value in wanted.items():
        if current.get(key) == value:
            result.unchanged.append(f"git config {key} is set")
            continue
        gitio.run(["config", "--local", key, value], cwd=top)
        result.changed.append(f"set git config {key} = {value}")
