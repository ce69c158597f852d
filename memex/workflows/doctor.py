"""`git memex doctor`: ok / warn / fail lines about this machine and repository.

Each check is a plain function `(ws) -> list[Check]` in CHECKS; adding one is
appending a function. Only a `fail` makes doctor exit 1: a warning is advice.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from memex.core import clock, jsonc
from memex.storage import gitio, homes, hooklog, store, usage
from memex.storage.homes import Workspace
from memex.workflows import githooks, portable, rekey, scan, setup

LEVELS = ("ok", "warn", "fail")
SHOWN = 3  # files named in a line; --json has them all


@dataclass(frozen=True)
class Check:
    name: str
    level: str  # ok | warn | fail
    message: str
    hint: str | None = None
    paths: tuple[str, ...] = ()  # the files a check is about, when it has any

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"name": self.name, "level": self.level,
                                  "message": self.message, "hint": self.hint}
        if self.paths:
            out["paths"] = list(self.paths)
        return out


def check_git(ws: Workspace) -> list[Check]:
    if gitio.git_binary() is None:
        return [Check("git", "fail", "git is not installed or not on PATH",
                      "install git; project memories travel by git")]
    version = gitio.run(["--version"], check=False).stdout.strip()
    checks = [Check("git", "ok", version or "git found")]
    if ws.repo is None:
        checks.append(Check("repo", "warn", "not inside a git repository: project memories "
                            "stay local on this machine"))
    else:
        checks.append(Check("repo", "ok", f"repository {ws.repo.toplevel}"))
    return checks


def check_merge_driver(ws: Workspace) -> list[Check]:
    if ws.repo is None:
        return []
    top = ws.repo.toplevel
    probe = f"{ws.memory_dir_name}/01AAAAAAAAAAAAAAAAAAAAAAAA.md"
    out = gitio.run(["check-attr", "merge", "--", probe], cwd=top, check=False).stdout
    attribute = out.strip().rsplit(": ", 1)[-1] if out.strip() else "unspecified"
    driver = ws.config.get("merge.memex.driver")
    if attribute != "memex":
        return [Check("merge-driver", "warn", f"{ws.memory_dir_name}/*.md has no merge=memex "
                      "attribute: memory files get git's plain text merge",
                      "git memex init (writes .gitattributes and the driver config)")]
    if not driver and ws.config.get("merge.memex.name"):
        return [Check("merge-driver", "fail", "merge.memex.name is set but merge.memex.driver "
                      "is not: git aborts every merge of a memory file", "git memex init")]
    if not driver:
        return [Check("merge-driver", "warn", ".gitattributes names the memex merge driver "
                      "but this clone does not configure it (merge.memex.driver): git "
                      "silently falls back to a text merge", "git memex init")]
    problem = _program_problem(driver, "merge.memex.driver")
    if problem is not None:
        level, message = problem
        return [Check("merge-driver", level, message + ": git reports CONFLICT and keeps "
                      "only our side of a memory file", FIX)]
    return [Check("merge-driver", "ok", f"merge driver configured: {driver}")]


FIX = "git memex doctor --fix"


def _program_problem(command: str, key: str) -> tuple[str, str] | None:
    """(level, message) when the program a registered command runs does not resolve
    (fail) or resolves only through PATH (warn: GUI clients, IDEs and CI jobs without
    the venv on PATH do not find it); None when it is an executable absolute path."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        program = ""
    if not program:
        return "fail", f"{key} is empty"
    if not os.path.isabs(program):
        if shutil.which(program) is None:
            return "fail", f"{key} runs {program!r}, which is not found"
        return "warn", (f"{key} runs {program!r} by name, so only where PATH finds it "
                        "(GUI clients, IDEs, CI jobs without it)")
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        return "fail", f"{key} runs {program}, which does not exist (reinstalled?)"
    return None


def check_hooks(ws: Workspace) -> list[Check]:
    if ws.repo is None:
        return []
    top = ws.repo.toplevel
    hooks = githooks.survey(top)  # each hook file read once
    state = {name: hook.kind == "ours" or hook.chained for name, hook in hooks.items()}
    scanning = [name for name in githooks.SCANS if state[name]]
    if scanning:
        scanner = ws.config.get(setup.HOOK_SCANNER.lower(), "")
        problem = _program_problem(scanner, setup.HOOK_SCANNER) if scanner else (
            "fail", f"{setup.HOOK_SCANNER} is not set")
        if problem is not None and problem[0] == "fail":
            return [Check("hooks", "fail", problem[1] + f": the {scanning[0]} hook refuses "
                          "every commit it runs at", FIX)]
        if not githooks.current(hooks):
            return [Check("hooks", "warn", "git-memex's hooks here are an older version "
                          "(a script changed, or one is missing: pre-merge-commit scans "
                          "`git merge`, prepare-commit-msg `git rebase --continue`, "
                          "cherry-pick and revert, pre-applypatch `git am`)", FIX)]
    if all(state.values()):
        return [Check("hooks", "ok", "git-memex git hooks installed: " + ", ".join(state))]
    config = top / ".pre-commit-config.yaml"
    if config.exists() and not state["pre-commit"]:
        return [_framework_hooks(hooks, state, config)]
    missing = [name for name, ok in state.items() if not ok]
    absent = [name for name in missing if hooks[name].kind != "own"]
    unchained = [name for name in missing if hooks[name].kind == "own"]
    folder = githooks.hooks_dir(top)
    parts = (["git-memex git hooks not installed: " + ", ".join(absent)] if absent else [])
    parts += [f"your own {name} hook ({folder / name}) does not run git-memex's: add this "
              f"line to it: {githooks.chain_line(name)}" for name in unchained]
    return [Check("hooks", "warn", "; ".join(parts),
                  "git memex init --git-hooks (or the pre-commit framework)" if absent
                  else None)]


def _framework_hooks(hooks: dict[str, githooks.Hook], state: dict[str, bool],
                     config: Path) -> Check:
    """The pre-commit framework's hooks: which commits they leave unscanned, and the
    line that closes each gap (the framework has no hook type for `git am`)."""
    gaps: list[str] = []
    hints: list[str] = []
    if hooks["pre-commit"].kind != "framework":
        gaps.append("the framework's pre-commit hook is not installed in this clone: "
                    "commits are not scanned")
        hints.append(githooks.FRAMEWORK_INSTALL)
    if not state["pre-merge-commit"] and hooks["pre-merge-commit"].kind != "framework":
        gaps.append("a `git merge` commits unscanned (it skips the pre-commit hook)")
        hints.append(githooks.FRAMEWORK_INSTALL)
    listed = githooks.framework_lists(config, githooks.FRAMEWORK_REBASE_ID)
    if not state["prepare-commit-msg"] and not (
            hooks["prepare-commit-msg"].kind == "framework" and listed):
        gaps.append("`git rebase --continue` after a stop, `git cherry-pick` and "
                    "`git revert` commit unscanned (they skip the pre-commit hook)")
        if not listed:
            hints.append(f"list {{id: {githooks.FRAMEWORK_REBASE_ID}}} in "
                         ".pre-commit-config.yaml")
        if hooks["prepare-commit-msg"].kind != "framework":
            hints.append(githooks.FRAMEWORK_INSTALL)
    if not state["pre-applypatch"]:
        gaps.append("`git am` and `git rebase --apply` commit unscanned (the framework "
                    "has no pre-applypatch hook type)")
        hints.append("git memex init --git-hooks (adds git-memex's plain pre-applypatch "
                     "hook beside the framework's)")
    if not gaps:
        return Check("hooks", "ok", "hooks come from the pre-commit framework "
                     "(.pre-commit-config.yaml), with git-memex's plain pre-applypatch")
    return Check("hooks", "warn", "hooks come from the pre-commit framework "
                 "(.pre-commit-config.yaml): " + "; ".join(gaps),
                 "; ".join(dict.fromkeys(hints)))


def fix(ws: Workspace) -> list[str]:
    """`doctor --fix`: re-point this clone's registrations (setup.REGISTRATIONS: the merge
    driver, the hook scanner, ...) at the installed executables, and refresh git-memex's
    own hook scripts where they are installed. Returns what changed."""
    if ws.repo is None:
        return []
    top = ws.repo.toplevel
    result = setup.InitResult()
    hooks = githooks.survey(top)
    if any(hook.kind == "ours" for hook in hooks.values()) and not githooks.current(hooks):
        result.changed += githooks.install(top).installed
    setup.register_clone(top, result)
    ws.config.clear()
    ws.config.update(gitio.config_map(top))
    return result.changed


def check_quarantine(ws: Workspace) -> list[Check]:
    """Unreadable files in every home; each check names its own files, since verify
    sees only the repo's folder and the outbox and personal folders are outside it."""
    _, bad = store.read_all(ws)
    if not bad:
        return [Check("quarantine", "ok", "every memory file parses")]
    folder = ws.memory_dir
    in_repo = [q for q in bad if folder is not None and q.path.parent == folder]
    elsewhere = [q for q in bad if q not in in_repo]
    checks = []
    for items, where, hint in (
            (in_repo, "in the repo", "edit or git rm each; git memex verify lists every one "
             "with its rule"),
            (elsewhere, "outside the repo (outbox or personal)", "edit or delete each file "
             "by hand; git memex doctor --json lists every path")):
        if not items:
            continue
        shown = "; ".join(f"{q.path}: {q.reason}" for q in items[:SHOWN])
        more = f" (+{len(items) - SHOWN} more)" if len(items) > SHOWN else ""
        checks.append(Check("quarantine", "warn", f"{len(items)} unreadable memory file(s) "
                            f"{where}, skipped and left untouched: {shown}{more}", hint,
                            tuple(str(q.path) for q in items)))
    return checks


def check_home_exposed(ws: Workspace) -> list[Check]:
    """The home inside the work tree, not ignored: git would commit personal memories."""
    found = homes.home_check(ws) if gitio.git_binary() is not None else None
    if found is not None and found.own:
        return [Check("home", "ok", f"the git-memex home {ws.home} is a git repository of "
                      "its own: what you commit there (personal memories, the usage log, "
                      "export.key unless you exclude it) goes wherever you push it")]
    if found is None or found.line is None:
        return [Check("home", "ok", f"the git-memex home {ws.home} is outside git's reach")]
    fix = found.fix
    return [Check("home", "fail", f"{found.problem()}; every other command refuses to run",
                  fix[0].lower() + fix[1:])]


def check_hook_home(ws: Workspace) -> list[Check]:
    """This clone's memex.hookHome names this home: else a GUI client's commit (no
    GIT_MEMEX_HOME) guards a home other than the one in use, or none."""
    if ws.repo is None or gitio.git_binary() is None:
        return []
    value = scan.recorded_hook_home(ws.repo.toplevel)
    key = scan.HOOK_HOME
    why = ("a commit without GIT_MEMEX_HOME (a GUI client or IDE) may not guard this "
           "home's personal memories")
    if value is None:
        top = ws.repo.toplevel
        guarded = githooks.installed(top)["pre-commit"] or (
            top / ".pre-commit-config.yaml").exists()
        return [Check("hook-home", "fail" if guarded else "warn",
                      f"{key} is not set in this clone: {why}", FIX)]
    path = homes.expanded(value)
    if path is None:
        user = value[1:].split("/", 1)[0].split(os.sep, 1)[0]
        missing = f"there is no user {user}" if user else "this user has no home folder"
        problem = f"{key} names {value}, but {missing}, so it is ignored: {why}"
    elif not path.is_absolute():
        problem = f"{key} is a relative path ({value}), which is ignored: {why}"
    elif _resolved(path) == _resolved(ws.home):
        return [Check("hook-home", "ok", f"{key} names this home")]
    elif scan.usable_hook_home(value) is None:
        problem = f"{key} names {value}, which does not exist: {why}"
    else:
        problem = f"{key} names {value}, not this home {ws.home}: {why}"
    return [Check("hook-home", "fail", problem, FIX)]


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def check_duplicates(ws: Workspace) -> list[Check]:
    """One id with a file in two homes (an interrupted submit, an import, a hand copy):
    reads show the first copy in reading order; a person removes the other."""
    dupes = store.duplicate_ids(ws)
    if not dupes:
        return [Check("duplicates", "ok", "every memory id has one file")]
    def where(mid: str, found: list[store.Home]) -> str:
        return " and ".join(f"{h.kind} ({h.path / f'{mid}.md'})" for h in found)

    shown = "; ".join(f"{mid} in {where(mid, found)} (showing the {found[0].kind} copy)"
                      for mid, found in sorted(dupes.items())[:SHOWN])
    more = f" (+{len(dupes) - SHOWN} more)" if len(dupes) > SHOWN else ""
    paths = tuple(str(h.path / f"{mid}.md") for mid, found in sorted(dupes.items())
                  for h in found)
    return [Check("duplicates", "warn", f"{len(dupes)} memory id(s) have a file in more "
                  f"than one place: {shown}{more}; {store.READING_ORDER}",
                  "compare the copies (git memex show ID names them), then delete the one "
                  "you do not want (an outbox draft already submitted: rm it); git memex "
                  "verify fails on repo ids also in the outbox", paths)]


def check_outbox_key(ws: Workspace) -> list[Check]:
    """Drafts stranded under an earlier repo_id (origin changed, or first origin)."""
    if ws.repo is None:
        return []
    old = rekey.old_outboxes(ws)
    if not old:
        return [Check("outbox", "ok", f"the outbox is keyed by this repo's id {ws.repo_id}")]
    checks = []
    for item in old:
        flag = "" if len(old) == 1 else f" --from {item.repo_id}"
        checks.append(Check(
            "outbox", "warn", f"the repo_id changed (origin changed or was added): "
            f"{item.drafts} draft(s) wait in the outbox of {item.describe()}, invisible "
            f"under the current id {ws.repo_id}", f"git memex rekey{flag}"))
    return checks


def check_index(ws: Workspace) -> list[Check]:
    """The search index, opened read-only: present, intact, this version, up to date.
    Doctor never repairs it (the next reading command does that by itself)."""
    import sqlite3

    from memex.index import build, schema
    from memex.index.plan import same_stat

    path = build.db_path(ws)
    if not path.exists():
        return [Check("index", "ok", "no index yet; the next reading command builds it")]
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            intact = conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            version = schema.version(conn)
            indexed, _ = build.indexed_files(conn) if intact else ({}, {})
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return [Check("index", "warn", f"the index at {path} cannot be read ({exc})",
                      "it is a cache: the next reading command rebuilds it")]
    if not intact:
        return [Check("index", "warn", f"the index at {path} is damaged",
                      "git memex reindex --full (or just read: it is rebuilt)")]
    if version != schema.SCHEMA_VERSION:
        return [Check("index", "ok", f"the index is of schema {version}; the next reading "
                      "command rebuilds it for this version")]
    on_disk, _ = build.scan_disk(ws)
    behind = sum(1 for p, st in on_disk.items()
                 if p not in indexed or not same_stat(indexed[p], st))
    behind += sum(1 for p in indexed if p not in on_disk)
    if behind:
        return [Check("index", "ok", f"index healthy; {behind} file(s) changed since the "
                      "last refresh (the next reading command catches up)")]
    return [Check("index", "ok", f"index healthy and current ({len(indexed)} file(s))")]


def check_mcp_configs(ws: Workspace) -> list[Check]:
    """Every MCP config git-memex wrote here points at a command that resolves here, and
    the shared ones (committed by teams) hold no machine's absolute path."""
    from memex.workflows import clients

    if ws.repo is None:
        return []
    out: list[Check] = []
    seen: set[str] = set()
    for host in clients.JSON_HOSTS.values():
        if host.file in seen:
            continue  # Visual Studio and VS Code share .vscode/mcp.json
        seen.add(host.file)
        path = clients.json_host_file(ws.repo.toplevel, host)
        try:
            data = jsonc.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        node: object = data
        for key in host.section:
            node = node.get(key) if isinstance(node, dict) else None
        entry = node.get(clients.SERVER) if isinstance(node, dict) else None
        if not isinstance(entry, dict):
            continue
        command = entry.get("command")
        program = command[0] if isinstance(command, list) and command else command
        if not isinstance(program, str) or not program:
            out.append(Check("mcp", "fail", f"{host.file}: the {clients.SERVER} server has "
                             "no command", f"git memex init --client {host.name}"))
        elif shutil.which(program) is None and os.path.isabs(program):
            out.append(Check("mcp", "fail", f"{host.file}: {program} is not a command here",
                             f"git memex init --client {host.name}"))
        elif shutil.which(program) is None:
            out.append(Check("mcp", "fail", f"{host.file}: {program} is not on PATH here, so "
                             "the host cannot start the server",
                             "put the folder holding git-memex on PATH (the venv's bin, "
                             "or pipx)"))
        elif os.path.isabs(program):
            out.append(Check("mcp", "warn", f"{host.file}: the {clients.SERVER} server runs "
                             f"{program}, a path of one machine: a teammate's host cannot "
                             "start it", f"git memex init --client {host.name} (writes "
                             f"`{' '.join(clients.PORTABLE)}`)"))
        else:
            out.append(Check("mcp", "ok", f"{host.label}: {host.file} runs {program}"))
    return out


def check_usage_log(ws: Workspace) -> list[Check]:
    """The usage log rotates at memex.usageMaxBytes; one far past it is not rotating
    (record() never fails a command, so this is where a read-only home shows)."""
    path = usage.log_path(ws.home)
    try:
        size = path.stat().st_size
    except OSError:
        return [Check("usage-log", "ok", "no usage log yet")]
    limit = usage.limit(ws)
    if limit > 0 and size > 2 * limit:
        return [Check("usage-log", "warn",
                      f"the usage log {path} is {size:,} bytes, over twice its limit "
                      f"({limit:,}): it is not being rotated",
                      hint=f"make {ws.home} writable, or remove {usage.old_path(ws.home)} "
                      "if it is not a file")]
    return [Check("usage-log", "ok", f"usage log {size:,} bytes"
                  + (f" (rotated at {limit:,})" if limit > 0 else " (never rotated)"))]


HOOK_FAILURE_DAYS = 7
_HOOK_COMMANDS = {"session_start": "context", "user_prompt_submit": "capture"}


def check_hook_failures(ws: Workspace) -> list[Check]:
    """Agent hooks fail silently by design (they never block a prompt) and log instead:
    a failure this week means memory injection may have stopped."""
    since = clock.now() - timedelta(days=HOOK_FAILURE_DAYS)
    failures = hooklog.since(ws.home, since)
    if not failures:
        return [Check("agent-hooks", "ok",
                      f"no agent hook failure in the last {HOOK_FAILURE_DAYS} days")]
    last = failures[-1]
    step = _HOOK_COMMANDS.get(last.get("hook", ""), "context")
    return [Check("agent-hooks", "warn",
                  f"{len(failures)} agent hook failure(s) in the last {HOOK_FAILURE_DAYS} "
                  f"days; the last at {last.get('at')} ({last.get('hook')}): "
                  f"{last.get('error')}",
                  hint=f"see {hooklog.log_path(ws.home)}; `git memex {step}` without "
                  "--hook shows such an error directly",
                  paths=(str(hooklog.log_path(ws.home)),))]


def check_export_key(ws: Workspace) -> list[Check]:
    """The key that signs exports (issue 14.7) readable by others on this machine: they
    could sign an archive whose review and instruction state `import` restores. Said
    only when it is so (a key copied from another machine keeps the copy's mode)."""
    path = ws.home / portable.KEY_FILE
    try:
        mode = path.stat().st_mode
    except OSError:
        return []
    if os.name != "posix" or not mode & 0o077:
        return []
    return [Check("export-key", "warn",
                  f"{path} is readable or writable by other users of this machine "
                  f"(mode {mode & 0o777:o}): they could sign archives that import trusts "
                  "as your own export", hint=f"chmod 600 {shlex.quote(str(path))}",
                  paths=(str(path),))]


CHECKS: list[Callable[[Workspace], list[Check]]] = [
    # The index check runs before anything that reads memories (and so refreshes it).
    check_git, check_home_exposed, check_hook_home, check_index, check_merge_driver,
    check_hooks, check_quarantine, check_duplicates, check_outbox_key, check_mcp_configs,
    check_usage_log, check_hook_failures, check_export_key,
]


def run(ws: Workspace) -> list[Check]:
    out: list[Check] = []
    for check in CHECKS:
        out.extend(check(ws))
    return out


def failed(checks: list[Check]) -> bool:
    return any(c.level == "fail" for c in checks)

