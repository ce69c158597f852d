"""git-memex-merge-driver: git's merge driver for memory files (merge=memex)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memex.adapters.cli import _common

if TYPE_CHECKING:
    from memex.workflows.resolve import Sides


def _sides() -> Sides:
    """The rebase-aware side names (git runs drivers at the top level); plain ones when
    the repository cannot be asked."""
    from memex.storage import gitio
    from memex.workflows import resolve

    try:
        repo = gitio.discover(Path.cwd())
        return resolve.sides(repo) if repo is not None else resolve.Sides()
    except Exception:  # naming the sides must never fail a merge
        return resolve.Sides()


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


@click.command("merge-driver")
@click.argument("base", metavar="%O", type=click.Path(path_type=Path))
@click.argument("ours", metavar="%A", type=click.Path(path_type=Path))
@click.argument("theirs", metavar="%B", type=click.Path(path_type=Path))
@click.argument("marker_size", metavar="%L", required=False, default="7")
@click.argument("path", metavar="%P", required=False, default="")
@_common.version_option
def cli(base: Path, ours: Path, theirs: Path, marker_size: str, path: str) -> None:
    """Merge three versions of one memory file field by field, as git's merge driver:
    %O is the common ancestor, %A ours (the result is written there), %B theirs, %L
    the conflict marker size and %P the file's path. `git memex init` configures it
    (merge.memex.driver) and names it in .gitattributes for the memory folder.

    Review and status histories are unioned in time order, tags, paths and links
    unioned, revision becomes the larger plus one, updated_at the later and created_at
    the earlier; a field changed on one side takes that side; the body is merged by
    git merge-file. Exit 0 when clean. Exit 1 when a human must decide: the same field
    changed differently on both sides, two different successors, or a body conflict;
    the file then holds conflict markers around each undecided field and in the body,
    and `git memex resolve` explains what to decide. An input that is not a readable
    memory is merged as plain text by git merge-file (exit 1); neither side is lost.
    A %P that is not named like a memory file (`<ULID>.md`: the folder's README.md
    under an older, wider `.gitattributes` line) gets git merge-file's plain text merge,
    exit 0 when clean, as if no driver were configured.
    """
    from memex.storage import store
    from memex.workflows import file_merge

    try:
        size = max(1, int(marker_size))
    except ValueError:
        size = 7
    label = path or str(ours)

    if path and not store.is_memory_path(path):
        _plain_text(base, ours, theirs, size, label)
    sides = _sides()
    try:
        result = file_merge.merge_texts_or_text(_read(base), _read(ours), _read(theirs),
                                           labels=sides.markers, marker_size=size)
    except Exception as exc:  # git itself failed: never crash inside git's merge
        _common.note(f"git-memex: {label}: merge failed ({exc})")
        sys.exit(1)  # %A still holds ours; theirs stays in the index (stage 3)
    text, clean = result.text, result.clean
    for notice in result.notices:
        _common.note(f"git-memex: {label}: {notice}")
    for conflict in result.conflicts:
        what = conflict.describe(sides.ours, sides.theirs)
        _common.note(f"git-memex: CONFLICT {label}: {what}")
    try:
        store.write_memory_text(ours, text)
    except OSError as exc:
        _common.note(f"git-memex: cannot write {ours}: {exc}")
        sys.exit(1)
    if not clean:
        _common.note(f"git-memex: run `git memex resolve` to see what to decide in {label}")
    sys.exit(0 if clean else 1)


def _plain_text(base: Path, ours: Path, theirs: Path, size: int, label: str) -> None:
    """A file that is not a memory (the folder's README.md under an older, wide
    `.gitattributes` line): git's own text merge, as if no driver were configured."""
    from memex.storage import gitio

    try:
        merged = gitio.merge_file(_read(ours), _read(base), _read(theirs),
                                  ("ours", "base", "theirs"), size)
        ours.write_bytes(merged.text.encode("utf-8"))
    except (OSError, gitio.GitError) as exc:
        _common.note(f"git-memex: {label}: merge failed ({exc})")
        sys.exit(1)
    sys.exit(0 if merged.conflicts == 0 else 1)


def main() -> None:
    _common.run_step(cli, "merge-driver")
