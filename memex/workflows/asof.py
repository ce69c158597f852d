"""`--as-of DATE --from-git`: the memory folder as git held it then, read through a
temporary index that never touches the working tree's files or cache.

The commit is the last on HEAD's first-parent line whose committer date is at or
before DATE (a date without a time means the end of that day, UTC): what the team's
main line knew then, even if files were rewritten since. Its memory files are
written to a temporary checkout (one `git cat-file --batch`), a Workspace pointing
there gets its own index, and DESIGN.md's as-of rules apply on top. Personal
memories and outbox drafts have no git history; they are read as they are now, with
the same as-of rules.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memex.core import clock
from memex.core.errors import MemexError, UsageError
from memex.storage import gitio, store
from memex.storage.homes import Workspace

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def moment_of(value: str) -> str:
    """DATE as the canonical time: a bare date is the end of that day, UTC."""
    text = value.strip()
    if _DATE.match(text):
        text += "T23:59:59Z"
    try:
        return clock.normalise_time(text)
    except ValueError as exc:
        raise UsageError(f"--as-of: {exc}") from None


def commit_at(top: Path, moment: str) -> str:
    """The last first-parent commit of HEAD committed at or before `moment`."""
    proc = gitio.run(["rev-list", "--first-parent", "-n", "1", f"--until={moment}", "HEAD",
                      "--"], cwd=top, check=False)
    found = proc.stdout.strip()
    if proc.returncode != 0 or not found:
        raise MemexError(f"no commit on HEAD's first-parent line was made at or before "
                         f"{moment}: nothing to read from git")
    return found


@dataclasses.dataclass(frozen=True)
class GitView:
    """The memory folder as git held it at a commit, read through a temporary index."""

    ws: Workspace
    commit: str
    moment: str


@contextmanager
def from_git(ws: Workspace, value: str) -> Iterator[GitView]:
    """A Workspace whose repo folder is the memory folder at the commit of `value`;
    everything it writes (the index) lives in a temporary folder removed after."""
    if ws.repo is None:
        raise MemexError("not inside a git repository: --from-git reads the memory "
                         "folder's git history")
    top, folder = ws.repo.toplevel, ws.memory_dir_name
    moment = moment_of(value)
    commit = commit_at(top, moment)
    listing = gitio.run(["ls-tree", "-z", "--name-only", commit, "--", f"{folder}/"],
                        cwd=top).stdout
    paths = [p for p in listing.split("\0") if p and store.in_memory_folder(folder, p)]
    texts = gitio.read_blobs(top, [f"{commit}:{p}" for p in paths]) if paths else {}
    scratch = Path(tempfile.mkdtemp(prefix="git-memex-asof-"))
    try:
        checkout, git_dir = scratch / "checkout", scratch / "git"
        (checkout / folder).mkdir(parents=True)
        git_dir.mkdir()
        for rel in paths:
            text = texts.get(f"{commit}:{rel}")
            if text is not None:
                (checkout / rel).write_text(text, encoding="utf-8")
        try:
            here = ws.cwd.resolve().relative_to(top.resolve())
        except ValueError:
            here = Path()
        past = dataclasses.replace(ws, cwd=checkout / here,
                                   repo=gitio.RepoInfo(checkout, git_dir, git_dir))
        try:
            yield GitView(past, commit, moment)
        finally:
            from memex.index import build

            build.forget(past)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
