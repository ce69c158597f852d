"""Conflicted memory files during a merge or rebase (`git memex resolve`).

Reads the index's conflict stages (1 base, 2 ours, 3 theirs) with `git ls-files -u`,
runs the field-level merge over them, and writes + stages the file only when the merge
is clean. Conflicted paths outside the memory folder are git's business and left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memex.core import clock, frontmatter, lifecycle, merge, ulid
from memex.core.errors import Ambiguous, InvalidMemory, MemexError, NotFound, UsageError
from memex.storage import gitio, rollback, store, writelock
from memex.storage.homes import Workspace
from memex.workflows import file_merge

_MARKER = re.compile(r"^(?:<{7}(?: |$)|={7}$|>{7}(?: |$)|\|{7}(?: |$))", re.MULTILINE)


@dataclass(frozen=True)
class Sides:
    """What to call git's "ours" and "theirs" for people: during a rebase "ours" is
    the upstream being rebased onto and "theirs" is your own commit being replayed."""

    ours: str = "ours"
    theirs: str = "theirs"
    markers: tuple[str, str, str] = merge.LABELS

    def as_json(self) -> dict[str, str]:
        return {"ours": self.ours, "theirs": self.theirs}


def sides(repo: gitio.RepoInfo) -> Sides:
    if gitio.merge_state(repo.git_dir) != "rebase":
        return Sides()
    sha = gitio.rev_parse(repo.toplevel, "REBASE_HEAD")
    short = sha[:10] if sha else "unknown"
    return Sides("upstream (HEAD, the branch being rebased onto)",
                 f"yours (the commit being replayed, {short})",
                 ("upstream (HEAD)", "base", f"yours ({short})"))


@dataclass
class ConflictedMemory:
    """One conflicted memory file and what its field-level merge says."""

    path: str  # repo-relative, as git names it
    memory_id: str
    stages: dict[int, str]
    result: merge.MergeResult | None = None
    deleted_on: str | None = None  # "ours" / "theirs": a modify/delete conflict
    sides: Sides = field(default_factory=Sides)

    @property
    def clean(self) -> bool:
        return self.result is not None and self.result.clean

    def decisions(self) -> list[str]:
        """What a human must decide, one line each."""
        if self.deleted_on is not None:
            gone, kept = ((self.sides.ours, self.sides.theirs) if self.deleted_on == "ours"
                          else (self.sides.theirs, self.sides.ours))
            return [f"deleted on {gone}, changed on {kept}: keep it "
                    f"(`git add {self.path}`) or delete it (`git rm {self.path}`)"]
        if self.result is None:
            return []
        return [c.describe(self.sides.ours, self.sides.theirs) for c in self.result.conflicts]

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "id": self.memory_id, "clean": self.clean,
                "deleted_on": self.deleted_on, "decisions": self.decisions(),
                "sides": self.sides.as_json(),
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

    @property
    def decisions(self) -> list[str]:
        """What is still left to a human (nothing once the file is staged)."""
        return [] if self.staged else self.item.decisions()

    def as_json(self) -> dict[str, Any]:
        return {**self.item.as_json(), "decisions": self.decisions, "written": self.written,
                "staged": self.staged, "messages": self.messages}


def _repo(ws: Workspace) -> gitio.RepoInfo:
    if ws.repo is None:
        raise MemexError("not inside a git repository: nothing to resolve")
    return ws.repo


def _analyse(top: Path, item: gitio.Unmerged, labels: Sides) -> ConflictedMemory:
    out = ConflictedMemory(item.path, PurePosixPath(item.path).stem, dict(item.stages),
                           sides=labels)
    if 2 not in item.stages or 3 not in item.stages:
        out.deleted_on = "ours" if 2 not in item.stages else "theirs"
        return out
    base = gitio.blob_text(top, item.stages[1]) if 1 in item.stages else None
    ours = gitio.blob_text(top, item.stages[2])
    theirs = gitio.blob_text(top, item.stages[3])
    out.result = file_merge.merge_texts(base, ours, theirs, labels=labels.markers)
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
    labels = sides(repo)
    for item in gitio.unmerged(repo.toplevel):
        if store.in_memory_folder(ws.memory_dir_name, item.path):
            result.memories.append(_analyse(repo.toplevel, item, labels))
        else:
            result.others.append(item.path)
    return result


def _pick(ws: Workspace, id_or_prefix: str) -> gitio.Unmerged:
    repo = _repo(ws)
    prefix = store.normalise_id(id_or_prefix)
    candidates = [u for u in gitio.unmerged(repo.toplevel)
                  if store.in_memory_folder(ws.memory_dir_name, u.path)]
    matches = [u for u in candidates if PurePosixPath(u.path).stem.upper().startswith(prefix)]
    if len(matches) > 1:
        raise Ambiguous(id_or_prefix, [PurePosixPath(u.path).stem for u in matches])
    if not matches:
        where = ", ".join(PurePosixPath(u.path).stem[:10] for u in candidates[:10]) or "none"
        raise NotFound(f"no conflicted memory file matches {ulid.quoted_id(id_or_prefix)} "
                       f"(conflicted memories: {where})")
    return matches[0]


def _hand_resolved(path: Path, memory_id: str) -> bool:
    """The working-tree file is this memory, parses, and holds no conflict marker."""
    try:
        text = store.read_text(path)
        memory, _ = frontmatter.load(text)
    except (InvalidMemory, OSError):
        return False
    return memory.id == memory_id and not _MARKER.search(text)


@writelock.holds_write_lock
def resolve(ws: Workspace, id_or_prefix: str) -> Outcome:
    """Merge one conflicted memory from its stages; write and stage it when clean.

    When a person already resolved the file by hand (it parses, holds no marker), that
    is their decision: it is staged as it is, never overwritten."""
    repo = _repo(ws)
    item = _analyse(repo.toplevel, _pick(ws, id_or_prefix), sides(repo))
    target = repo.toplevel / item.path
    if item.result is None:
        return Outcome(item, written=False, staged=False,
                       messages=["git-memex does not decide whether a memory is deleted"])
    if item.result.clean:
        store.write_memory_text(target, item.result.text)
        gitio.run(["add", "--", item.path], cwd=repo.toplevel)
        return Outcome(item, written=True, staged=True,
                       messages=[f"merged {item.path} field by field and staged it"])
    if _hand_resolved(target, item.memory_id):
        gitio.run(["add", "--", item.path], cwd=repo.toplevel)
        return Outcome(item, written=False, staged=True, messages=[
            f"{item.path} already parses and has no conflict markers: staged it as your "
            "decision (git add)"])
    store.write_memory_text(target, item.result.text)
    return Outcome(item, written=True, staged=False, messages=[
        f"wrote {item.path} with conflict markers around each undecided field; "
        f"edit it, then `git memex resolve {item.memory_id[:10]}` (or `git add {item.path}`)"])


# ---------------------------------------------------------------- two successors


@dataclass
class Settled:
    """`resolve OLD --keep SUCCESSOR` / `--both`: the three files written and staged."""

    old: store.Loaded
    kept: store.Loaded
    rival: store.Loaded
    both: bool

    def as_json(self) -> dict[str, Any]:
        return {"old": self.old.id, "kept": self.kept.id, "rival": self.rival.id,
                "both": self.both, "superseded_by": self.old.memory.superseded_by,
                "paths": [str(x.path) for x in (self.old, self.kept, self.rival)]}


def _old_version(ws: Workspace, repo: gitio.RepoInfo, loaded_path: Path, memory_id: str,
                 home: store.Home) -> tuple[store.Loaded, list[str]]:
    """The old memory as the decision starts from, and the successors its sides name:
    a conflicted file is merged from its stages (only the successor may be in
    conflict; anything else is decided first), a hand-resolved or clean one is read."""
    rel = loaded_path.relative_to(repo.toplevel).as_posix()
    staged = [u for u in gitio.unmerged(repo.toplevel) if u.path == rel]
    if not staged or _hand_resolved(loaded_path, memory_id):
        try:
            loaded = store.read(loaded_path, home)
        except (InvalidMemory, OSError) as exc:
            raise MemexError(f"{loaded_path} cannot be read ({exc})") from None
        return loaded, [loaded.memory.superseded_by or ""]
    item = _analyse(repo.toplevel, staged[0], sides(repo))
    result = item.result
    if result is None or result.memory is None:
        raise MemexError(f"{rel} is deleted on one side: decide that first (git add / git rm)")
    others = [c for c in result.conflicts if c.field != "superseded_by"]
    if others:
        raise MemexError(f"{rel} has other conflicts to decide first ("
                         + "; ".join(c.describe() for c in others[:3]) + ")")
    named = [str(c.ours or "") for c in result.conflicts] + \
        [str(c.theirs or "") for c in result.conflicts]
    return store.Loaded(result.memory, loaded_path, home, None), named


@writelock.holds_write_lock
def settle(ws: Workspace, old_id: str, keep: str | None = None, both: bool = False
           ) -> Settled:
    """Two memories supersede OLD (two branches did it): keep one (`keep`, an id or
    prefix of one successor) or keep both (`both`); writes the three files, stages them."""
    if (keep is None) == (not both):
        raise UsageError("choose one: --keep SUCCESSOR or --both")
    repo = _repo(ws)
    if ws.memory_dir is None:
        raise MemexError("no memory folder in this repository")
    home = store.Home("repo", ws.memory_dir)
    prefix = store.normalise_id(old_id)
    paths = [p for p in ws.memory_dir.glob("*.md") if p.stem.upper().startswith(prefix)
             and store.is_memory_name(p.name)]
    if len(paths) != 1:
        if len(paths) > 1:
            raise Ambiguous(old_id, [p.stem for p in paths])
        raise NotFound(f"no memory {ulid.quoted_id(old_id)} in {ws.memory_dir_name}/")
    old, named = _old_version(ws, repo, paths[0], paths[0].stem, home)
    loaded, _ = store.read_home(home)
    by_id = {x.id: x for x in loaded}
    found = [x for x in loaded if x.memory.supersedes == old.id]
    found += [by_id[i] for i in named if i in by_id and by_id[i] not in found]
    if len(found) != 2:
        raise MemexError(f"{old.id} has {len(found)} successor(s) "
                         f"({', '.join(x.id for x in found) or 'none'}); --keep and --both "
                         "decide between exactly two")
    if both:
        first, second = lifecycle.pick_earlier(found[0].memory, found[1].memory)
        kept, rival = by_id[first.id], by_id[second.id]
    else:
        want = store.normalise_id(keep or "")
        chosen = [x for x in found if x.id.upper().startswith(want)]
        if len(chosen) != 1:
            raise UsageError(f"--keep {ulid.quoted_id(keep)}: name one of the successors "
                             f"{found[0].id} or {found[1].id}")
        kept = chosen[0]
        rival = found[1] if found[0] is kept else found[0]
    new_old, new_kept, new_rival = lifecycle.settle_successors(
        old.memory, kept.memory, rival.memory, both, clock.now_str(), ws.identity())
    out = [store.Loaded(m, x.path, home, x.parsed)
           for m, x in ((new_old, old), (new_kept, kept), (new_rival, rival))]
    with rollback.restoring() as remember:
        for item in out:
            remember(item.path)
            store.save(item)
        gitio.run(["add", "--", *[x.path.relative_to(repo.toplevel).as_posix() for x in out]],
                  cwd=repo.toplevel)
    return Settled(out[0], out[1], out[2], both)
