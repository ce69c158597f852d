"""Where memories live, and which project a directory belongs to (repo_id)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import sys
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.core import lazyre
from memex.core.digest import blake2b, sha256
from memex.core.errors import MemexError
from memex.storage import atomic, gitio, settings

DEFAULT_DIR = ".memex"
MEMEXCONFIG = ".memexconfig"


class SettingError(MemexError):
    """A memex.* setting holds a value its type does not accept (exit 1)."""


def expanded(value: str) -> Path | None:
    """VALUE with a leading `~` or `~user` expanded; None when it names no such user
    (pathlib raises; os.path would leave `~user` as written, a relative path)."""
    try:
        return Path(value).expanduser()
    except RuntimeError:
        return None


def memex_home() -> Path:
    """$GIT_MEMEX_HOME, else the platform's user data dir (XDG on Linux)."""
    explicit = os.environ.get("GIT_MEMEX_HOME")
    if explicit:
        home = expanded(explicit)
        if home is None:  # ~user of no such user
            raise MemexError(f"GIT_MEMEX_HOME names a home folder that does not exist: "
                             f"{explicit!r}")
        if not home.is_absolute():
            # relative to wherever a command runs: each folder would have its own home,
            # and the commit hook (run at the top of the work tree) guard another one
            raise MemexError(
                f"GIT_MEMEX_HOME must be an absolute path (or start with ~/), not "
                f"{explicit!r}: a relative one names another home in every folder")
        return home
    return default_home()


def default_home() -> Path:
    """The home without GIT_MEMEX_HOME: the platform's user data dir (XDG on Linux; a
    relative XDG_DATA_HOME is ignored, as the XDG spec says)."""
    xdg = os.environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(xdg):
        xdg = ""
    if sys.platform.startswith("linux") or xdg:
        base = xdg or str(Path.home() / ".local" / "share")
        return Path(base) / "git-memex"
    import platformdirs

    return Path(platformdirs.user_data_dir("git-memex", appauthor=False, roaming=True))


# normalise_url's patterns (module constants: their compiled code is kept, codecache)
_SCHEME = lazyre.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")
_SCP = lazyre.compile(r"^[^/]+:")
_DRIVE = lazyre.compile(r"^[A-Za-z]:[\\/]")
_PORT = lazyre.compile(r":\d*$")


def normalise_url(url: str) -> str:
    """The one spelling of a remote URL: host lower-cased; scheme, user@, port,
    trailing '/' and '.git' dropped; scp syntax turned into a path."""
    text = url.strip()
    text = _SCHEME.sub("", text)
    if "://" not in url and _SCP.match(text) and not _DRIVE.match(text):
        host_part, _, path = text.partition(":")
        text = f"{host_part}/{path}"
    host, _, path = text.partition("/")
    host = host.rsplit("@", 1)[-1]
    host = _PORT.sub("", host).lower()
    path = path.rstrip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.rstrip("/")
    return f"{host}/{path}" if path else host


def repo_id_for(origin: str | None, toplevel: Path) -> str:
    if origin:
        digest = sha256(normalise_url(origin).encode()).hexdigest()
        return f"git-origin-sha256:{digest}"
    digest = sha256(str(toplevel.resolve()).encode()).hexdigest()
    return f"path-sha256:{digest}"


def outbox_name(repo_id: str) -> str:
    """repo_id as a folder name (':' is not allowed in Windows paths)."""
    return repo_id.replace(":", "-")


def _safe_dir_name(value: str) -> str | None:
    value = value.strip().strip("/")
    if not value or value.startswith("/") or ".." in Path(value).parts:
        return None
    return value


@dataclass
class Workspace:
    """Everything a command needs to know about where it runs."""

    cwd: Path
    home: Path
    repo: gitio.RepoInfo | None
    repo_id: str
    config: dict[str, str] = field(default_factory=dict)
    team_config: dict[str, str] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set, repr=False, compare=False)
    # None: a bad setting raises SettingError; set (agent hooks): told, default used.
    on_bad_setting: Callable[[str], None] | None = field(default=None, repr=False,
                                                         compare=False)

    @property
    def in_git(self) -> bool:
        return self.repo is not None

    @property
    def personal_dir(self) -> Path:
        return self.home / "personal"

    @property
    def outbox_dir(self) -> Path:
        return self.home / "outbox" / outbox_name(self.repo_id)

    @property
    def memory_dir_name(self) -> str:
        for value in (self.config.get("memex.dir"), self.team_config.get("memex.dir")):
            if value and (safe := _safe_dir_name(value)):
                return safe
        return DEFAULT_DIR

    @property
    def memory_dir(self) -> Path | None:
        """The repo's shared memory folder (None outside git)."""
        if self.repo is None:
            return None
        return self.repo.toplevel / self.memory_dir_name

    @property
    def index_dir(self) -> Path:
        """Where this checkout's index cache lives: per worktree inside the git dir."""
        if self.repo is not None:
            return self.repo.git_dir / "memex"
        return self.home / "index" / outbox_name(self.repo_id)

    @property
    def org_outbox_dir(self) -> Path:
        """Drafts for the org memory repo (`propose --to org`), outside every repo."""
        return self.home / "outbox" / "org"

    @property
    def org_repo(self) -> Path | None:
        value = self.config.get("memex.orgrepo")
        return Path(value).expanduser() if value else None

    def setting(self, key: str, default: str | None = None) -> str | None:
        """A person's git config first, then the team's .memexconfig (raw text)."""
        key = key.lower()
        return self.config.get(key, self.team_config.get(key, default))

    def typed(self, key: str) -> Any:
        """The value of a registered setting (memex.storage.settings), parsed by its
        type; unset: the registry's default. A value that does not parse raises
        SettingError naming key, value and file, unless on_bad_setting is set (agent
        hooks, which must never block): then it is told and the default used."""
        spec = settings.lookup(key)
        if spec is None:
            raise KeyError(f"{key} is not in memex.storage.settings.REGISTRY")
        return self._parsed(spec, None)

    def int_setting(self, key: str, default: int | None = None) -> int:
        """An integer setting (git's k/m/g suffixes); DEFAULT only for a key not yet in
        the registry."""
        spec = settings.lookup(key)
        if spec is None:
            if default is None:
                raise KeyError(f"{key} is not in memex.storage.settings.REGISTRY")
            spec = settings.Setting(key, settings.INT, str(default), "")
        value = self._parsed(spec, default)
        return int(value)

    def _parsed(self, spec: settings.Setting, default: Any) -> Any:
        fallback = default if default is not None else (
            spec.parse(spec.default) if spec.default is not None else None)
        raw = self.setting(spec.key)
        if raw is None:
            return fallback
        value = spec.parse(raw)
        if value is not None:
            return value
        message = settings.bad_value_message(spec.name, raw, spec.expected,
                                             self.setting_origin(spec.key))
        if self.on_bad_setting is None:
            raise SettingError(message)
        if spec.key not in self.warned:
            self.warned.add(spec.key)
            self.on_bad_setting(f"{message}; using {spec.default}")
        return fallback

    def setting_origin(self, key: str) -> str | None:
        """The file a setting's value came from (git config --show-origin), or None."""
        key = key.lower()
        if key in self.config:
            proc = gitio.run(["config", "--show-origin", "--null", "--get", key],
                             cwd=self.cwd, check=False)
            origin = proc.stdout.split("\0", 1)[0] if proc.returncode == 0 else ""
            if not origin.startswith("file:"):
                return origin or None  # "command line:", "blob:..."
            return os.path.normpath(self.cwd / origin.removeprefix("file:"))
        if key in self.team_config and self.repo is not None:
            return str(self.repo.toplevel / MEMEXCONFIG)
        return None

    def identity(self) -> str:
        """Namespaced author for created_by / approved_by / history (DESIGN.md)."""
        explicit = self.config.get("memex.identity")
        if explicit:
            return explicit if ":" in explicit else f"local:{explicit}"
        email = self.config.get("user.email") or os.environ.get("GIT_AUTHOR_EMAIL")
        if email:
            return f"local:{email}"
        name = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
        return f"local:{name}"


SEEN_IDS_FILE = "repo_ids"


def seen_ids_path(repo: gitio.RepoInfo) -> Path:
    """Where a clone keeps the repo_ids it has had (shared by its worktrees)."""
    return repo.common_dir / "memex" / SEEN_IDS_FILE


def seen_repo_ids(repo: gitio.RepoInfo) -> dict[str, str]:
    """{repo_id: what it was derived from} for every id this clone has had, oldest first."""
    try:
        text = seen_ids_path(repo).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        rid, _, source = line.partition("\t")
        if rid.startswith(("git-origin-sha256:", "path-sha256:")):
            out.setdefault(rid, source)
    return out


def remember_repo_id(repo: gitio.RepoInfo, rid: str, source: str) -> None:
    """Append this clone's current repo_id to its list when it is new, so that after an
    origin change `doctor` can find the outbox of the old id (`git memex rekey`). A
    cache like the index: failing to write it (read-only git dir) costs nothing else."""
    if rid in seen_repo_ids(repo):
        return
    path = seen_ids_path(repo)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"{rid}\t{source}\n")
    except OSError:
        pass


# Files a home holds or will hold, asked of git even before they exist: a home is
# ignored only when every one of them is (an exclude line for personal/ alone left the
# archive-signing key, the outbox and the rest to `git add -A`).
_HOME_PROBES = ("personal/01AAAAAAAAAAAAAAAAAAAAAAAA.md", "usage.jsonl", "export.key",
                "outbox/x/01AAAAAAAAAAAAAAAAAAAAAAAA.md", "hook-errors.jsonl",
                "index/x/index.sqlite", ".migrate-backup/x/01AAAAAAAAAAAAAAAAAAAAAAAA.md",
                ".write.lock", "any-other-file")
# What a folder of the home that is a symbolic link may hold (personal/, an outbox, the
# index), asked of git where the link leads.
_LINKED_PROBES = ("01AAAAAAAAAAAAAAAAAAAAAAAA.md", "x/01AAAAAAAAAAAAAAAAAAAAAAAA.md",
                  "x/index.sqlite", "any-other-file")
# What a home holds at its top (its own files: git-memex's and a repository's own
# .gitignore / README), as pathspecs: a repository holding nothing else is the home's own.
_HOME_OWN = ("personal", "outbox", "index", ".migrate-backup", "usage.jsonl*", "export.key",
             "hook-errors.jsonl*", ".*.lock", ".gitignore", ".gitattributes", "README*")


@dataclass(frozen=True)
class _HomeTree:
    """The work tree that holds the home (or a part of it a link leads to): its
    repository, the path in it ('' for its top, a folder's ending in '/', a file's
    not), whether that is not the current repository, and the files asked of git there
    (relative to that path)."""

    repo: gitio.RepoInfo
    prefix: str
    elsewhere: bool
    names: tuple[str, ...] = _HOME_PROBES
    detached: bool = False  # a git dir kept apart from its work tree (`_detached_trees`)

    def git(self, args: list[str]) -> Any:
        return gitio.run([*self.where(), *args], cwd=self.repo.toplevel, check=False,
                         elsewhere=self.elsewhere)

    def where(self) -> list[str]:
        """git's options that name this repository when its git dir is kept apart."""
        if not self.detached:
            return []
        return ["--git-dir", str(self.repo.git_dir), "--work-tree", str(self.repo.toplevel)]


def _home_tree(ws: Workspace, path: Path | None = None,
               names: tuple[str, ...] = _HOME_PROBES) -> _HomeTree | None:
    """The work tree holding the home: the innermost one around it (a nested repository
    or a submodule, not the repository around that one, whose `git add -A` never adds
    their files), whether or not it is the current repository. None when no work tree
    holds it; a home under a `.git` folder is in none (git never adds a file there).
    A `.git` entry that is no repository there (an empty folder, a gitdir file to
    nowhere) is passed over, as git's own discovery passes over it. Costs a stat per
    folder above the home, and a git process only for a home in a repository other
    than the current one."""
    try:
        home = (path or ws.home).resolve()
        top = ws.repo.toplevel.resolve() if ws.repo is not None else None
    except (OSError, RuntimeError):
        return None
    if ".git" in home.parts:
        return None
    if path is not None and home.exists() and not home.is_dir():  # a linked file
        tree = _home_tree(ws, home.parent)
        return None if tree is None else _HomeTree(tree.repo, tree.prefix + home.name,
                                                   tree.elsewhere, ("",))
    for folder in (home, *home.parents):
        if folder == top:
            assert ws.repo is not None
            return _HomeTree(ws.repo, _prefix(home, folder), False, names)
        if (folder / ".git").exists():
            repo = gitio.discover(folder, elsewhere=True)
            if repo is not None and repo.toplevel.resolve() == folder:
                return _HomeTree(repo, _prefix(home, folder), True, names)
    return None


def _user_home() -> Path | None:
    try:
        home = os.path.expanduser("~")
        return Path(os.path.realpath(home)) if os.path.isabs(home) else None
    except (OSError, RuntimeError, KeyError):
        return None


def bare_candidates(user: Path) -> list[str]:
    """The git dirs kept apart from a work tree that a dotfiles setup puts in the user's
    home (`~/.cfg` of `git --git-dir=~/.cfg --work-tree=~`, yadm's, vcsh's): each folder
    of the home, and those two tools' places, that holds a HEAD file and objects/. A
    scan of one folder and a stat or two per folder in it: no git process."""
    return _scan_bare(user)[0]


def _scan_bare(user: Path) -> tuple[list[str], list[str]]:
    """`bare_candidates`, and every folder the scan looked into or at (the user's home,
    vcsh's repo.d and yadm's repo.git with the folders above them up to the user's
    home, each folder of the scanned ones): a git dir made later changes the stat of
    one of them (a kept verdict rests on them). yadm's and vcsh's places follow
    XDG_DATA_HOME / XDG_CONFIG_HOME as those tools do."""
    base = str(user)
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(base, ".local", "share")
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(base, ".config")
    yadm = os.path.join(data, "yadm", "repo.git")
    looked: list[str] = []
    for place in (yadm, os.path.join(config, "vcsh", "repo.d")):
        folder = place
        for _ in range(4):  # the place and what above it may be made with it
            looked.append(folder)
            up = os.path.dirname(folder)
            if folder == base or up == folder:
                break
            folder = up
    folders = [yadm]
    for where in (base, os.path.join(config, "vcsh", "repo.d")):
        try:
            with os.scandir(where) as entries:
                folders += [e.path for e in entries if e.is_dir()]
        except OSError:
            continue
    looked += [base, *folders]
    isfile, isdir, join = os.path.isfile, os.path.isdir, os.path.join
    found = sorted(f for f in folders if isfile(join(f, "HEAD")) and isdir(join(f, "objects")))
    return found, sorted(set(looked))


def _looked_record(user: Path, looked: list[str]) -> list[Any]:
    """What a kept verdict holds of the folders `_scan_bare` looked into or at: their
    names (those in the user's home relative to it) and one digest of their stats
    (`_looked_digest`), not each stat: a home of 20,000 folders made a 1.9 MB verdict."""
    prefix = os.path.join(str(user), "")
    names = [name[len(prefix):] if name.startswith(prefix) else name for name in looked]
    return [names, _looked_digest(user, names)]


def _looked_digest(user: Path, names: list[str]) -> list[Any]:
    """[digest of every named folder's `_stat` (a missing one counted as such), the
    newest mtime or ctime among them]: equal digests, equal stats. One stat a folder,
    relative to the user's home (a shorter path walk); `_stat`'s rule for a `.git` folder
    where a name is one."""
    values = array("q")
    put, stat_at = values.extend, os.stat
    try:
        where: int | None = os.open(user, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        where = None
    try:
        for name in names:
            if name == ".git" or name.endswith("/.git") or where is None:
                seen = _stat(name if os.path.isabs(name) else os.path.join(user, name))
                put(seen if seen is not None else (-1, -1, -1, -1, -1))
                continue
            try:
                st = stat_at(name, dir_fd=where)
            except OSError:
                put((-1, -1, -1, -1, -1))
                continue
            put((st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns))
    finally:
        if where is not None:
            os.close(where)
    newest = max(max(values[2::5], default=0), max(values[4::5], default=0))
    return [blake2b(values.tobytes(), digest_size=20).hexdigest(), newest]


def _core(git_dir: Path) -> dict[str, str]:
    """core.bare and core.worktree as GIT_DIR/config sets them (lower-cased names; the
    last value wins, as in git)."""
    out: dict[str, str] = {}
    section = ""
    try:
        text = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line[1:line.find("]")].strip().lower() if "]" in line else ""
        elif section == "core" and "=" in line:
            name, _, value = line.partition("=")
            out[name.strip().lower()] = value.split(" #")[0].split(" ;")[0].strip().strip('"')
    return out


def _detached_trees(home: Path, user: Path) -> list[_HomeTree]:
    """The work trees that hold HOME by a git dir kept apart in the user's home
    (`bare_candidates`): the one its core.worktree names, or, for a bare repository
    with an index (one used with `--work-tree`, as a dotfiles alias does), the user's
    home. No `.git` folder above the home shows them to `_home_tree`."""
    out: list[_HomeTree] = []
    for name in bare_candidates(user):
        git_dir = Path(name)
        core = _core(git_dir)
        if core.get("worktree"):
            try:
                top = (git_dir / os.path.expanduser(core["worktree"])).resolve()
            except (OSError, RuntimeError):
                continue
        elif _alias_bare(git_dir, core):
            sample = _tracked_sample(git_dir, user)
            if sample and not any(os.path.lexists(p) for p in sample):
                continue  # a deploy repo (`--work-tree=/srv/site`): its files are not here
            top = user
        else:
            continue
        if top == home or top in home.parents:
            repo = gitio.RepoInfo(toplevel=top, git_dir=git_dir, common_dir=git_dir)
            out.append(_HomeTree(repo, _prefix(home, top), True, detached=True))
    return out


def _alias_bare(git_dir: Path, core: dict[str, str]) -> bool:
    """A bare repository with an index and no core.worktree: used with `--work-tree`,
    the user's home's (a dotfiles alias) when files it tracks are there."""
    return (not core.get("worktree") and core.get("bare", "").lower() in (
        "true", "yes", "on", "1") and (git_dir / "index").is_file())


_SAMPLES: dict[tuple[str, tuple[int, ...]], list[str]] = {}


def _tracked_sample(git_dir: Path, user: Path) -> list[str]:
    """Up to 8 of the paths GIT_DIR's index tracks, as under the user's home (one `git
    ls-files`, once a process per index state; made when a verdict is, kept in it as
    deps): none of them there, the repository's work tree is elsewhere."""
    key = (str(git_dir), tuple(_stat(git_dir / "index") or ()))
    if key not in _SAMPLES:
        proc = gitio.run(["--git-dir", str(git_dir), "ls-files", "-z"], cwd=user,
                         check=False, elsewhere=True)
        names = proc.stdout.split("\0")[:8] if proc.returncode == 0 else []
        _SAMPLES[key] = [os.path.join(str(user), n) for n in names if n]
    return _SAMPLES[key]


def _linked_parts(home: Path) -> list[tuple[Path, Path]]:
    """The parts of the home that are symbolic links (its own entries, and those of
    outbox/ and index/), with where each leads: git sees their files there."""
    out: list[tuple[Path, Path]] = []
    for folder in (home, home / "outbox", home / "index"):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                link = Path(entry.path)
                try:
                    out.append((link, link.resolve()))
                except (OSError, RuntimeError):
                    continue
    return out


def _prefix(home: Path, top: Path) -> str:
    rel = home.relative_to(top)
    return "" if rel == Path(".") else f"{rel.as_posix()}/"


@dataclass(frozen=True)
class HomeCheck:
    """Where the home stands with git (`home_check`): the top of the work tree that
    holds it (None: none does); the exclude line that would ignore it there when git
    would commit it (None: it would not); whether that work tree is the home's own
    repository (allowed); and the fix to print for an exposed home."""

    work_tree: Path | None
    line: str | None
    own: bool = False
    fix: str = ""
    repo: gitio.RepoInfo | None = field(default=None, repr=False, compare=False)
    where: str = ""  # what git would commit: "the git-memex home H" or a link of it

    def problem(self) -> str:
        """The one sentence an exposed home is refused with (commands, doctor)."""
        return (f"{self.where} is inside the work tree of {self.work_tree} and git does "
                "not ignore it: `git add -A` would commit your personal memories and "
                "usage log")


def home_check(ws: Workspace) -> HomeCheck:
    """Whether git would commit the home. It lies inside a work tree (this repo's, a
    nested repository's or a submodule's, or another repository's: `_home_tree`) and git
    does not ignore all of it: every file the home may hold (`_HOME_PROBES`) is ignored,
    and no file in it, of any name, is tracked or left to `git add`. A dotfiles repo
    whose work tree is $HOME is the usual case: `git add -A` would commit personal
    memories. A repository whose top is the home and that holds nothing else
    (`_HOME_OWN`), not the one the command runs in, is the home's own: allowed (a
    person versions or syncs personal memories there; docs/decisions.md)."""
    where = f"the git-memex home {ws.home}"
    tree = _home_tree(ws)
    found = HomeCheck(None, None, where=where)
    for apart in _apart_from(ws, tree):  # a bare dotfiles repository's work tree
        line = _exposed(apart)
        if line:
            return HomeCheck(apart.repo.toplevel, line, fix=_fix(apart, line),
                             repo=apart.repo, where=where)
        found = HomeCheck(apart.repo.toplevel, None, repo=apart.repo, where=where)
    if tree is not None:
        top = tree.repo.toplevel
        if not tree.prefix and tree.elsewhere and _holds_only_the_home(tree):
            found = HomeCheck(top, None, own=True, repo=tree.repo, where=where)
        else:
            line = _exposed(tree)
            found = HomeCheck(top, line, fix=_fix(tree, line) if line else "",
                              repo=tree.repo, where=where)
            if line:
                return found
    for link, target in _linked_parts(ws.home):
        part = _home_tree(ws, target, _LINKED_PROBES)
        if part is None:
            continue
        line = _exposed(part)
        if line:
            return HomeCheck(part.repo.toplevel, line, fix=_fix(part, line), repo=part.repo,
                             where=f"{link}, a link to {target},")
    return found


def _apart_from(ws: Workspace, tree: _HomeTree | None) -> list[_HomeTree]:
    """`_detached_trees` of the home that no nearer work tree hides (git's `add -A` in
    the outer one passes over a folder holding a repository of its own)."""
    user = _user_home()
    try:
        home = ws.home.resolve()
    except (OSError, RuntimeError):
        return []
    if user is None or (user != home and user not in home.parents) or ".git" in home.parts:
        return []
    nearer = tree.repo.toplevel.resolve() if tree is not None else None
    return [apart for apart in _detached_trees(home, user)
            if nearer is None or apart.repo.toplevel not in nearer.parents]


def _exposed(tree: _HomeTree) -> str | None:
    prefix = tree.prefix
    line = f"/{_gitignore_escape(prefix)}" if prefix else "/*"
    probes = [f"{prefix}{name}" for name in tree.names]
    proc = tree.git(["check-ignore", "--", *probes])
    if proc.returncode != 0 or len(proc.stdout.splitlines()) != len(probes):
        return line
    return line if prefix and _home_files(tree) else None


def _holds_only_the_home(tree: _HomeTree) -> bool:
    """Whether the repository at the home's top tracks or would add nothing but the
    home's own files (`_HOME_OWN`)."""
    spec = [f":(exclude,glob){name}" for name in _HOME_OWN]
    spec += [f":(exclude,glob){name}/**" for name in _HOME_OWN]
    proc = tree.git(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                     ".", *spec])
    return proc.returncode == 0 and not proc.stdout.strip("\0")


def _gitignore_escape(path: str) -> str:
    """PATH as a literal gitignore pattern: its glob characters and backslashes escaped
    (`my[1]home/` would otherwise be a character class)."""
    return re.sub(r"([\\*?\[])", r"\\\1", path)


def _home_files(tree: _HomeTree, tracked_only: bool = False) -> list[str]:
    """The home's files git tracks or would add (`git add -A`), relative to the top of
    the work tree that holds it."""
    if not tree.prefix:
        return []
    which = ["--cached"] if tracked_only else ["--cached", "--others", "--exclude-standard"]
    proc = tree.git(["ls-files", "-z", *which, "--", tree.prefix])
    return [p for p in proc.stdout.split("\0") if p] if proc.returncode == 0 else []


def _fix(tree: _HomeTree, line: str) -> str:
    """What to do about an exposed home: the exclude line, and `git rm -r --cached` of
    it when git already tracks some of its files (an exclude line does not untrack)."""
    top = tree.repo.toplevel
    exclude = tree.repo.common_dir / "info" / "exclude"
    fix = f"Add this line to {exclude} (or to .gitignore): {line}"
    if line != "/*" and _home_files(tree, tracked_only=True):
        import shlex  # this message only (~0.3 ms of every process)

        git = " ".join(shlex.quote(arg) for arg in ["git", "-C", str(top), *tree.where()])
        fix += (f"  and untrack it: {git} rm -r "
                f"--cached -- {shlex.quote(tree.prefix.rstrip('/'))}")
    return fix


def check_home(ws: Workspace) -> None:
    """Refuse a home git would commit (issue 14.6); the message holds the fix. A home
    found safe in a work tree is not asked again until something its verdict rests on
    changes (`_HomeVerdict`): a command that repeats runs no git process for it."""
    verdict = _HomeVerdict(ws)
    if verdict.holds():
        return
    found = home_check(ws)
    if found.line is None:
        verdict.keep(found)
        return
    raise MemexError(f"{found.problem()}. {found.fix}  "
                     "(or set GIT_MEMEX_HOME to a folder outside the repository)")


# Git's variables that say who runs git and how, never where a repository or its
# config is: not in a verdict's key (a hook gets them, a merge's differ every time).
_NOT_WHERE = frozenset({
    "GIT_REFLOG_ACTION", "GIT_EXEC_PATH", "GIT_PREFIX", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_PAGER", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"})


class _HomeVerdict:
    """A home's passed check, kept in `$GIT_MEMEX_HOME/index/.home-check` (the home is
    ignored where it lies, its index/ with it: `_HOME_PROBES`), with what it rests on: the
    home and the current repository, git's environment, and the stat (inode, size,
    mtime, mode, ctime: an edit that sets the mtime back still changes the ctime) of
    every file that changes what git ignores or tracks there: the index, the
    exclude file, every config file git reads there (and each file one includes), the
    global excludes file,
    each .gitignore from the work tree's top down to the home and in its folders, and
    each `.git` between the home and that top (a repository made nearer the home), and
    for the home's own repository the home folder (a file added at its top). Any
    of them changed, or changed in the same clock tick as the check (a racy stat, as
    git's own index treats it): the check runs again. Not used when GIT_DIR,
    GIT_INDEX_FILE or GIT_WORK_TREE is set (a commit hook sets GIT_INDEX_FILE: the
    commit's own index is what counts there); a hook that sets none of them
    (post-checkout, post-merge) may use it, made and kept under its own key (every GIT_*
    variable is in the key). Nor used for a home
    with a part that is a link (`_linked_parts`: where it leads is asked every time)."""

    NAME = ".home-check"

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.path = ws.home / "index" / self.NAME
        self.started = _now_ns()
        try:
            self.home = str(ws.home.resolve())
        except (OSError, RuntimeError):
            self.home = ""
        env = sorted((k, v) for k, v in os.environ.items()
                     if k.startswith("GIT_") and k not in _NOT_WHERE
                     or k in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"))
        current = str(ws.repo.toplevel) if ws.repo is not None else ""
        self.key = sha256(repr((5, self.home, current, env)).encode()).hexdigest()
        self.user = _user_home() if self.home else None
        self.usable = bool(self.home) and not any(
            k in os.environ for k in ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE"))

    def holds(self) -> bool:
        if not self.usable or _linked_parts(Path(self.home)):
            return False
        try:
            kept = json.loads(self._read())
            if kept.get("key") != self.key:
                return False
            at, deps = int(kept["at"]), kept["deps"]
            names = {name for name, _ in deps}
            if not 0 < at <= self.started or not (
                    any(os.path.basename(name) == "index" for name in names)
                    or set(self._chain()) <= names):
                return False  # made later than now, or resting on no index (in a work
                # tree) nor on every .git above the home (in none): not ours
            for name, seen in deps:
                now = _stat(name)
                if now != seen or (now is not None and max(now[2], now[4]) >= at):
                    return False
            self._rekeep: list[list[Any]] | None = None
            if not self._same_bare(kept["bare"], at):
                return False
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return False
        if self._rekeep is not None:  # the same git dirs found again: kept with new stats
            self._write(deps, [self._rekeep, kept["bare"][1]])
        return True

    def _same_bare(self, kept: list[Any], at: int) -> bool:
        """Whether the user's home holds the git dirs kept apart it held at the check
        (`bare_candidates`): asked again only when a folder the scan looked into or at
        changed (`_scan_bare`), a scan with no git process; the same found, the verdict
        is kept again with the new stats (not rescanned by every later command)."""
        looked, names = kept
        if self.user is None:
            return looked is None
        if looked:
            digest, newest = _looked_digest(self.user, looked[0])
            if digest == looked[1][0] and newest < at:
                return True
        found, where = _scan_bare(self.user)
        if names != found:
            return False
        self._rekeep = _looked_record(self.user, where)
        return True

    def _read(self) -> str:
        """The kept verdict's text, from a regular file of this user's that no one else
        may write (a link is not followed); else ValueError."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, encoding="utf-8") as kept:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid()
                    or st.st_mode & 0o022):
                raise ValueError("not a verdict of this user's")
            return kept.read(1 << 24)

    def keep(self, found: HomeCheck) -> None:
        if not self.usable or not self.ws.home.is_dir():
            return
        if not self.path.parent.is_dir():  # made now, kept from the next check on (the
            with contextlib.suppress(OSError):  # home's own stat changes as it is made)
                self.path.parent.mkdir()
            return
        rests_on = (self._chain() if found.repo is None
                    else map(str, self._deps(found.repo, found.own)))
        deps: list[Any] = [(p, _stat(p)) for p in rests_on]
        bare, looked = _scan_bare(self.user) if self.user is not None else ([], [])
        deps += [(str(p), _stat(p)) for name in bare  # each one's: the last found is not
                 for p in (Path(name) / "config", Path(name) / "index",  # the only one
                           Path(name) / "info" / "exclude")]
        deps += [(p, _stat(p)) for name in bare if _alias_bare(Path(name), _core(Path(name)))
                 for p in _tracked_sample(Path(name), self.user or Path(name))]
        self._write(deps, [_looked_record(self.user, looked)
                           if self.user is not None else None, bare])

    def _write(self, deps: list[Any], bare: list[Any]) -> None:
        text = json.dumps({"key": self.key, "at": self.started, "deps": deps, "bare": bare})
        with contextlib.suppress(OSError):  # mode 0600, whatever the umask
            atomic.replace(self.path, text.encode("utf-8"))

    def _chain(self) -> list[str]:
        """What a home in no work tree rests on: each `.git` from it up to the root
        (one made there would hold it)."""
        out, folder = [], self.home
        while True:
            out.append(os.path.join(folder, ".git"))
            parent = os.path.dirname(folder)
            if parent == folder:
                return out
            folder = parent

    def _deps(self, repo: gitio.RepoInfo, own: bool) -> list[Path]:
        home = Path(self.home)
        top = repo.toplevel.resolve()
        deps = [repo.git_dir / "index", repo.common_dir / "info" / "exclude",
                repo.common_dir / "config", top / ".git", *([home] if own else [])]
        folder = home
        while folder != top and top in folder.parents:
            deps.append(folder / ".git")
            folder = folder.parent
        rel = home.relative_to(top).parts if top in (home, *home.parents) else ()
        folder = top
        deps.append(folder / ".gitignore")
        for part in rel:
            folder = folder / part
            deps.append(folder / ".gitignore")
        deps += [home / sub / ".gitignore" for sub in ("personal", "outbox", "index")]
        deps += _global_git_files(repo)
        return deps


def _global_git_files(repo: gitio.RepoInfo) -> list[Path]:
    """The config files git reads for REPO (system, global, the repository's, and every
    file they include, `[include]` or `[includeIf]`, read or not; the repository's HEAD
    when an include applies by branch, `onbranch:`), the global files by
    name (one made later is read too), and the excludes file: one `git config --list
    --show-origin`, run when a verdict is made, never when one is reused."""
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                              ".config")
    files = [Path(os.environ.get("GIT_CONFIG_GLOBAL") or os.path.expanduser("~/.gitconfig")),
             Path(xdg) / "git" / "config", Path(os.environ.get("GIT_CONFIG_SYSTEM") or
                                                "/etc/gitconfig")]
    top = repo.toplevel  # its git dir named: a dotfiles one kept apart has no .git here
    proc = gitio.run(["--git-dir", str(repo.git_dir), "config", "-z", "--list",
                      "--show-origin"], cwd=top, check=False, elsewhere=True)
    excludes = ""
    items = proc.stdout.split("\0") if proc.returncode == 0 else []
    for origin, entry in zip(items[::2], items[1::2], strict=False):  # a trailing ""
        if not origin.startswith("file:"):
            continue
        source = top / origin[5:]
        if source not in files:
            files.append(source)
        key, _, value = entry.partition("\n")
        key = key.lower()
        if key == "core.excludesfile":
            excludes = value
        elif key == "include.path" or (key.startswith("includeif.") and
                                       key.endswith(".path")):
            files.append(source.parent / os.path.expanduser(value))
            if key.startswith("includeif.onbranch:"):  # applies by the branch checked out
                files.append(repo.git_dir / "HEAD")
    files.append(top / os.path.expanduser(excludes) if excludes
                 else Path(xdg) / "git" / "ignore")
    return files


def _now_ns() -> int:
    return time.time_ns()


def _stat(path: Path | str) -> list[int] | None:
    """What a kept verdict compares of a file it rests on (None: there is none). Of a
    `.git` folder only that it is one (git writes files in it all day: a commit's
    COMMIT_EDITMSG, a fetch's FETCH_HEAD); a `.git` file (a link elsewhere) is a file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if os.path.basename(path) == ".git" and stat.S_ISDIR(st.st_mode):
        return [st.st_ino, 0, 0, st.st_mode, 0]
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode, st.st_ctime_ns]


def workspace(cwd: Path | None = None, home: Path | None = None,
              allow_missing_git: bool = False, home_check: bool = True) -> Workspace:
    """The workspace of a command run in `cwd`. Inside a repository without a git binary
    this raises GitMissing, unless the caller (doctor) reports that itself. A home that
    git would commit is refused (check_home) unless home_check is False (doctor)."""
    start = (cwd or Path.cwd()).resolve()
    if gitio.git_binary() is None and not allow_missing_git:
        marker = next((d for d in (start, *start.parents) if (d / ".git").exists()), None)
        if marker is not None:
            # Never silently treat a repo as "no repo": scopes and homes would change.
            raise gitio.GitMissing(
                f"git is not installed or not on PATH, and {marker} is a git repository; "
                "git-memex needs git there (install git or fix PATH)")
    repo, config = gitio.discover_config(start)
    team: dict[str, str] = {}
    if repo is not None:
        team = gitio.config_map(repo.toplevel, repo.toplevel / MEMEXCONFIG)
        origin = gitio.origin_url(config)
        rid = repo_id_for(origin, repo.toplevel)
        remember_repo_id(repo, rid, f"origin {normalise_url(origin)}" if origin else
                         f"path {repo.toplevel.resolve()}")
    else:
        rid = repo_id_for(None, start)
    ws = Workspace(
        cwd=start, home=home or memex_home(), repo=repo, repo_id=rid, config=config,
        team_config=team,
    )
    if home_check:
        check_home(ws)
    return ws
