"""Conflicted memory files during a merge or rebase (`git memex resolve`).

Reads the index's conflict stages (1 base, 2 ours, 3 theirs) with `git ls-files -u`,
runs the field-level merge over them, and writes + stages the file only when the merge
is clean. Conflicted paths outside the memory folder are git's business and left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memex import frontmatter, gitio, merge, store
from memex.errors import Ambiguous, InvalidMemory, MemexError, NotFound
from memex.homes import Workspace


@dataclass
class ConflictedMemory:
    """One conflicted memory file and what its field-level merge says."""

    path: str  # repo-relative, as git names it
    memory_id: str
    stages: dict[int, str]
    result: merge.MergeResult | None = None
    deleted_on: str | None = None  # "ours" / "theirs": a modify/delete conflict

    @property
    def clean(self) -> bool:
        return self.result is not None and self.result.clean

    def decisions(self) -> list[str]:
        """What a human must decide, one line each."""
        if self.deleted_on is not None:
            kept = "theirs" if self.deleted_on == "ours" else "ours"
            return [f"deleted on {self.deleted_on}, changed on {kept}: keep it "
                    f"(`git add {self.path}`) or delete it (`git rm {self.path}`)"]
        if self.result is None:
            return []
        return [c.describe() for c in self.result.conflicts]

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "id": self.memory_id, "clean": self.clean,
                "deleted_on": self.deleted_on, "decisions": self.decisions(),
                "conflicts": [c.as_json() for c in self.result.conflicts] if self.result
                else [], "notices": self.result.notices if self.result else []}


@dataclass
class Listing:
    state: str | None  # merge, rebase, cherry-pick, revert or None
    memories: list[ConflictedMemory] = field(default_factory=list)
    others: list[str] = field(default_factory=list)  # conflicted non-memory paths

    def as_json(self) -> dict[str, Any]:
        return {"state": self.state, "memories": [m.as_json() for m in self.memories],
                "other_conflicted_paths": self.others}


@dataclass
class Outcome:
    item: ConflictedMemory
    written: bool
    staged: bool
    messages: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {**self.item.as_json(), "written": self.written, "staged": self.staged,
                "messages": self.messages}


def _repo(ws: Workspace) -> gitio.RepoInfo:
    if ws.repo is None:
        raise MemexError("not inside a git repository: nothing to resolve")
    return ws.repo


def is_memory_path(ws: Workspace, path: str) -> bool:
    return store.in_memory_folder(ws.memory_dir_name, path)


def _analyse(top: Path, item: gitio.Unmerged) -> ConflictedMemory:
    out = ConflictedMemory(item.path, PurePosixPath(item.path).stem, dict(item.stages))
    if 2 not in item.stages or 3 not in item.stages:
        out.deleted_on = "ours" if 2 not in item.stages else "theirs"
        return out
    base = gitio.blob_text(top, item.stages[1]) if 1 in item.stages else None
    ours = gitio.blob_text(top, item.stages[2])
    theirs = gitio.blob_text(top, item.stages[3])
    out.result = merge.merge_texts(base, ours, theirs)
    merged = out.result.memory
    if merged is not None and merged.contradicts:
        # a semantic conflict between two memories: surfaced, never settled here
        out.result.notices.append(
            f"{merged.id} contradicts {', '.join(merged.contradicts)}: both are kept; "
            "a human decides which holds (supersede or retract one)")
    return out


def listing(ws: Workspace) -> Listing:
    repo = _repo(ws)
    result = Listing(gitio.merge_state(repo.git_dir))
    for item in gitio.unmerged(repo.toplevel):
        if is_memory_path(ws, item.path):
            result.memories.append(_analyse(repo.toplevel, item))
        else:
            result.others.append(item.path)
    return result


def _pick(ws: Workspace, id_or_prefix: str) -> gitio.Unmerged:
    repo = _repo(ws)
    prefix = store.normalise_id(id_or_prefix)
    candidates = [u for u in gitio.unmerged(repo.toplevel) if is_memory_path(ws, u.path)]
    matches = [u for u in candidates if PurePosixPath(u.path).stem.upper().startswith(prefix)]
    if len(matches) > 1:
        raise Ambiguous(id_or_prefix, [PurePosixPath(u.path).stem for u in matches])
    if not matches:
        where = ", ".join(PurePosixPath(u.path).stem[:10] for u in candidates[:10]) or "none"
        raise NotFound(f"no conflicted memory file matches {id_or_prefix!r} "
                       f"(conflicted memories: {where})")
    return matches[0]


def _working_file_parses(path: Path) -> bool:
    try:
        frontmatter.load(store.read_text(path))
    except (InvalidMemory, OSError):
        return False
    return True


def resolve(ws: Workspace, id_or_prefix: str) -> Outcome:
    """Merge one conflicted memory from its stages; write and stage it when clean."""
    repo = _repo(ws)
    item = _analyse(repo.toplevel, _pick(ws, id_or_prefix))
    target = repo.toplevel / item.path
    if item.result is None:
        return Outcome(item, written=False, staged=False,
                       messages=["git-memex does not decide whether a memory is deleted"])
    if item.result.clean:
        store.write_atomic(target, item.result.text)
        gitio.run(["add", "--", item.path], cwd=repo.toplevel)
        return Outcome(item, written=True, staged=True,
                       messages=[f"merged {item.path} field by field and staged it"])
    messages = []
    if _working_file_parses(target):
        # someone already edited the markers away: that is their decision, not ours to undo
        messages.append(f"{item.path} already parses: if it holds your decision, "
                        f"`git add {item.path}`; it was left as it is")
        return Outcome(item, written=False, staged=False, messages=messages)
    store.write_atomic(target, item.result.text)
    messages.append(f"wrote {item.path} with conflict markers around each undecided field; "
                    f"edit it, then `git add {item.path}`")
    return Outcome(item, written=True, staged=False, messages=messages)
