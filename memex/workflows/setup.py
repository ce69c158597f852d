"""Setting a repository up for git-memex (`git memex init`): idempotent steps."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memex.core import redact
from memex.core.errors import MemexError, UsageError
from memex.storage import gitio, homes, store
from memex.storage.homes import Workspace
from memex.workflows import githooks, scan

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
    name = ws.memory_dir_name
    if dir_name is not None:
        name = _folder_name(dir_name)
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
    if git_hooks:
        hooks = githooks.install(top)
        result.changed += hooks.installed
        result.unchanged += hooks.unchanged
        result.warnings += hooks.skipped
    register_clone(top, result)
    if git_hooks and executable("git-memex-scan") is None:
        result.warnings.append("git-memex-scan is not installed: the pre-commit hook refuses "
                               "commits until it is (then git memex doctor --fix)")
    return result


def _folder_name(given: str) -> str:
    """The memory folder's name `init --dir` is given, as every reader of .memexconfig
    takes it (`homes._safe_dir_name`: slashes at either end dropped); UsageError for one
    outside the repo or holding a secret. The name is committed (.memexconfig,
    .gitattributes, every memory file's path) and each clone reads that folder: a
    masked name would be another folder, so it is refused, quoted masked."""
    name = homes._safe_dir_name(given)
    if name is None:
        raise UsageError(f"not a folder inside the repo: {redact.quoted(given)}")
    if found := redact.find_secrets(name):
        raise UsageError(f"the folder name {redact.quoted(name)} holds a secret "
                         f"({found[0].kind}): it would be committed; choose another name")
    return name


# ---------------------------------------------------------------- the merge driver

DRIVER_NAME = "git-memex field-level merge of memory files"
DRIVER_ARGS = "merge-driver %O %A %B %L %P"


# memory files only: ULID-named (26 characters, the first 0-7), directly in the folder
ULID_GLOB = "[0-7]" + "?" * 25
ATTRIBUTES = ("merge=memex", "diff=memex")


def attribute_line(dir_name: str) -> str:
    return f"{dir_name}/{ULID_GLOB}.md {' '.join(ATTRIBUTES)}"


def _merge_attribute(top: Path, dir_name: str, result: InitResult) -> None:
    """Add the memory files' `merge=memex` line to .gitattributes, keeping whatever else
    it holds. An earlier wide `<dir>/*.md` line is left as it is (the driver merges a
    file that is not a memory as plain text)."""
    path = top / ".gitattributes"
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        raise MemexError(f"cannot read {path}: {exc}") from None
    patterns = (f"{dir_name}/*.md", f"{dir_name}/{ULID_GLOB}.md")
    lines = text.splitlines()
    for number, line in enumerate(lines):
        words = line.split()
        if not words or words[0] not in patterns or "merge=memex" not in words[1:]:
            continue
        pattern = words[0]
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


# ---------------------------------------------------------------- per-clone registrations
# git config of this clone only (never committed): every clone runs `init` once, and
# `doctor --fix` re-points them after a reinstall. Commands are absolute paths, so a GUI
# client, an IDE or a CI job without git-memex on PATH still runs them.


def executable(name: str) -> str | None:
    """The absolute path of the installed `name` (beside this Python first, the install
    that is running, then PATH), or None."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which(name)
    return str(Path(found).absolute()) if found else None


def driver_command() -> str:
    """The merge driver command line, by absolute path (`python -m` when no git-memex
    executable is installed)."""
    program = executable("git-memex")
    if program is not None:
        return f"{shlex.quote(program)} {DRIVER_ARGS}"
    return f"{shlex.quote(sys.executable)} -m memex.adapters.cli {DRIVER_ARGS}"


def _merge_driver(top: Path, config: dict[str, str]) -> dict[str, str]:
    return {"merge.memex.name": DRIVER_NAME, "merge.memex.driver": driver_command()}


def textconv_command() -> str:
    """`diff.memex.textconv`: the installed git-memex by absolute path (git runs it for
    `git diff`, `git log -p` and `git show` whatever PATH holds then)."""
    program = executable("git-memex") or str(Path(sys.executable).parent / "git-memex")
    return f"{shlex.quote(program)} diff --textconv"


def _diff_driver(top: Path, config: dict[str, str]) -> dict[str, str]:
    return {"diff.memex.textconv": textconv_command()}


HOOK_SCANNER = "memex.hookScanner"


def _hook_scanner(top: Path, config: dict[str, str]) -> dict[str, str]:
    """Where the plain pre-commit hook finds the scanner (when git-memex's hooks are in
    this clone, or the key was set before)."""
    if not any(githooks.installed(top).values()) and HOOK_SCANNER.lower() not in config:
        return {}
    scanner = executable("git-memex-scan")
    return {HOOK_SCANNER: scanner} if scanner else {}


HOOK_HOME = scan.HOOK_HOME


def _hook_home(top: Path, config: dict[str, str]) -> dict[str, str]:
    """The home the commit-time scan guards when the hook runs without GIT_MEMEX_HOME:
    a GUI client or an IDE starts git without the shell profile that sets it, and the
    scan would read another (empty) home's personal memories. Written in every clone:
    the pre-commit framework's config may come after init."""
    return {HOOK_HOME: str(homes.memex_home().resolve())}


# name -> the keys and values this clone's git config should hold (empty: nothing to do)
REGISTRATIONS: dict[str, Callable[[Path, dict[str, str]], dict[str, str]]] = {
    "merge driver": _merge_driver,
    "diff driver": _diff_driver,
    "hook scanner": _hook_scanner,
    "hook home": _hook_home,
}


def register_clone(top: Path, result: InitResult) -> None:
    """Write every per-clone registration that is missing or points elsewhere."""
    current = gitio.config_map(top)
    for name, wanted in REGISTRATIONS.items():
        for key, value in wanted(top, current).items():
            # the hook home counts only in this clone's own config (scan reads --local)
            have = (scan.recorded_hook_home(top) if key == HOOK_HOME
                    else current.get(key.lower()))
            if have == value:
                result.unchanged.append(f"git config {key} is set ({name})")
                continue
            gitio.run(["config", "--local", key, value], cwd=top)
            result.changed.append(f"set git config {key} = {value}")
