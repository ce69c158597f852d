"""Memory files on disk: locate, read, write atomically, delete; quarantine the unreadable.

A "home" is one folder of memory files with a fixed meaning: the personal folder,
this project's outbox of drafts, the repo's shared folder, the org repo's folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memex.core import masking, model, ulid
from memex.core.errors import Ambiguous, InvalidMemory, MemexError, NotFound, UsageError
from memex.core.ulid import is_ulid
from memex.storage import atomic, iostep, journalfile
from memex.storage.homes import Workspace

if TYPE_CHECKING:  # the parser is loaded where a file is read or written, not by a
    # no-change refresh (its 16 patterns cost ~5 ms of a search's start)
    from memex.core import frontmatter
    from memex.core.redact import Redaction

HOME_KINDS = ("personal", "outbox", "repo", "org", "org-outbox")
SCOPE_OF_HOME = {"personal": "personal", "outbox": "project", "repo": "project", "org": "org",
                 "org-outbox": "org"}
_IGNORED_NAMES = frozenset({"readme.md", "index.md", "changelog.md"})
_LONGEST_IGNORED = max(map(len, _IGNORED_NAMES))
LEGACY_REASON = "v1 file: run git memex migrate"


@dataclass(frozen=True)
class Home:
    """A folder memories of one kind live in (repo, outbox, org, org-outbox, personal)."""

    kind: str
    path: Path
    # A repo folder while a killed submit is unsettled (storage.journalfile): {path: its
    # bytes before the submit, None: it did not exist}. Reads answer from these, so
    # they see the pre-submit state until the next writing command settles it.
    before: Mapping[str, bytes | None] = field(default_factory=dict, compare=False,
                                               repr=False)

    @property
    def scope(self) -> str:
        return SCOPE_OF_HOME[self.kind]

    @property
    def in_git(self) -> bool:
        return self.kind in ("repo", "org")

    @property
    def is_outbox(self) -> bool:
        """Drafts waiting for `submit` (the project's or the org's outbox)."""
        return self.kind in ("outbox", "org-outbox")


@dataclass
class Loaded:
    """A memory as read from its file, with what a rewrite needs to keep."""

    memory: model.Memory
    path: Path
    home: Home
    parsed: frontmatter.Parsed | None = None

    @property
    def id(self) -> str:
        return self.memory.id


@dataclass(frozen=True)
class Quarantined:
    """A memory file reads skip, and why."""

    path: Path
    reason: str


def homes(ws: Workspace, scopes: Iterable[str] | None = None) -> list[Home]:
    """The homes visible from this workspace, for the scopes asked (default all)."""
    wanted = set(scopes) if scopes is not None else {"personal", "project", "org"}
    out: list[Home] = []
    # The repo's copy of an id comes first: where an id is both in the repo and in the
    # outbox (an interrupted submit, an import), reads show the reviewed repo copy.
    if "project" in wanted:
        if ws.memory_dir is not None and ws.repo is not None:
            out.append(Home("repo", inside_repo(ws.memory_dir, ws.repo.toplevel),
                            journalfile.before(ws.repo.git_dir)))
        out.append(Home("outbox", ws.outbox_dir))
    if "org" in wanted and ws.org_repo is not None:
        out.append(Home("org", inside_repo(ws.org_repo / ws.memory_dir_name, ws.org_repo),
                        journalfile.before(_git_dir_of(ws.org_repo))))
        out.append(Home("org-outbox", ws.org_outbox_dir))
    if "personal" in wanted:
        out.append(Home("personal", ws.personal_dir))
    return out


# Why a command shows the copy it shows when one id is in several homes (homes() order).
READING_ORDER = ("commands read the first copy in the order repo folder (the reviewed "
                 "copy), outbox, org folder, org outbox, personal")


def copies(ws: Workspace, memory_id: str) -> list[Home]:
    """The homes holding a file for this id, in reading order (the first one wins)."""
    return [h for h in homes(ws) if (h.path / f"{memory_id}.md").is_file()
            and not unsettled(h, h.path / f"{memory_id}.md")]


def duplicate_ids(ws: Workspace) -> dict[str, list[Home]]:
    """{id: homes} for every id that has a file in more than one visible home."""
    seen: dict[str, list[Home]] = {}
    for home in homes(ws):
        created = {Path(p).stem for p, data in home.before.items() if data is None}
        for memory_id in memory_ids(home.path) - created:
            seen.setdefault(memory_id, []).append(home)
    return {i: found for i, found in seen.items() if len(found) > 1}


def in_memory_folder(dir_name: str, rel_path: str) -> bool:
    """Is a repo-relative path (git's spelling) a memory file of the folder `dir_name`?"""
    pure = PurePosixPath(rel_path)
    return pure.parent.as_posix() == PurePosixPath(dir_name).as_posix() and is_memory_name(
        pure.name)


def memory_ids(directory: Path) -> set[str]:
    """The stems of `memory_files(directory)` (the ids their names claim), without
    making a Path of each."""
    return {entry.name[:-3] for entry in _memory_entries(directory)}


def inside_repo(folder: Path, top: Path) -> Path:
    """A repo's memory folder, refused when it resolves outside the repo (a committed
    symlink would make reads take an outside folder as the team's, and writes change
    files there). The repo's own path may go through symlinks."""
    try:
        real = folder.resolve()
        real.relative_to(top.resolve())
    except ValueError:
        raise MemexError(
            f"{folder} is a symbolic link to {real}, outside the repository; git-memex "
            "refuses a memory folder outside the repo: replace the link with a folder") \
            from None
    except (OSError, RuntimeError) as exc:  # a link loop
        raise MemexError(f"{folder} cannot be resolved ({exc}); replace it with a folder") \
            from None
    return folder


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _memory_entries(directory: Path) -> list[os.DirEntry[str]]:
    """The memory files of a folder as directory entries (none when it is missing):
    regular files only; a link inside a home is never followed (see special_files)."""
    return _named_entries(directory)[0]


def _named_entries(directory: Path
                   ) -> tuple[list[os.DirEntry[str]], list[os.DirEntry[str]]]:
    """A folder's entries with a memory file's name, in listing order: the regular
    files, and the others (special_files). Missing or unreadable: none."""
    try:
        entries = list(os.scandir(directory))
    except OSError:  # missing, not a folder, unreadable: nothing listed, as if empty
        return [], []
    regular: list[os.DirEntry[str]] = []
    other: list[os.DirEntry[str]] = []
    for entry in entries:
        if is_memory_name(entry.name):
            (regular if _is_regular(entry) else other).append(entry)
    return regular, other


def special_files(directory: Path) -> list[Quarantined]:
    """Entries with a memory file's name that are not regular files (symbolic links,
    FIFOs, devices, folders): skipped with their reason, never opened."""
    return _specials(_named_entries(directory)[1])


def ids_and_special_files(directory: Path) -> tuple[set[str], list[Quarantined]]:
    """`memory_ids` and `special_files` of a folder, from one listing of it."""
    regular, other = _named_entries(directory)
    return {entry.name[:-3] for entry in regular}, _specials(other)


def _specials(entries: list[os.DirEntry[str]]) -> list[Quarantined]:
    out: list[Quarantined] = []
    for entry in sorted(entries, key=lambda e: e.name):
        if entry.is_symlink():
            reason = "a symbolic link: links inside a memory folder are not followed"
        else:
            reason = "not a regular file (a FIFO, device or folder): skipped, never read"
        out.append(Quarantined(Path(entry.path), reason))
    return out


def memory_files(directory: Path) -> Iterator[Path]:
    for entry in sorted(_memory_entries(directory), key=lambda e: e.name):
        yield Path(entry.path)


def unsettled(home: Home, path: Path | str) -> bool:
    """A file an unsettled submit created: reads leave it out (storage.journalfile)."""
    return bool(home.before) and str(path) in home.before and home.before[str(path)] is None


def home_files(home: Home) -> Iterator[Path]:
    """The memory files of a home as reads see them (`memory_files`, less the files an
    unsettled submit created)."""
    for path in memory_files(home.path):
        if not unsettled(home, path):
            yield path


def home_bytes(path: Path, home: Home) -> bytes:
    """A memory file's bytes as reads see them: `read_bytes`, or, for a file an
    unsettled submit rewrote, its bytes from before."""
    if home.before and str(path) in home.before:
        data = home.before[str(path)]
        if data is None:
            raise FileNotFoundError(errno.ENOENT, "written by an unsettled submit", str(path))
        return data
    return read_bytes(path)


def is_memory_name(name: str) -> bool:
    """Whether a file name in a home is a memory file (README.md and dot files are not)."""
    # Called once per file of every walk: a name longer than every ignored one is not
    # lowered (~8 ms a walk of 100,000 files).
    return (name.endswith(".md") and name[0] not in "._"
            and (len(name) > _LONGEST_IGNORED or name.lower() not in _IGNORED_NAMES))


def read_bytes(path: str | Path) -> bytes:
    """A memory file's bytes: a regular file only, opened without following a link and
    without blocking (a FIFO put in place of a file never hangs a read)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InvalidMemory("a symbolic link: links inside a memory folder are not "
                                "followed") from None
        raise
    try:  # os.read, not a file object: ~5 us less per file in a reindex of thousands
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InvalidMemory("not a regular file (a FIFO, device or folder)")
        chunks = [os.read(fd, info.st_size + 1)]
        while chunks[-1]:  # to the end, should the file have grown since the fstat
            chunks.append(os.read(fd, 1 << 20))
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_memory_path(rel_path: str) -> bool:
    """Whether a repo-relative path is named like a memory file (`<ULID>.md`): what the
    merge driver claims; README.md and any other name there is merged as plain text."""
    name = PurePosixPath(rel_path).name
    return name.endswith(".md") and is_ulid(name[:-3])


def read_text(path: Path) -> str:
    return decode(read_bytes(path))


def decode(data: bytes) -> str:
    """A memory file's bytes as text; raises FrontMatterError for binary or non-UTF-8."""
    try:
        if b"\0" not in data:
            return data.decode("utf-8")
        problem = "binary content (NUL bytes)"
    except UnicodeDecodeError:
        problem = "not UTF-8 text"
    from memex.core import frontmatter

    raise frontmatter.FrontMatterError(problem)


def read(path: Path, home: Home) -> Loaded:
    """Read one memory file as reads see it (`home_bytes`); raises InvalidMemory (a
    FrontMatterError for syntax)."""
    return from_text(decode(home_bytes(path, home)), path, home)


def from_text(text: str, path: Path, home: Home) -> Loaded:
    """A memory from its file's text (already read), checked against its name and home."""
    from memex.core import frontmatter

    return from_parsed(frontmatter.parse(text), path, home)


def from_parsed(parsed: frontmatter.Parsed, path: Path, home: Home,
                memory: model.Memory | None = None) -> Loaded:
    """`from_text` after the parse; `memory` is the parse's `model.from_front_matter`
    when the caller already built it (verify's pass, reused by the index refresh)."""
    memory = placed(parsed, path.name, path.stem, home, memory)
    return Loaded(memory=memory, path=path, home=home, parsed=parsed)


def placed(parsed: frontmatter.Parsed, name: str, stem: str, home: Home,
           memory: model.Memory | None = None) -> model.Memory:
    """The memory of a parse, checked against its file's NAME (and that name's STEM, as
    Path.stem gives it) and its home: what from_parsed checks, for a caller that holds
    the name as text (a full index build: ~5 us a file less than making a Path)."""
    if model.legacy_version(parsed.data) is not None:
        raise InvalidMemory(LEGACY_REASON)
    if memory is None:
        memory = model.from_front_matter(parsed.data, parsed.body)
    if stem != memory.id:
        raise InvalidMemory(f"file name {name} does not match its id {memory.id}")
    if memory.scope != home.scope:
        raise InvalidMemory(
            f"scope {memory.scope!r} does not belong in the {home.kind} folder ({home.path})"
        )
    return memory


def read_home(home: Home) -> tuple[list[Loaded], list[Quarantined]]:
    """Every memory in a home; unreadable files are reported, never touched."""
    good: list[Loaded] = []
    bad: list[Quarantined] = special_files(home.path)
    for path in home_files(home):
        try:
            good.append(read(path, home))
        except (InvalidMemory, OSError) as exc:
            bad.append(Quarantined(path, str(exc) or type(exc).__name__))
    return good, bad


def read_all(ws: Workspace, scopes: Iterable[str] | None = None
             ) -> tuple[list[Loaded], list[Quarantined]]:
    good: list[Loaded] = []
    bad: list[Quarantined] = []
    for home in homes(ws, scopes):
        g, b = read_home(home)
        good.extend(g)
        bad.extend(b)
    return good, bad


def _quoted(value: object) -> str:
    """A value a message quotes, every secret in it masked (redact.quoted, one step)."""
    from memex.core import redact  # only for a refusal: its patterns compile for writes

    return redact.quoted(value)


def normalise_id(text: str) -> str:
    """A user-typed id or prefix, upper-cased; anything else is a usage error."""
    candidate = text.strip().upper()
    if not ulid.is_id_prefix(candidate):
        raise UsageError(f"not a memory id: {_quoted(text)} (ids are ULIDs like 01JD8X3K...)")
    return candidate


def find(ws: Workspace, id_or_prefix: str, scopes: Iterable[str] | None = None) -> Loaded:
    """The one memory whose id starts with the prefix, as git resolves short hashes;
    a whole id is its own file (no folder listed: one lookup per home), as in
    `find_many`."""
    prefix = normalise_id(id_or_prefix)
    matches: dict[str, tuple[Home, Path]] = {}
    visible = homes(ws, scopes)
    if is_ulid(prefix):
        for home in visible:
            path = home.path / f"{prefix}.md"
            try:
                regular = stat.S_ISREG(os.lstat(path).st_mode)
            except OSError:
                continue
            if regular and not unsettled(home, path):
                matches[prefix] = (home, path)
                break
    for home in visible if not matches else ():
        for entry in _memory_entries(home.path):  # a Path only for a name that matches
            stem = entry.name[:-3]
            if stem.upper().startswith(prefix) and stem not in matches \
                    and not unsettled(home, entry.path):
                matches[stem] = (home, Path(entry.path))
    if not matches:
        raise NotFound(f"no memory matches {ulid.quoted_id(id_or_prefix)}")
    if len(matches) > 1:
        raise Ambiguous(id_or_prefix, sorted(matches))
    home, path = next(iter(matches.values()))
    try:
        return read(path, home)
    except InvalidMemory as exc:
        raise MemexError(f"{path}: cannot be read ({exc}); it is left untouched") from None


def find_many(ws: Workspace, ids: Iterable[str], scopes: Iterable[str] | None = None,
              first: str | None = None) -> list[Loaded]:
    """`find` for many ids with one listing of the homes (same errors, same order);
    `first` names a home kind whose copy of an id wins (submit takes the outbox's)."""
    wanted = [(text, normalise_id(text)) for text in ids]
    names: dict[str, tuple[Home, Path]] = {}
    for home in sorted(homes(ws, scopes), key=lambda h: h.kind != first):
        for path in home_files(home):
            names.setdefault(path.stem.upper(), (home, path))
    out: list[Loaded] = []
    for text, prefix in wanted:
        exact = prefix in names  # a whole id: no need to compare prefixes
        matches = [prefix] if exact else sorted(n for n in names if n.startswith(prefix))
        if not matches:
            raise NotFound(f"no memory matches {ulid.quoted_id(text)}")
        if len(matches) > 1:
            raise Ambiguous(text, matches)
        home, path = names[matches[0]]
        try:
            out.append(read(path, home))
        except InvalidMemory as exc:
            raise MemexError(f"{path}: cannot be read ({exc}); it is left untouched") from None
    return out


_umask = atomic.umask


class WriteFailed(MemexError, OSError):
    """An OS error on a write step (EACCES, EROFS, ENOSPC...), as one clear message;
    still an OSError for callers that handle those."""


def write_failed(exc: OSError, path: Path | str, what: str = "write") -> WriteFailed:
    if isinstance(exc, WriteFailed):
        return exc
    reason = exc.strerror or str(exc) or type(exc).__name__
    return WriteFailed(f"cannot {what} {path}: {reason}; nothing was changed there")


def write_atomic(path: Path, text: str) -> None:
    """Write via a temp file and rename: never a half-written file."""
    try:
        iostep.step("mkdir")
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_failed(exc, path.parent, "create the folder") from None
    write_bytes_atomic(path, text.encode("utf-8"))


TEMP_SUFFIX = atomic.TEMP_SUFFIX
TEMP_DIR = "memex-tmp"


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Exact bytes via a temp file, fsynced, then renamed over `path`. In a git working
    tree the temp file lives in the git dir (never where `git add -A` would take it);
    on another device, beside the target under a name git is told to ignore. A file
    that exists keeps its permission bits (a 0600 config holding a token stays 0600);
    a new one gets what the umask allows, as any editor would make it."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        atomic.replace(path, data, folder=temp_dir(path.parent), mode=mode, durable=True,
                       step=iostep.step)
    except OSError as exc:
        raise write_failed(exc, path) from None


def write_new_files(files: list[tuple[Path, str]]) -> list[tuple[Path, WriteFailed]]:
    """Many memory files at once (an import), each as write_bytes_atomic writes one (a
    temp file renamed over the target: never a half-written file), but made durable
    together before any is renamed (flush_files: one syncfs of their file system on
    Linux) instead of an fsync each, which costs most of the time of a bulk write. The
    texts are written as given (the caller masked them). Returns the files that could
    not be written, each with its error; every other one is written."""
    failed: list[tuple[Path, WriteFailed]] = []
    staged: list[tuple[str, Path]] = []
    folders: dict[Path, str] = {}
    umask = _umask()
    # Temp names as mkstemp makes them (".<name>.<pid>.<random><TEMP_SUFFIX>", which
    # clean_stale_temps reads), the random part drawn once per call and told apart by a
    # counter: mkstemp's name drawing and file object cost ~40% of a file's staging.
    token = f".{os.getpid()}.{os.urandom(6).hex()}"
    for n, (path, text) in enumerate(files):
        tmp: str | None = None
        try:
            if path.parent not in folders:
                iostep.step("mkdir")
                path.parent.mkdir(parents=True, exist_ok=True)
                folders[path.parent] = str(temp_dir(path.parent))
            iostep.step("create-temp")
            fd, tmp = _create_temp(folders[path.parent], f".{path.name}{token}x{n}")
            try:
                iostep.step("write")
                data = text.encode("utf-8")
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.chmod(tmp, 0o666 & ~umask)
            staged.append((tmp, path))
        except OSError as exc:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            failed.append((path, write_failed(exc, path)))
    try:
        iostep.step("fsync")
        flush_files([tmp for tmp, _ in staged], [Path(f) for f in folders.values()])
    except OSError as exc:
        for tmp, path in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            failed.append((path, write_failed(exc, path)))
        return failed
    for tmp, path in staged:
        try:
            iostep.step("rename")
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            failed.append((path, write_failed(exc, path)))
    return failed


def _create_temp(folder: str, stem: str) -> tuple[int, str]:
    """A new file FOLDER/STEM<TEMP_SUFFIX> opened for writing (O_EXCL: never one that
    exists; mode 0600 until its caller sets it, as mkstemp's); if that name is taken,
    a file atomic.create_temp names from the same prefix."""
    path = os.path.join(folder, stem + TEMP_SUFFIX)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | \
        getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o600), path
    except FileExistsError:
        return atomic.create_temp(folder, stem.rsplit(".", 1)[0] + ".")


def flush_files(files: list[str], folders: Iterable[Path]) -> None:
    """Put FILES (all in FOLDERS) on disk. Linux: syncfs(2) once for each file system
    the folders are on (one flush of that file system, not of every mounted one as
    os.sync() is, and a sync that returns when it is done); elsewhere, or where syncfs
    cannot be had: an fsync of each file, a few at a time (docs/decisions.md)."""
    syncfs = _syncfs()
    if syncfs is not None:
        devices: dict[int, Path] = {}
        for folder in folders:
            devices.setdefault(os.stat(folder).st_dev, folder)
        for folder in devices.values():
            fd = os.open(folder, os.O_RDONLY)
            try:
                if syncfs(fd) != 0:
                    code = _last_errno()
                    raise OSError(code, os.strerror(code), str(folder))
            finally:
                os.close(fd)
        return
    from concurrent.futures import ThreadPoolExecutor

    def fsync(path: str) -> None:
        fd = os.open(path, os.O_RDWR)  # Windows' fsync needs write access
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    with ThreadPoolExecutor(max_workers=FSYNC_THREADS) as pool:
        for _ in pool.map(fsync, files):  # the first error raises
            pass


FSYNC_THREADS = 8  # fsyncs in flight where there is no syncfs (the disk queues them)
_SYNCFS: list[Any] = []


def _syncfs() -> Any:
    """libc's syncfs (Linux), or None."""
    if not _SYNCFS:
        found = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                found = ctypes.CDLL(None, use_errno=True).syncfs
                found.argtypes = [ctypes.c_int]
                found.restype = ctypes.c_int
            except (ImportError, OSError, AttributeError):
                found = None
        _SYNCFS.append(found)
    return _SYNCFS[0]


def _last_errno() -> int:
    import ctypes

    return ctypes.get_errno() or errno.EIO


def _git_dir_of(folder: Path) -> Path | None:
    """The git dir of the working tree holding `folder` (found from `.git`, no git run)."""
    for parent in (folder, *folder.parents):
        dot = parent / ".git"
        if dot.is_dir():
            return dot
        if dot.is_file():
            try:
                line = dot.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if line.startswith("gitdir:"):
                target = Path(line[7:].strip())
                return target if target.is_absolute() else (parent / target).resolve()
            return None
    return None


def temp_dir(folder: Path) -> Path:
    """Where a write into `folder` puts its temp file (see write_bytes_atomic)."""
    git_dir = _git_dir_of(folder)
    if git_dir is None:
        return folder
    target = _git_temp_dir(git_dir, folder)
    if target is not None:
        return target
    _exclude_temps(git_dir)
    return folder


def _git_temp_dir(git_dir: Path, folder: Path) -> Path | None:
    """<git dir>/memex-tmp, made, when it is on `folder`'s device; else None."""
    try:
        if os.stat(git_dir).st_dev == os.stat(folder).st_dev:
            target = git_dir / TEMP_DIR
            target.mkdir(exist_ok=True)
            return target
    except OSError:
        pass
    return None


def temps_swept(folder: Path) -> None:
    """A writer (it holds the write lock) has just removed the temps a killed writer
    left in FOLDER: from now on a write into FOLDER puts its temp in <git dir>/memex-tmp
    when that is on FOLDER's device (made here, as the first such write would), so the
    next writer's settle need not list FOLDER again (temps_may_be_in). A repo's memory
    folder no memex write ever wrote into (files from git, an import, a bench) was
    listed by every write: 100,000 entries, ~0.15 s each time."""
    git_dir = _git_dir_of(folder)
    if git_dir is not None:
        _git_temp_dir(git_dir, folder)


def temps_may_be_in(folder: Path) -> bool:
    """Whether a write into FOLDER may have left its temp file there: not when its
    temps go to the git dir's memex-tmp (temp_dir: the same device, and that folder
    made), which the submit journal's settle cleans. Spares listing a large memory
    folder on every write."""
    git_dir = _git_dir_of(folder)
    if git_dir is None:
        return True
    try:
        return not (os.stat(git_dir).st_dev == os.stat(folder).st_dev
                    and (git_dir / TEMP_DIR).is_dir())
    except OSError:
        return True


def _exclude_temps(git_dir: Path) -> None:
    """List the temp files' pattern in info/exclude (of the common git dir)."""
    common = git_dir
    with contextlib.suppress(OSError, UnicodeDecodeError):
        common_file = git_dir / "commondir"
        if common_file.is_file():
            common = (git_dir / common_file.read_text(encoding="utf-8").strip()).resolve()
    exclude = common / "info" / "exclude"
    pattern = f"*{TEMP_SUFFIX}"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if pattern not in text.splitlines():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            with exclude.open("a", encoding="utf-8") as handle:
                handle.write(("" if not text or text.endswith("\n") else "\n") + pattern + "\n")


def clean_stale_temps(folder: Path) -> list[Path]:
    """Remove temp files a killed writer left in `folder` (its process is gone)."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if remove_if_stale_temp(entry.path, entry.name):
            removed.append(Path(entry.path))
    return removed


def remove_if_stale_temp(path: str, name: str) -> bool:
    """Remove PATH (named NAME) if it is a temp file whose writer's process is gone."""
    if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return False
    parts = name[: -len(TEMP_SUFFIX)].rsplit(".", 2)
    pid = parts[1] if len(parts) == 3 else ""
    if pid.isdigit() and _alive(int(pid)):
        return False
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def mask_text(text: str, redaction: Redaction | None = None) -> str:
    """A whole memory file's text with every secret in it masked (comments, a merge
    result, a migrated or an imported file): a text that is a memory has its fields
    masked by `masking.mask_memory` first (a private block in a tag becomes a tag, as on
    every write), then the rest (comments, a file that does not parse) as text.
    REDACTION: `redact.redact(text)` when the caller has it (the text is not scanned
    again)."""
    from memex.core import redact

    if redaction is None:
        if not redact.find_secrets(text):
            return text
    elif not redaction.changed:
        return text
    fields = _fields_masked(text)
    if fields is None:  # conflict markers, broken YAML, anything: masked as text
        return _header_as_tags((redaction or redact.redact(text)).text)
    return redact.redact(fields).text


def _fields_masked(text: str) -> str | None:
    """TEXT written again with its memory's fields masked (`masking.mask_memory`) when masking
    changes a field, TEXT as it is when it changes none; None when TEXT is no memory."""
    from memex.core import frontmatter

    try:
        memory, parsed = frontmatter.load(text)
    except Exception:  # the merge driver must never fail on what it writes
        return None
    masked = masking.mask_memory(memory)
    return text if masked is memory else frontmatter.rewrite(masked, parsed)


def _header_as_tags(masked: str) -> str:
    """A text that is no memory (a plain-text merge's conflict, a broken line), masked:
    its lines up to the second `---` line (the front matter) with each private block's
    placeholder as a tag holds it (`redact.as_tag`). Which key a placeholder is under
    cannot be told there, and the bracketed one is no tag, no path, and unquoted a
    YAML list, so the person who fixes the file would meet an invalid memory."""
    from memex.core import redact

    fences, end = 0, 0
    for line in masked.splitlines(keepends=True):
        end += len(line)
        if line.rstrip("\r\n").rstrip(" \t") == "---":
            fences += 1
            if fences == 2:
                return redact.as_tag(masked[:end]) + masked[end:]
    return masked


def render(memory: model.Memory, parsed: frontmatter.Parsed | None = None
           ) -> tuple[model.Memory, str]:
    """(masked memory, file text): what every memory write stores."""
    from memex.core import frontmatter

    memory = masking.mask_memory(memory)
    model.validate(memory)
    return memory, mask_text(frontmatter.rewrite(memory, parsed))


def write_memory_text(path: Path, text: str) -> str:
    """Write a memory file's raw text atomically, masked; returns what was written."""
    text = mask_text(text)
    write_atomic(path, text)
    return text


def save(loaded: Loaded) -> str:
    """Write a memory back to its file (round trip when hand-edited); returns the text.
    The stored strings are masked (`masking.mask_memory`), and `loaded.memory` becomes what was
    stored, so nothing shown afterwards holds the secret either."""
    from memex.core import frontmatter

    loaded.memory, text = render(loaded.memory, loaded.parsed)
    write_atomic(loaded.path, text)
    loaded.parsed = frontmatter.parse(text)
    return text


def new_path(home: Home, memory_id: str) -> Path:
    if not is_ulid(memory_id):
        raise UsageError(f"not a memory id: {_quoted(memory_id)}")
    return home.path / f"{memory_id}.md"


def delete(loaded: Loaded) -> None:
    remove(loaded.path)


def remove(path: Path) -> None:
    """Delete a file (gone already is fine); an OS error is one clear message."""
    try:
        iostep.step("unlink")
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise write_failed(exc, path, "delete") from None
