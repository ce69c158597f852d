"""The submit journal: a submit killed at any step is finished or undone, never left
half-done.

Before its first change a submit writes `<git dir>/memex-submit.json` (atomically):
HEAD before, each repo file it will write with its previous bytes (none: new) and the
bytes it will write, and the outbox drafts it will delete after the commit. The
journal is removed when the submit is done or has rolled itself back. A journal found
later means a process died mid-way; the next git-memex command that writes (under the
repo lock, `<git dir>/memex.lock`) settles it: if HEAD has moved on and holds exactly
the journal's files, the commit happened, so the outbox copies are deleted (forward);
otherwise every repo file gets its previous bytes back and git's index entries for
them are reset to HEAD (back). History is never rewritten.
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from memex.core.digest import sha256
from memex.core.errors import MemexError
from memex.storage import gitio, journalfile, locks, store

REPO_LOCK = "memex.lock"


def journal_path(repo: gitio.RepoInfo) -> Path:
    return journalfile.journal_file(repo.git_dir)


def pending(repo: gitio.RepoInfo) -> bool:
    return journalfile.pending(repo.git_dir)


@contextlib.contextmanager
def repo_lock(repo: gitio.RepoInfo, timeout: float | None = None) -> Iterator[None]:
    with locks.home_lock(repo.git_dir, REPO_LOCK, timeout):
        yield


def index_lock_problem(repo: gitio.RepoInfo) -> str | None:
    """git's own lock, left by a git process that was killed (or one still running)."""
    lock = repo.git_dir / "index.lock"
    if not lock.exists():
        return None
    return (f"git's index lock {lock} exists: another git command is running in "
            f"{repo.toplevel}, or one was killed. If no git command is running, remove it "
            f"(rm '{lock}') and run this again; nothing moved")


def _sha(data: bytes) -> str:
    return sha256(data).hexdigest()


@dataclass
class Journal:
    """A submit in progress: what it changes, to finish or undo it after a kill."""

    repo: gitio.RepoInfo
    head: str | None
    files: dict[str, tuple[str | None, str]]  # path: (previous bytes b64 or None, new sha)
    drafts: list[str]

    def save(self) -> None:
        record = journalfile.Record(self.head, self.files, self.drafts)
        store.write_bytes_atomic(journal_path(self.repo), record.encode())

    def remove(self) -> None:
        store.remove(journal_path(self.repo))

    def restored(self) -> bool:
        """Whether every file the submit meant to write holds its previous bytes."""
        for path, (previous, _) in self.files.items():
            try:
                now: bytes | None = Path(path).read_bytes()
            except FileNotFoundError:
                now = None
            except OSError:
                return False
            if now != (None if previous is None else base64.b64decode(previous)):
                return False
        return True


def begin(repo: gitio.RepoInfo, writes: dict[Path, bytes], drafts: Sequence[Path]) -> Journal:
    """Record what a submit is about to do (call under repo_lock, before any change)."""
    files: dict[str, tuple[str | None, str]] = {}
    for path, new in writes.items():
        try:
            previous: str | None = base64.b64encode(path.read_bytes()).decode("ascii")
        except FileNotFoundError:
            previous = None
        except OSError as exc:
            raise store.write_failed(exc, path, "read") from None
        files[str(path)] = (previous, _sha(new))
    journal = Journal(repo, gitio.rev_parse(repo.toplevel, "HEAD"), files,
                      [str(d) for d in drafts])
    journal.save()
    return journal


def _load(repo: gitio.RepoInfo) -> Journal | None:
    # A journal torn by a kill while it was written loads empty: nothing was changed yet.
    record = journalfile.load(repo.git_dir)
    if record is None:
        return None
    return Journal(repo, record.head, record.files, record.drafts)


def _committed(journal: Journal) -> bool:
    top = journal.repo.toplevel
    head = gitio.rev_parse(top, "HEAD")
    if head is None or head == journal.head or not journal.files:
        return False
    for path, (_, sha) in journal.files.items():
        rel = os.path.relpath(path, top)
        proc = gitio.run_bytes(["cat-file", "blob", f"HEAD:{rel}"], cwd=top)
        if proc is None or _sha(proc) != sha:
            return False
    return True


def recover(repo: gitio.RepoInfo) -> str | None:
    """Settle a journal a killed submit left (call under repo_lock); returns a notice."""
    for folder in (repo.git_dir / store.TEMP_DIR,):
        store.clean_stale_temps(folder)
    journal = _load(repo)
    if journal is None:
        return None
    if _committed(journal):
        for draft in journal.drafts:
            store.remove(Path(draft))
        journal.remove()
        return ("finished a submit that was interrupted after its commit: removed its "
                "outbox copies")
    problem = index_lock_problem(repo)
    if problem is not None and journal.files:
        raise MemexError("cannot undo an interrupted submit: " + problem)
    for path, (previous, _) in journal.files.items():
        target = Path(path)
        if previous is None:
            store.remove(target)
        else:
            store.write_bytes_atomic(target, base64.b64decode(previous))
    if journal.files:
        top = repo.toplevel
        rels = [os.path.relpath(p, top) for p in journal.files]
        gitio.run(["reset", "-q", "--", *rels], cwd=top, check=False)
    journal.remove()
    return ("undid a submit that was interrupted before its commit: the repo files are "
            "as before and the drafts are still in the outbox")


def settle(repo: gitio.RepoInfo | None, timeout: float | None = None) -> str | None:
    """`recover` under the repo lock, only when there is something to settle."""
    if repo is None:
        return None
    if not pending(repo) and not (repo.git_dir / store.TEMP_DIR).exists():
        return None
    with repo_lock(repo, timeout):
        return recover(repo)
