"""Git access: the one choke point for git, always the real git binary.

Reads (discovery, config, status, conflict stages, blobs in one `cat-file --batch`)
cost a subprocess of a few ms, less than importing pygit2 (docs/decisions.md,
bench/staged_reads.py); writes (commit, fetch, merge-file) go through the binary so
the user's hooks, signing and credentials apply.
"""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memex.core.errors import MemexError
from memex.storage import configfile, iostep

if TYPE_CHECKING:
    import subprocess


class GitError(MemexError):
    """The git binary failed; carries its stderr."""


class GitMissing(MemexError):
    """git is not installed or not on PATH."""


@functools.lru_cache(maxsize=1)
def git_binary() -> str | None:
    """The git on PATH: shutil.which("git"). On POSIX its lookup is made here, as
    shutil.which makes it: every whole process asks this, and importing shutil loads
    bz2, lzma and zlib (~2 ms of a ~0.14 s search)."""
    if os.name != "posix":
        import shutil

        return shutil.which("git")
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return None
    seen = set()
    for folder in os.fsdecode(path).split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        name = os.path.join(folder, "git")
        if (os.path.exists(name) and os.access(name, os.F_OK | os.X_OK)
                and not os.path.isdir(name)):
            return name
    return None


# What points git at one repository (`git rev-parse --local-env-vars`, as a hook's git
# sets GIT_DIR and GIT_INDEX_FILE): dropped to ask about another repository.
_LOCAL_ENV = frozenset({
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR"})


def run(
    args: list[str], cwd: Path | str | None = None, check: bool = True,
    input_text: str | None = None, env: dict[str, str] | None = None,
    elsewhere: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run `git ARGS`; raises GitError with git's message when check and it fails.
    ELSEWHERE: git finds the repository from CWD alone, whatever repository this
    process's environment points at (`_LOCAL_ENV`)."""
    binary = git_binary()
    if binary is None:
        raise GitMissing("git is not installed (or not on PATH); git-memex needs it for this")
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    if elsewhere:
        full_env = {k: v for k, v in (full_env or os.environ).items() if k not in _LOCAL_ENV}
    import subprocess  # not at the top: a search's one git process needs none (_Started)

    proc = subprocess.run(
        [binary, *args], cwd=cwd, capture_output=True, text=True, input=input_text,
        env=full_env, encoding="utf-8", errors="replace",
        stdin=None if input_text is not None else subprocess.DEVNULL,
    )
    if check and proc.returncode != 0:
        message = (proc.stderr or proc.stdout).strip() or f"git {' '.join(args)} failed"
        raise GitError(message)
    return proc


def run_bytes(args: list[str], cwd: Path | str) -> bytes | None:
    """`git ARGS`'s exact stdout bytes (a blob), or None when git fails."""
    binary = git_binary()
    if binary is None:
        return None
    import subprocess

    proc = subprocess.run([binary, *args], cwd=cwd, capture_output=True,
                          stdin=subprocess.DEVNULL)
    return proc.stdout if proc.returncode == 0 else None


@dataclass(frozen=True)
class RepoInfo:
    """Where a repository is: its work tree, its git dir and the common dir of its worktrees."""

    toplevel: Path
    git_dir: Path
    common_dir: Path


def discover(start: Path, elsewhere: bool = False) -> RepoInfo | None:
    """The repository containing `start`, or None (also when git is missing); ELSEWHERE
    as `run` takes it."""
    if git_binary() is None:
        return None
    proc = run(
        ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir",
         "--git-common-dir"],
        cwd=start, check=False, elsewhere=elsewhere,
    )
    if proc.returncode != 0:
        return None
    lines = proc.stdout.splitlines()
    if len(lines) < 3 or not lines[0]:
        return None  # a bare repository or inside .git: no working tree
    return RepoInfo(Path(lines[0]), Path(lines[1]), Path(lines[2]))


# Environment that changes how git finds the repository, or what it traces: with any of
# these set, discover_config asks git the long way (rev-parse) as discover does.
_DISCOVERY_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                  "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_TRACE")
_SETUP_TRACE = {"GIT_TRACE_SETUP": "2", "GIT_TRACE_BARE": "1"}


def discover_config(start: Path) -> tuple[RepoInfo | None, dict[str, str]]:
    """(discover(start), config_map(start)) from one git process where it can.

    `git config --list` finds the repository as rev-parse does, and GIT_TRACE_SETUP
    (git(1)) makes it print what it found on stderr. Only the plain case is taken from
    that trace: a checkout whose git dir is `.git` in its top folder, nothing in the
    environment that steers discovery. Anything else (outside a repository, linked
    worktrees, submodules, bare repositories, GIT_DIR and friends, a trace this does not
    recognise) is answered by discover()'s rev-parse, so the result is always git's."""
    if git_binary() is None:
        return None, {}
    if any(key.startswith(_DISCOVERY_ENV) for key in os.environ):
        return discover(start), config_map(start)
    taken = _taken(start)
    if taken is None:
        proc = run(["config", "--null", "--list"], cwd=start, check=False, env=_SETUP_TRACE)
        taken = (proc.returncode, proc.stdout, proc.stderr)
    code, out, err = taken
    config = _config_records(out) if code == 0 else {}
    repo = _plain_checkout(err) if code == 0 else None
    return (repo if repo is not None else discover(start)), config


# discover_config's git process started ahead (config_ahead): {start folder: (the
# environment it was started in, the process)}.
_AHEAD: dict[Path, tuple[dict[str, str], _Started]] = {}


class _Started:
    """A git process config_ahead started: stdin /dev/null, stdout and stderr read
    whole as text (UTF-8, undecodable bytes replaced, universal newlines), as
    subprocess.Popen(text=True) reads them. Started by os.posix_spawn where the platform
    has it and the standard streams are open: that answer is all the git a search
    needs, and importing subprocess costs a whole process ~3 ms (locale, signal,
    selectors). posix_spawn has no working folder: git runs as `git -C START`, git's
    own chdir before anything else (START is the resolved current folder, so a
    relative git path means the same). The signals subprocess puts back to their
    default in the child (Python ignores SIGPIPE and SIGXFSZ) are put back too."""

    def __init__(self, argv: list[str], start: Path, env: dict[str, str]) -> None:
        self._popen: subprocess.Popen[str] | None = None
        self._pid = 0
        self._fds: list[int] = []
        if not hasattr(os, "posix_spawn") or not _std_fds_open():
            import subprocess

            self._popen = subprocess.Popen(
                argv, cwd=start, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace")
            return
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            null = os.open(os.devnull, os.O_RDONLY)
            try:
                self._pid = os.posix_spawn(
                    argv[0], [argv[0], "-C", str(start), *argv[1:]], env,
                    file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                  (os.POSIX_SPAWN_DUP2, out_w, 1),
                                  (os.POSIX_SPAWN_DUP2, err_w, 2)],
                    setsigdef=_RESTORED_SIGNALS)
            finally:
                os.close(null)
        except BaseException:
            os.close(out_r)
            os.close(err_r)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        self._fds = [out_r, err_r]

    def communicate(self) -> tuple[int, str, str]:
        """(exit status, stdout, stderr) once the process has ended."""
        if self._popen is not None:
            out, err = self._popen.communicate()
            return self._popen.returncode, out, err
        import select

        read: dict[int, list[bytes]] = {fd: [] for fd in self._fds}
        poller = select.poll()
        for fd in self._fds:
            poller.register(fd, select.POLLIN)
        left = len(self._fds)
        try:
            while left:
                for fd, _ in poller.poll():
                    data = os.read(fd, 65536)
                    if data:
                        read[fd].append(data)
                    else:
                        poller.unregister(fd)
                        left -= 1
        finally:
            for fd in self._fds:
                os.close(fd)
        try:
            code = os.waitstatus_to_exitcode(os.waitpid(self._pid, 0)[1])
        except ChildProcessError:  # reaped already (SIGCHLD ignored): 0, as Popen says
            code = 0
        out, err = (_text(b"".join(read[fd])) for fd in self._fds)
        return code, out, err


def _std_fds_open() -> bool:
    """Whether fds 0-2 are open (else a pipe could be one of them: Popen's case)."""
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return False
    return True


def _text(data: bytes) -> str:
    """A stream's bytes as Popen(text=True, encoding="utf-8", errors="replace") reads them."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")


# The signals subprocess's restore_signals puts back to their default in a child, by
# number: _signal (loaded with the interpreter) has them without the signal module's
# enums (~0.6 ms to import).
try:
    import _signal as _signals  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - an interpreter without it
    import signal as _signals
_RESTORED_SIGNALS = tuple(getattr(_signals, name) for name in ("SIGPIPE", "SIGXFZ", "SIGXFSZ")
                          if hasattr(_signals, name))


def config_ahead() -> None:
    """Start the git process discover_config(the current folder) runs, now: a whole
    process's fast path calls this before importing the rest, so git runs beside those
    imports. The next discover_config of that folder takes its answer if the
    environment is still the one it was started in (else it runs git again)."""
    try:
        start = Path.cwd().resolve()
    except OSError:
        return
    binary = git_binary()
    if binary is None or start in _AHEAD or \
            any(key.startswith(_DISCOVERY_ENV) for key in os.environ):
        return
    environ = dict(os.environ)
    try:
        proc = _Started([binary, "config", "--null", "--list"], start,
                        {**environ, **_SETUP_TRACE})
    except OSError:
        return
    _AHEAD[start] = (environ, proc)


def _taken(start: Path) -> tuple[int, str, str] | None:
    """(exit status, stdout, stderr) of the git process config_ahead started for
    START, if its answer still holds."""
    ahead = _AHEAD.pop(start, None)
    if ahead is None:
        return None
    environ, proc = ahead
    answer = proc.communicate()
    if environ != dict(os.environ):
        return None
    return answer


def _plain_checkout(trace: str) -> RepoInfo | None:
    """The checkout GIT_TRACE_SETUP names when it is plain (see discover_config)."""
    seen: dict[str, str] = {}
    for line in trace.splitlines():
        key, sep, value = line.removeprefix("setup: ").partition(": ")
        if line.startswith("setup: ") and sep:
            if key in seen:
                return None
            seen[key] = value
    top = seen.get("worktree", "")
    if (seen.get("git_dir") != ".git" or seen.get("git_common_dir") != ".git"
            or seen.get("cwd") != top or not os.path.isabs(top) or "\\" in top):
        return None
    return RepoInfo(Path(top), Path(top) / ".git", Path(top) / ".git")


def config_map(cwd: Path | None, file: Path | None = None) -> dict[str, str]:
    """All git config values visible at `cwd` (or in `file`), keys lower-cased."""
    if git_binary() is None:
        return {}
    args = ["config", "--null", "--list"]
    if file is not None:
        if not file.is_file():
            return {}
        plain = configfile.read(file)  # the file git-memex writes, without a git process
        if plain is not None:
            return plain
        args = ["config", "--null", "--file", str(file), "--list"]
    proc = run(args, cwd=cwd, check=False)
    return _config_records(proc.stdout) if proc.returncode == 0 else {}


def _config_records(listing: str) -> dict[str, str]:
    """`git config --null --list` output as {key: value}, keys lower-cased, last wins."""
    out: dict[str, str] = {}
    for record in listing.split("\0"):
        if not record:
            continue
        key, _, value = record.partition("\n")
        out[key.lower()] = value
    return out


def origin_url(config: dict[str, str]) -> str | None:
    return config.get("remote.origin.url")


# ---------------------------------------------------------------- the team flow's git steps


def _line(proc: subprocess.CompletedProcess[str]) -> str | None:
    """The first line a successful git printed, or None."""
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


def current_branch(toplevel: Path) -> str | None:
    """The checked-out branch's short name; None on a detached HEAD."""
    proc = run(["symbolic-ref", "--quiet", "--short", "HEAD"], cwd=toplevel, check=False)
    return _line(proc)


def rev_parse(toplevel: Path, ref: str) -> str | None:
    proc = run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=toplevel,
               check=False)
    return _line(proc)


def is_ancestor(toplevel: Path, ancestor: str, descendant: str) -> bool:
    proc = run(["merge-base", "--is-ancestor", ancestor, descendant], cwd=toplevel, check=False)
    return proc.returncode == 0


def operation_in_progress(repo: RepoInfo) -> str | None:
    """A merge, rebase, cherry-pick, revert or bisect under way, in words, or None."""
    state = merge_state(repo.git_dir)
    if state == "rebase" and (repo.git_dir / "rebase-apply").is_dir():
        return "a rebase or am"
    if state is not None:
        return f"a {state}"
    return "a bisect" if (repo.git_dir / "BISECT_LOG").exists() else None


def sequencer_state(repo: RepoInfo) -> str | None:
    """'rebase', 'merge', 'cherry-pick', 'revert' or 'am' when one is under way, else None:
    the states whose `--abort` puts the working tree back and so throws away writes."""
    state = merge_state(repo.git_dir)
    if state == "rebase" and (repo.git_dir / "rebase-apply" / "applying").exists():
        return "am"
    return state


def blob_ids(toplevel: Path, ref: str, paths: list[str]) -> dict[str, str]:
    """path -> blob id at `ref` for those of `paths` that exist there (one `ls-tree`)."""
    if not paths:
        return {}
    proc = run(["ls-tree", "-z", "--full-tree", ref, "--", *paths], cwd=toplevel, check=False)
    out: dict[str, str] = {}
    for record in proc.stdout.split("\0"):
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if path and len(parts) == 3 and parts[1] == "blob":
            out[path] = parts[2]
    return out


def same_content(toplevel: Path, local: str, upstream: str, paths: list[str]) -> set[str]:
    """Those of `paths` whose blob at `local` is byte for byte one that `upstream` holds:
    at its tip, or at any point of its history of that path (a teammate may have edited
    the file since the merge). The one test of "the same content is there" that
    pr-status and pull use to see squash and rebase merges (same blob id)."""
    mine = blob_ids(toplevel, local, paths)
    there = blob_ids(toplevel, upstream, paths)
    out = {p for p, oid in mine.items() if there.get(p) == oid}
    rest = [p for p in mine if p not in out]
    if rest:
        log = run(["log", "--format=", "--raw", "--no-abbrev", "--no-renames", upstream, "--",
                   *rest], cwd=toplevel, check=False).stdout
        seen: dict[str, set[str]] = {}
        for line in log.splitlines():
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if line.startswith(":") and len(parts) >= 4:
                seen.setdefault(path, set()).add(parts[3])
        out |= {p for p in rest if mine[p] in seen.get(p, set())}
    return out


BASE_KEY = "memexBase"


def branch_base(toplevel: Path, branch: str, onto: str | None) -> str | None:
    """Where `branch` started: `branch.<name>.memexBase` (recorded by `submit --branch`),
    else `git merge-base --fork-point ONTO BRANCH`; None when git cannot say."""
    recorded = run(["config", "--get", f"branch.{branch}.{BASE_KEY}"], cwd=toplevel,
                   check=False).stdout.strip()
    if recorded and rev_parse(toplevel, recorded):
        return rev_parse(toplevel, recorded)
    if onto is None:
        return None
    return _line(run(["merge-base", "--fork-point", onto, branch], cwd=toplevel, check=False))


def remotes(toplevel: Path) -> list[str]:
    """The names of the configured remotes (`git remote`)."""
    return run(["remote"], cwd=toplevel, check=False).stdout.split()


def upstream(toplevel: Path) -> str | None:
    """The current branch's upstream as `remote/branch`, or None."""
    proc = run(["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"],
               cwd=toplevel, check=False)
    return _line(proc)


def remote_default_branch(toplevel: Path, remote: str = "origin") -> str | None:
    """`origin/main`: what refs/remotes/origin/HEAD points at, else main or master."""
    proc = run(["symbolic-ref", "--quiet", "--short", f"refs/remotes/{remote}/HEAD"],
               cwd=toplevel, check=False)
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout.strip()
    for name in ("main", "master"):
        if rev_parse(toplevel, f"refs/remotes/{remote}/{name}"):
            return f"{remote}/{name}"
    return None


def show_blob(toplevel: Path, ref: str, path: str) -> str | None:
    """The text of `path` at `ref`, or None when it is not there."""
    proc = run(["show", f"{ref}:{path}"], cwd=toplevel, check=False)
    return proc.stdout if proc.returncode == 0 else None


def read_blobs(toplevel: Path, specs: list[str]) -> dict[str, str | None]:
    """Many `REF:PATH` texts in one `git cat-file --batch` (None: not there)."""
    raw = read_blob_bytes(toplevel, specs)
    return {spec: None if data is None else data.decode("utf-8", errors="replace")
            for spec, data in raw.items()}


def read_blob_bytes(toplevel: Path, specs: list[str]) -> dict[str, bytes | None]:
    """Many `REF:PATH` (or blob id) contents as bytes in one `git cat-file --batch`."""
    binary = git_binary()
    if binary is None:
        raise GitMissing("git is not installed (or not on PATH); git-memex needs it for this")
    if not specs:
        return {}
    import subprocess

    proc = subprocess.run([binary, "cat-file", "--batch"], cwd=toplevel, capture_output=True,
                          input="".join(f"{s}\n" for s in specs).encode("utf-8"))
    out: dict[str, bytes | None] = {}
    data, pos = proc.stdout, 0
    for spec in specs:
        end = data.find(b"\n", pos)
        if end == -1:
            out[spec] = None
            continue
        header = data[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[1] != b"blob":
            out[spec] = None
            if len(header) == 3:  # a tree or commit: skip its content
                pos += int(header[2]) + 1
            continue
        size = int(header[2])
        out[spec] = data[pos:pos + size]
        pos += size + 1
    return out


def blob_sizes(toplevel: Path, blobs: list[str]) -> dict[str, int]:
    """{blob id: size} in one `git cat-file --batch-check` (missing ids left out)."""
    binary = git_binary()
    if binary is None:
        raise GitMissing("git is not installed (or not on PATH); git-memex needs it for this")
    if not blobs:
        return {}
    import subprocess

    proc = subprocess.run([binary, "cat-file", "--batch-check"], cwd=toplevel,
                          capture_output=True, text=True, input="".join(f"{b}\n" for b in blobs))
    out: dict[str, int] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            out[parts[0]] = int(parts[2])
    return out


# `git diff` arguments that list every file the next commit adds or changes, ids from the
# index (nothing read); githooks hashes this listing's exact bytes in its shell hooks too.
STAGED_LISTING = ("diff", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames",
                  "--diff-filter=ACMT")


def staged_listing(toplevel: Path) -> bytes:
    """`git diff --cached --raw -z ...`'s exact bytes (STAGED_LISTING)."""
    binary = git_binary()
    if binary is None:
        raise GitMissing("git is not installed (or not on PATH); git-memex needs it for this")
    import subprocess

    proc = subprocess.run([binary, *STAGED_LISTING], cwd=toplevel, capture_output=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(message or "git diff --cached failed")
    return proc.stdout


def staged_files(toplevel: Path, listing: bytes | None = None) -> list[tuple[str, str]]:
    """(path, blob id) of every file the next commit adds or changes, whole repo
    (STAGED_LISTING's, or the LISTING already read)."""
    if listing is None:
        listing = staged_listing(toplevel)
    fields = listing.decode("utf-8", "replace").split("\0")
    out: list[tuple[str, str]] = []
    for i in range(0, len(fields) - 1, 2):
        meta, path = fields[i].split(), fields[i + 1]
        if len(meta) >= 4 and meta[1] != "160000":  # skip submodules (gitlinks)
            out.append((path, meta[3]))
    return out


def commit_only(repo: RepoInfo, paths: list[Path], message: str) -> str:
    """Commit exactly `paths` (their working-tree content), whatever else is staged.

    The real binary runs, so the user's hooks, signing and identity apply. New files
    are made known with `add --intent-to-add`; on any failure the index file is put
    back byte for byte, so the user's staging is exactly as before. Returns the sha.
    The message is masked as a write stores a memory (`redact.redact`): it leaves the
    machine with the next push like the files do.
    """
    from memex.core import redact  # only for a commit: its patterns compile for writes

    message = redact.redact(message).text
    top = repo.toplevel
    rel = [str(p.resolve().relative_to(top.resolve())) for p in paths]
    index = repo.git_dir / "index"
    before = index.read_bytes() if index.exists() else None
    try:
        tracked = set(run(["ls-files", "-z", "--", *rel], cwd=top).stdout.split("\0"))
        new = [p for p in rel if p not in tracked]
        if new:
            iostep.step("git add")
            run(["add", "--intent-to-add", "--", *new], cwd=top)
        iostep.step("git commit")
        run(["commit", "--quiet", "--no-edit", "-m", message, "--only", "--", *rel], cwd=top)
    except BaseException:
        _restore_index(index, before)
        raise
    iostep.step("git committed", fails=False)  # a kill point only: the commit is made
    return run(["rev-parse", "HEAD"], cwd=top).stdout.strip()


def _restore_index(index: Path, before: bytes | None) -> None:
    with contextlib.suppress(OSError):
        if before is None:
            index.unlink(missing_ok=True)
        else:
            tmp = index.with_name("index.memex-restore")
            tmp.write_bytes(before)
            os.replace(tmp, index)
# ---------------------------------------------------------------- merges and conflicts


@dataclass(frozen=True)
class TextMerge:
    """What git merge-file made of three texts, and how many conflicts it left."""

    text: str
    conflicts: int


def merge_file(ours: str, base: str, theirs: str, labels: tuple[str, str, str] = (
        "ours", "base", "theirs"), marker_size: int = 7) -> TextMerge:
    """git's own 3-way text merge (`git merge-file -p`); conflicts left as markers."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="git-memex-merge-") as tmp:
        paths = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            path = Path(tmp) / name
            path.write_bytes(text.encode("utf-8"))
            paths.append(str(path))
        args = ["merge-file", "-p", f"--marker-size={marker_size}"]
        for label in labels:
            args += ["-L", label]
        proc = run([*args, *paths], check=False)
    if proc.returncode < 0 or proc.returncode > 127:
        raise GitError((proc.stderr or "").strip() or "git merge-file failed")
    return TextMerge(proc.stdout, proc.returncode)


@dataclass(frozen=True)
class Unmerged:
    """One path with index conflict stages: 1 base, 2 ours, 3 theirs (blob ids)."""

    path: str
    stages: dict[int, str]


def unmerged(toplevel: Path) -> list[Unmerged]:
    """The index's conflicted paths (`git ls-files -u`), repo-relative, in path order."""
    proc = run(["ls-files", "-u", "-z", "--full-name"], cwd=toplevel, check=False)
    if proc.returncode != 0:
        return []
    found: dict[str, dict[int, str]] = {}
    for record in proc.stdout.split("\0"):
        if not record:
            continue
        meta, _, path = record.partition("\t")
        parts = meta.split()
        if len(parts) != 3 or not parts[2].isdigit():
            continue
        found.setdefault(path, {})[int(parts[2])] = parts[1]
    return [Unmerged(path, stages) for path, stages in sorted(found.items())]


def blob_text(toplevel: Path, oid: str) -> str:
    return run(["cat-file", "blob", oid], cwd=toplevel).stdout


def merge_state(git_dir: Path) -> str | None:
    """'merge', 'rebase', 'cherry-pick' or 'revert' when one is in progress, else None."""
    if (git_dir / "rebase-merge").is_dir() or (git_dir / "rebase-apply").is_dir():
        return "rebase"
    for name, state in (("MERGE_HEAD", "merge"), ("CHERRY_PICK_HEAD", "cherry-pick"),
                        ("REVERT_HEAD", "revert")):
        if (git_dir / name).exists():
            return state
    return None


def git_path(cwd: Path, name: str) -> Path:
    """`git rev-parse --git-path NAME` (honours core.hooksPath for 'hooks')."""
    out = run(["rev-parse", "--path-format=absolute", "--git-path", name], cwd=cwd).stdout
    return Path(out.strip())
