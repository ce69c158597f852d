"""The team flow: propose, submit, promote, sync status (DESIGN.md "The team flow").

Personal memories become team knowledge only by explicit steps: `propose` copies
them into the outbox as drafts, `submit` moves drafts into the repo's memory folder
in one local commit holding only memory files, `promote` flips review states in place.
Pull is in `memex.workflows.pull`, staleness in `memex.workflows.freshness`, the PR
mapping in `memex.workflows.prstatus`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memex.core import clock, lifecycle, model, policy, redact
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.core.ulid import new_ulid
from memex.storage import gitio, homes, journal, rollback, store, usage, writelock
from memex.storage.homes import Workspace
from memex.workflows import freshness

TARGETS = ("project", "org")


@dataclass(frozen=True)
class Target:
    """Where submitted memories of one scope live: a repo's memory folder, and its outbox."""

    scope: str
    repo: gitio.RepoInfo
    repo_id: str
    home: store.Home
    outbox: store.Home

    @property
    def toplevel(self) -> Path:
        return self.repo.toplevel


def target(ws: Workspace, scope: str = "project") -> Target:
    """The project repo (scope project) or the org memory repo (`memex.orgRepo`)."""
    if scope == "org":
        if ws.org_repo is None:
            raise UsageError("org scope needs `git config memex.orgRepo PATH` (a local clone "
                             "of the org memory repo)")
        info = gitio.discover(ws.org_repo) if ws.org_repo.is_dir() else None
        if info is None:
            raise MemexError(f"memex.orgRepo {ws.org_repo} is not a git clone with a working "
                             "tree")
        config = gitio.config_map(info.toplevel)
        return Target("org", info, homes.repo_id_for(gitio.origin_url(config), info.toplevel),
                      store.Home("org", store.inside_repo(ws.org_repo / ws.memory_dir_name,
                                                          info.toplevel)),
                      store.Home("org-outbox", ws.org_outbox_dir))
    if scope != "project":
        raise UsageError(f"unknown target {scope!r}; expected project or org")
    if ws.repo is None or ws.memory_dir is None:
        raise MemexError("not inside a git repository: project memories stay in the outbox "
                         "until there is a repo to submit them to")
    return Target("project", ws.repo, ws.repo_id,
                  store.Home("repo", store.inside_repo(ws.memory_dir, ws.repo.toplevel)),
                  store.Home("outbox", ws.outbox_dir))


def _redact_memory(memory: model.Memory) -> tuple[model.Memory, redact.Redaction | None]:
    """The redaction check again, on what is about to be shared (hand edits happen)."""
    (title, body, *aliases), joined = redact.redact_parts(
        [memory.title, memory.body, *memory.aliases])
    if not joined.changed:
        return memory, None
    return memory.copy(title=title, body=body, aliases=aliases), joined


# ---------------------------------------------------------------- propose


@dataclass
class Proposed:
    """A draft made to propose a change to a shared memory."""

    original: store.Loaded
    draft: model.Memory
    path: Path
    created: bool
    notices: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {"id": self.draft.id, "derived_from": self.original.id, "scope": self.draft.scope,
                "review_state": self.draft.review_state, "path": str(self.path),
                "created": self.created, "local_approve": self.draft.local_approve,
                "notices": self.notices}


def refuse_sharing(memory: model.Memory) -> str | None:
    """Why a personal memory may not be proposed (DESIGN.md rules 1 and 2), or None."""
    if memory.visibility == "private":
        return f"{memory.id} is private (visibility: private): it never leaves this machine"
    if memory.role == "instruction":
        return (f"{memory.id} is a personal instruction: it binds only you and is never "
                "proposed to the team")
    if not memory.is_live:
        return f"{memory.id} is {memory.status}: only live memories are proposed"
    return None


def _outbox_home(ws: Workspace, to: str) -> tuple[store.Home, str]:
    if to == "org":
        tgt = target(ws, "org")
        return tgt.outbox, tgt.repo_id
    if to != "project":
        raise UsageError(f"unknown target {to!r}; expected project or org")
    return store.Home("outbox", ws.outbox_dir), ws.repo_id


@writelock.holds_write_lock
def propose(ws: Workspace, ids: Sequence[str], to: str = "project",
            local_approve: bool = False) -> list[Proposed]:
    """Copy personal memories into the outbox as drafts (new id, derived_from).

    All or nothing: every id is checked before anything is written. A draft already
    derived from the same memory with the same content is returned, not copied again.
    """
    if not ids:
        raise UsageError("name at least one personal memory to propose")
    outbox, repo_id = _outbox_home(ws, to)
    scope = model.member("scope", model.SCOPES, to)
    originals: list[store.Loaded] = []
    for loaded in store.find_many(ws, ids):
        if loaded.home.kind != "personal":
            where = "a draft already" if loaded.home.is_outbox else "already shared"
            raise MemexError(f"{loaded.id} is {where} ({loaded.memory.scope}, "
                             f"{loaded.memory.review_state}); propose copies personal memories")
        reason = refuse_sharing(loaded.memory)
        if reason:
            raise MemexError(f"{reason}; nothing proposed")
        if loaded.id not in {o.id for o in originals}:
            originals.append(loaded)

    existing, _ = store.read_all(ws, [to])
    at = clock.now_str()
    results: list[Proposed] = []
    for original in originals:
        earlier = next((x for x in existing if x.memory.derived_from == original.id
                        and x.memory.is_live and model.same_content(x.memory, original.memory)),
                       None)
        if earlier is not None:
            results.append(Proposed(original, earlier.memory, earlier.path, created=False,
                                    notices=[f"already proposed as {earlier.id}"]))
            continue
        source = original.memory
        draft = model.Memory(
            id=new_ulid(), scope=scope, type=source.type, title=source.title, body=source.body,
            repo_id=repo_id, visibility=source.visibility, tags=list(source.tags),
            paths=list(source.paths), language=source.language, role=source.role,
            trust_level=source.trust_level, importance=source.importance,
            confidence=source.confidence, related=list(source.related),
            review_state="draft", derived_from=source.id, source=source.source,
            via=source.via, created_by=ws.identity(), created_at=at, updated_at=at,
            valid_from=source.valid_from, valid_until=source.valid_until,
            expires_at=source.expires_at, canonical_ref=source.canonical_ref,
            local_approve=local_approve,
        )
        draft, redaction = _redact_memory(draft)
        notices = [f"{redaction.notice()} before sharing"] if redaction else []
        model.validate(draft)
        results.append(Proposed(original, draft, store.new_path(outbox, draft.id), True,
                                notices))
    written: list[Path] = []
    try:
        for item in results:
            if item.created:
                store.save(store.Loaded(item.draft, item.path, outbox))
                written.append(item.path)
    except BaseException:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
        raise
    usage.record_in(ws, usage.Op.WRITE, [r.draft.id for r in results if r.created])
    return results


# ---------------------------------------------------------------- submit


@dataclass
class SubmitResult:
    """What a submit committed, retired and left, on which branch."""

    target: Target
    submitted: list[store.Loaded]
    retired: list[store.Loaded]
    already: list[str]
    commit: str | None
    branch: str
    notices: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "scope": self.target.scope, "repo": str(self.target.toplevel),
            "commit": self.commit, "branch": self.branch,
            "submitted": [{"id": x.id, "review_state": x.memory.review_state,
                           "path": str(x.path), "title": x.memory.title}
                          for x in self.submitted],
            "retired": [{"id": x.id, "superseded_by": x.memory.superseded_by,
                         "path": str(x.path)} for x in self.retired],
            "already_in_repo": self.already, "notices": self.notices, "hints": self.hints,
        }


def _select_drafts(ws: Workspace, tgt: Target, ids: Sequence[str], all_drafts: bool
                   ) -> tuple[list[store.Loaded], list[str]]:
    notices: list[str] = []
    if all_drafts:
        if ids:
            raise UsageError("give ids or --all, not both")
        drafts, bad = store.read_home(tgt.outbox)
        for item in bad:
            notices.append(f"skipped unreadable draft {item.path}: {item.reason}")
        keep, left = _live_with_chains(drafts)
        for draft in left:
            if draft.memory.visibility == "private":
                notices.append(f"skipped {draft.id}: private, never submitted")
            else:
                notices.append(f"left {draft.id} in the outbox: it is {draft.memory.status} "
                               "(--all submits live drafts and the drafts they supersede)")
        if not keep:
            raise MemexError(f"nothing to submit: the {tgt.scope} outbox has no live drafts")
        _check_chains(tgt, keep, drafts)
        return keep, notices
    if not ids:
        raise UsageError("name the drafts to submit, or --all")
    chosen: list[store.Loaded] = []
    for loaded in store.find_many(ws, ids, first=tgt.outbox.kind):
        kind = loaded.home.kind
        if kind == "personal":
            raise MemexError(f"{loaded.id} is personal: personal memories are never submitted; "
                             f"copy it to the outbox first: git memex propose {loaded.id[:10]}")
        if loaded.home.in_git:
            raise MemexError(f"{loaded.id} is already in the repo "
                             f"({loaded.memory.review_state}); nothing to submit")
        if loaded.home != tgt.outbox:
            hint = "submit --org" if kind == "org-outbox" else "submit without --org"
            raise MemexError(f"{loaded.id} is a {loaded.memory.scope} draft: use {hint}")
        if loaded.memory.visibility == "private":
            raise MemexError(f"{loaded.id} is private: it is never submitted; nothing moved")
        status = loaded.memory.status
        if status in ("retracted", "archived"):
            raise MemexError(f"{loaded.id} is {status}: only live drafts are submitted "
                             f"(git memex status {loaded.id[:10]} active restores it); "
                             "nothing moved")
        if loaded.id not in {c.id for c in chosen}:
            chosen.append(loaded)
    outbox, _ = store.read_home(tgt.outbox)
    _check_chains(tgt, chosen, outbox)
    return chosen, notices


def _live_with_chains(drafts: list[store.Loaded]
                      ) -> tuple[list[store.Loaded], list[store.Loaded]]:
    """(what `submit --all` takes, what it leaves): the live, non-private drafts, plus
    the superseded outbox drafts behind each of them (a chain travels whole)."""
    by_id = {d.id: d for d in drafts}
    taken: dict[str, store.Loaded] = {}
    for draft in drafts:
        if not draft.memory.is_live or draft.memory.visibility == "private":
            continue
        taken[draft.id] = draft
        current = draft
        while current.memory.supersedes in by_id:
            previous = by_id[current.memory.supersedes or ""]
            if (previous.id in taken or previous.memory.status != "superseded"
                    or previous.memory.superseded_by != current.id
                    or previous.memory.visibility == "private"):
                break
            taken[previous.id] = previous
            current = previous
    kept = [d for d in drafts if d.id in taken]  # outbox order: oldest id first
    return kept, [d for d in drafts if d.id not in taken]


def _check_chains(tgt: Target, chosen: list[store.Loaded], outbox: list[store.Loaded]) -> None:
    """Refuse a batch whose commit would fail verify's link rule: a draft superseding
    an outbox draft left out of the batch (or one superseded by a draft left out), or
    superseding a memory that exists nowhere. The message names the whole chain."""
    batch = {c.id for c in chosen}
    by_id = {d.id: d for d in outbox}
    for draft in chosen:
        memory = draft.memory
        if memory.status == "superseded" and memory.superseded_by not in batch:
            successor = memory.superseded_by or "?"
            chain = _chain_ids(by_id, successor)
            raise MemexError(
                f"{draft.id} is superseded by {successor}, which is not being submitted; "
                f"a chain travels whole: git memex submit {' '.join(chain)}; nothing moved")
        previous = memory.supersedes
        if not previous or previous in batch:
            continue
        if previous in by_id:
            chain = _chain_ids(by_id, draft.id)
            raise MemexError(
                f"{draft.id} supersedes {previous}, a draft still in the outbox: submit the "
                f"chain together: git memex submit {' '.join(chain)}; nothing moved")
        if not store.new_path(tgt.home, previous).exists():
            raise MemexError(
                f"{draft.id} supersedes {previous}, which is neither in the repo nor in the "
                f"outbox: the commit would fail verify's link rule; nothing moved")


def _chain_ids(by_id: dict[str, store.Loaded], newest: str) -> list[str]:
    """Short ids of the outbox chain through `newest` (followed forward to its live
    end first), oldest first."""
    seen = {newest}
    while (nxt := by_id.get(newest)) is not None and nxt.memory.superseded_by in by_id \
            and nxt.memory.superseded_by not in seen:
        newest = nxt.memory.superseded_by or ""
        seen.add(newest)
    out = [newest]
    current = by_id.get(newest)
    while current is not None and current.memory.supersedes in by_id:
        previous = current.memory.supersedes or ""
        if previous in out:
            break
        out.append(previous)
        current = by_id[previous]
    return [i[:10] for i in reversed(out)]


def mid_operation(repo: gitio.RepoInfo, what: str, force: bool = False,
                  forceable: bool = True) -> str | None:
    """Refuse `what` (a write to tracked memory files, a commit) while a rebase, merge,
    cherry-pick, revert or am is under way: its `--abort` would silently throw the
    write away. With `force`, the notice to print instead; None when nothing is under way."""
    state = gitio.sequencer_state(repo)
    if state is None:
        return None
    if force:
        return f"a {state} is in progress; {what} anyway (--force): `git {state} --abort` " \
               "would throw it away"
    insist = " (or --force to insist)" if forceable else ""
    raise MemexError(f"a {state} is in progress: `git {state} --abort` would silently throw "
                     f"away {what}; finish it (git {state} --continue) or abort it first"
                     f"{insist}; nothing changed")


def guard_tracked(items: Iterable[store.Loaded], what: str, force: bool = False) -> list[str]:
    """`mid_operation` for the repos holding those of `items` that git tracks (the
    project's memory folder, the org repo's); outbox and personal writes go ahead."""
    notices: list[str] = []
    seen: set[Path] = set()
    for item in items:
        if not item.home.in_git or item.home.path in seen:
            continue
        seen.add(item.home.path)
        repo = gitio.discover(item.home.path) if item.home.path.is_dir() else None
        notice = mid_operation(repo, what, force) if repo is not None else None
        if notice:
            notices.append(notice)
    return notices


def _check_git_state(tgt: Target, new_branch: bool, force: bool, notices: list[str]) -> str:
    notice = mid_operation(tgt.repo, "the submit commit", force)
    if notice:
        notices.append(notice)
    branch = gitio.current_branch(tgt.toplevel)
    if branch is None and not new_branch:
        if notice:
            return "HEAD"
        raise MemexError(f"{tgt.toplevel}: HEAD is detached; check out a branch to submit to, "
                         "or make one: submit --branch; nothing moved")
    if not notice:
        busy = gitio.operation_in_progress(tgt.repo)  # a bisect
        if busy:
            raise MemexError(f"{tgt.toplevel}: {busy} is in progress; finish or abort it, "
                             "then submit again; nothing moved")
    return branch or "HEAD"


DEFAULT_BRANCH_PATTERN = "memex/{user}/{date}"


def branch_name(ws: Workspace, top: Path, notices: list[str]) -> str:
    """A new branch name from memex.branchPattern (`{user}`: the identity without its
    namespace, made ref-safe; `{date}`: today, UTC): `-2`, `-3` appended when taken;
    masked as a typed --branch-name is (a ref leaves with the push)."""
    pattern = ws.setting("memex.branchPattern") or DEFAULT_BRANCH_PATTERN
    user = ws.identity().split(":", 1)[-1]
    user = re.sub(r"[^A-Za-z0-9._-]+", "-", user).strip("-.") or "me"
    name = pattern.replace("{user}", user).replace("{date}", clock.now().strftime("%Y-%m-%d"))
    name = _masked_input("the branch name (memex.branchPattern)", name, notices) or name
    check_branch_name(top, name, "memex.branchPattern")
    candidate, n = name, 1
    while gitio.rev_parse(top, f"refs/heads/{candidate}"):
        n += 1
        candidate = f"{name}-{n}"
    return candidate


def check_branch_name(top: Path, name: str, where: str) -> None:
    if gitio.run(["check-ref-format", "--branch", name], cwd=top, check=False).returncode:
        raise UsageError(f"{name!r} (from {where}) is not a valid branch name")


def _switch_new(tgt: Target, name: str) -> tuple[str | None, str | None]:
    """`git switch -c NAME` (the working tree and the index carried over). Returns
    (the branch left, or None when HEAD was detached; the commit it was on)."""
    top = tgt.toplevel
    before, base = gitio.current_branch(top), gitio.rev_parse(top, "HEAD")
    proc = gitio.run(["switch", "--quiet", "-c", name], cwd=top, check=False)
    if proc.returncode:
        raise MemexError(f"cannot make branch {name}: {(proc.stderr or '').strip()}; "
                         "nothing moved")
    return before, base


def _switch_back(tgt: Target, name: str, before: str | None, base: str | None) -> None:
    top = tgt.toplevel
    back = ["switch", "--quiet", before] if before else ["switch", "--quiet", "--detach",
                                                         base or "HEAD"]
    gitio.run(back, cwd=top, check=False)
    gitio.run(["branch", "--quiet", "-D", name], cwd=top, check=False)


def _read_repo_file(path: Path, home: store.Home) -> store.Loaded | None:
    if not path.exists():
        return None
    try:
        return store.read(path, home)
    except (OSError, InvalidMemory) as exc:
        raise MemexError(f"{path} exists but cannot be read ({exc}); nothing moved") from None


@writelock.holds_write_lock
def submit(ws: Workspace, ids: Sequence[str] = (), all_drafts: bool = False,
           scope: str = "project", message: str | None = None, new_branch: bool = False,
           new_branch_name: str | None = None, force: bool = False,
           retire_approved: bool = False) -> SubmitResult:
    """Move drafts into the repo as `proposed` in one local commit of memory files only.

    All or nothing: the repo files are written, the commit is attempted, and on any
    failure every repo file gets its previous bytes back (new ones are deleted) and the
    index is restored; the outbox is touched only after the commit succeeded. A
    process killed part-way leaves a journal the next writing command settles.

    `new_branch` (or a `new_branch_name`) first makes a branch as `git switch -c`
    does (named by memex.branchPattern), commits there and stays on it, recording
    where it started in `branch.<name>.memexBase`; on failure the old branch is checked
    out again and the new one deleted. Nothing makes a branch without it.
    """
    tgt = target(ws, scope)
    with journal.repo_lock(tgt.repo, writelock.lock_timeout(ws)):
        settled = journal.recover(tgt.repo)
        problem = journal.index_lock_problem(tgt.repo)
        if problem is not None:
            raise MemexError(problem)
        result = _submit(ws, tgt, ids, all_drafts, message, new_branch, new_branch_name,
                         force, retire_approved)
    if settled:
        result.notices.insert(0, settled)
    return result


@contextlib.contextmanager
def _journaled(tgt: Target, items: list[store.Loaded], drafts: list[store.Loaded]
               ) -> Iterator[None]:
    """The submit journal around the repo writes, the commit and the outbox deletes."""
    texts = {i.path: store.render(i.memory, i.parsed)[1].encode("utf-8") for i in items}
    record = journal.begin(tgt.repo, texts, [d.path for d in drafts])
    try:
        yield
    except BaseException:
        # The commit failed and the submit put the files back itself; if that failed
        # too, the journal stays for the next writing command to undo.
        with contextlib.suppress(OSError, MemexError):
            if record.restored():
                record.remove()
        raise
    if not any(d.path.exists() for d in drafts):
        # Done. An outbox copy that could not be deleted keeps the journal, and the
        # next writing command finishes the move.
        with contextlib.suppress(OSError):
            record.remove()


def _submit(ws: Workspace, tgt: Target, ids: Sequence[str], all_drafts: bool,
            message: str | None, new_branch: bool, new_branch_name: str | None,
            force: bool, retire_approved: bool = False) -> SubmitResult:
    drafts, notices = _select_drafts(ws, tgt, ids, all_drafts)
    make_branch = new_branch or new_branch_name is not None
    branch = _check_git_state(tgt, make_branch, force, notices)
    message = _masked_input("the commit message", message, notices)
    new_branch_name = _masked_input("the branch name", new_branch_name, notices)
    if new_branch_name is not None:
        check_branch_name(tgt.toplevel, new_branch_name, "--branch-name")
        if gitio.rev_parse(tgt.toplevel, f"refs/heads/{new_branch_name}"):
            raise MemexError(f"a branch named {new_branch_name} already exists; name another "
                             "(or plain submit on it after `git switch`); nothing moved")
    at, me = clock.now_str(), ws.identity()
    batch = {d.id for d in drafts}

    planned: list[store.Loaded] = []
    retired: list[store.Loaded] = []
    already: list[str] = []
    for draft in drafts:
        memory = draft.memory
        if memory.review_state not in (None, "draft"):
            raise MemexError(f"{draft.id} in the outbox is {memory.review_state}, not a draft; "
                             "nothing moved")
        memory, redaction = _redact_memory(memory)
        if redaction:
            notices.append(f"{draft.id}: {redaction.notice()}")
        path = store.new_path(tgt.home, draft.id)
        present = _read_repo_file(path, tgt.home)
        if present is not None:
            if not model.same_content(present.memory, memory):
                raise MemexError(
                    f"{draft.id} already exists in the repo with other content ({path}); "
                    "a person must decide which is right; nothing moved")
            already.append(draft.id)
            continue
        memory = memory.copy(repo_id=tgt.repo_id, proposed_by=me, review_state="draft")
        memory = lifecycle.review_transition(memory, "proposed", at, me, "submitted")
        if memory.local_approve:
            memory = lifecycle.review_transition(memory, "approved", at, me, "local approve")
            memory.local_approve = False
        if memory.supersedes and memory.supersedes not in batch:
            old = _read_repo_file(store.new_path(tgt.home, memory.supersedes), tgt.home)
            if old is not None and any(r.id == old.id for r in retired):
                raise MemexError(f"two drafts supersede {old.id}; submit one of them; "
                                 "nothing moved")
            if old is not None and not retire_approved and memory.trust_level == "untrusted" \
                    and policy.approved_by_person(old.memory):
                raise MemexError(
                    f"{draft.id}, an unreviewed draft (trust_level untrusted, e.g. an agent's), "
                    f"would retire {old.id}, which a person approved "
                    f"({old.memory.review_state}); read both, then submit again with --yes "
                    "to retire it, or leave that draft out; nothing moved")
            if old is not None:
                old_retired, memory = lifecycle.supersede(old.memory, memory, at, me)
                retired.append(store.Loaded(old_retired, old.path, old.home, old.parsed))
        model.validate(memory)
        planned.append(store.Loaded(memory, path, tgt.home, draft.parsed))

    # Identical files already in the repo: a submit interrupted after writing them.
    # Commit them if git does not have them yet; rewrite nothing.
    leftover = [store.new_path(tgt.home, i) for i in already]
    leftover = [p for p in leftover if _uncommitted(tgt, p)]
    commit: str | None = None
    moved = [d for d in drafts if d.id in already or any(p.id == d.id for p in planned)]
    made: tuple[str | None, str | None] | None = None
    if (planned or leftover) and make_branch:
        branch = new_branch_name or branch_name(ws, tgt.toplevel, notices)
        made = _switch_new(tgt, branch)
    try:
        with _journaled(tgt, planned + retired, moved):
            if planned or leftover:
                commit = _write_and_commit(
                    tgt, planned + retired,
                    message or _commit_message(planned, retired, leftover), leftover)
            elif already:
                notices.append("every draft is already in the repo and committed; nothing "
                               "to commit")
            for draft in moved:
                try:
                    store.delete(draft)
                except MemexError as exc:
                    notices.append(f"submitted, but the outbox copy stays: {exc}")
    except BaseException:
        if made is not None:
            _switch_back(tgt, branch, *made)
        raise
    if made is not None and made[1]:
        gitio.run(["config", f"branch.{branch}.{gitio.BASE_KEY}", made[1]],
                  cwd=tgt.toplevel, check=False)
    elif commit and not make_branch:
        notice = _default_branch_notice(tgt, branch)
        if notice:
            notices.append(notice)
    usage.record_in(ws, usage.Op.WRITE, [p.id for p in planned + retired], repo_id=tgt.repo_id)
    result = SubmitResult(tgt, planned, retired, already, commit, branch, notices)
    if commit:
        result.hints = _push_hints(tgt, branch)
    return result


def _uncommitted(tgt: Target, path: Path) -> bool:
    proc = gitio.run(["status", "--porcelain", "--untracked-files=all", "--", str(path)],
                     cwd=tgt.toplevel, check=False)
    return bool(proc.stdout.strip())


def _masked_input(what: str, value: str | None, notices: list[str]) -> str | None:
    """VALUE (a commit message, a branch name: both leave with the next push) masked as
    a write masks a memory, with a notice when that changed it."""
    if not value:
        return value
    redaction = redact.redact(value)
    if redaction.changed:
        notices.append(f"{what}: {redaction.notice()}")
    return redaction.text


def _commit_message(planned: list[store.Loaded], retired: list[store.Loaded],
                    leftover: list[Path]) -> str:
    n = len(planned) + len(leftover)
    lines = [f"memex: submit {n} memor{'y' if n == 1 else 'ies'} for review", ""]
    for item in planned:
        lines.append(f"- {item.id} [{item.memory.review_state}] {item.memory.title}"[:200])
    for item in retired:
        lines.append(f"- retire {item.id} (superseded by {item.memory.superseded_by})")
    for path in leftover:
        lines.append(f"- {path.stem} (written by an earlier submit)")
    return "\n".join(lines) + "\n"


def _write_and_commit(tgt: Target, items: list[store.Loaded], message: str,
                      unchanged: Sequence[Path] = ()) -> str:
    made_folder = not tgt.home.path.exists()
    try:
        with rollback.restoring() as keep:
            for item in items:
                keep(item.path)
                item.memory, text = store.render(item.memory, item.parsed)
                store.write_atomic(item.path, text)
            return gitio.commit_only(tgt.repo, [i.path for i in items] + list(unchanged),
                                     message)
    except BaseException as exc:
        if made_folder:
            with contextlib.suppress(OSError):
                tgt.home.path.rmdir()
        if isinstance(exc, gitio.GitError):
            raise MemexError(f"the commit failed, so nothing moved (the outbox and the repo "
                             f"are as before):\n{exc}") from None
        if isinstance(exc, OSError):
            raise store.write_failed(exc, tgt.toplevel, "commit in") from None
        raise


def _default_branch_notice(tgt: Target, branch: str) -> str | None:
    default = gitio.remote_default_branch(tgt.toplevel)
    if default is None or default.split("/", 1)[-1] != branch:
        return None
    return (f"submitted onto {branch}, the remote's default branch: a pull request needs a "
            "branch; next time: git memex submit --branch ID... (or --branch-name NAME)")


def _push_hints(tgt: Target, branch: str) -> list[str]:
    top = tgt.toplevel
    has_upstream = gitio.upstream(top) is not None
    remotes = gitio.remotes(top)
    remote = "origin" if "origin" in remotes else (remotes[0] if remotes else None)
    hints: list[str] = []
    prefix = f"git -C {top} " if tgt.scope == "org" else "git "
    if remote is None:
        return ["no remote configured: the commit stays local"]
    hints.append(prefix + ("push" if has_upstream else f"push -u {remote} {branch}"))
    default = gitio.remote_default_branch(top, remote)
    if default is None or default.split("/", 1)[-1] != branch:
        base = default.split("/", 1)[-1] if default else "main"
        hints.append(f"then open a pull request, e.g.: gh pr create --fill --base {base} "
                     f"--head {branch}")
        hints.append("after it merges: git memex pr-status --apply, then switch back and "
                     "git memex pull")
    return hints


# ---------------------------------------------------------------- promote


@dataclass
class Promoted:
    """A memory's review state or role before and after a promote."""

    item: store.Loaded
    before: str | None
    after: str | None
    what: str  # "review" or "instruction"

    def as_json(self) -> dict[str, object]:
        m = self.item.memory
        return {"id": m.id, "what": self.what, "from": self.before, "to": self.after,
                "review_state": m.review_state, "instruction_state": m.instruction_state,
                "approved_by": m.approved_by, "path": str(self.item.path)}


def _next_review_state(memory: model.Memory) -> str:
    return {"proposed": "approved", "approved": "published"}.get(memory.review_state or "", "")


def personal_instruction_transition(memory: model.Memory, to: str, at: str, by: str,
                                    note: str | None = None) -> model.Memory:
    """Approve or revoke a personal instruction: it binds only its owner (DESIGN.md rule 1),
    so the owner's own `promote --instruction` is its review; review_state is untouched."""
    model.check_enum("instruction_state", to)
    if memory.role != "instruction":
        raise lifecycle.TransitionError(
            f"{memory.id} is not an instruction (role: {memory.role}); personal memories are "
            "not reviewed")
    current = memory.instruction_state or "draft"
    if to not in lifecycle.INSTRUCTION_MOVES.get(current, ()):
        raise lifecycle.TransitionError(f"{memory.id}'s instruction is already {current}")
    out = memory.copy(instruction_state=to, updated_at=at, revision=memory.revision + 1)
    if to == "approved":
        out.approved_by = by
        if out.trust_level != "trusted":
            out.trust_level = "reviewed"
    what = f"instruction {current} -> {to}" + (f": {note}" if note else "")
    out.review_history.append(lifecycle.history_entry(at, by, memory.review_state,
                                                      memory.review_state or "none", what))
    return out


@writelock.holds_write_lock
def promote(ws: Workspace, ids: Sequence[str], to: str | None = None, reject: bool = False,
            resubmit: bool = False, instruction: bool = False, revoke: bool = False,
            note: str | None = None, force: bool = False,
            notices: list[str] | None = None) -> list[Promoted]:
    """Flip review_state (or an instruction's instruction_state) in place, in the working
    tree, along DESIGN.md's state machine. All ids are checked before any file changes."""
    modes = [m for m, on in (("--reject", reject), ("--resubmit", resubmit),
                             ("--instruction", instruction), ("--revoke", revoke),
                             ("--to", to is not None)) if on]
    if len(modes) > 1:
        raise UsageError(f"choose one of {', '.join(modes)}")
    if not ids:
        raise UsageError("name at least one memory to promote")
    if reject and not note:
        raise UsageError("--reject needs a reason: --note TEXT")
    lifecycle.check_note(note)
    at, me = clock.now_str(), ws.identity()
    plan: list[Promoted] = []
    for loaded in store.find_many(ws, ids):
        personal = loaded.home.kind == "personal"
        if not loaded.home.in_git and not (personal and (instruction or revoke)):
            hint = (f"submit it first: git memex submit {loaded.id[:10]}"
                    if loaded.home.is_outbox else
                    "personal memories are not reviewed; a personal instruction is approved "
                    f"with git memex promote {loaded.id[:10]} --instruction")
            raise MemexError(f"{loaded.id} is not in the repo ({hint}); nothing changed")
        memory = loaded.memory
        if instruction or revoke:
            state = "revoked" if revoke else "approved"
            new = (personal_instruction_transition(memory, state, at, me, note) if personal
                   else lifecycle.instruction_transition(memory, state, at, me, note))
            plan.append(Promoted(store.Loaded(new, loaded.path, loaded.home, loaded.parsed),
                                 memory.instruction_state or "draft", state, "instruction"))
            continue
        goal = ("rejected" if reject else "proposed" if resubmit else to
                or _next_review_state(memory))
        if not goal:
            raise lifecycle.TransitionError(
                f"{memory.id} is {memory.review_state}: there is no next review state "
                + ("(resubmit it with --resubmit)" if memory.review_state == "rejected"
                   else "(final)"))
        command = lifecycle.review_command(memory, goal)
        if command == "merge":
            raise lifecycle.TransitionError(
                f"{memory.id}: proposed -> published happens when its PR merges "
                "(git memex pr-status --apply); promote it to approved first")
        if command is None or command == "submit":
            # the state machine's own error names the allowed moves
            lifecycle.review_transition(memory, goal, at, me, note)
            raise lifecycle.TransitionError(f"{memory.id}: {goal} is not a promote move")
        new = lifecycle.review_transition(memory, goal, at, me, note)
        plan.append(Promoted(store.Loaded(new, loaded.path, loaded.home, loaded.parsed),
                             memory.review_state, goal, "review"))
    seen: set[str] = set()
    for step in plan:
        if step.item.id in seen:
            raise UsageError(f"{step.item.id} is named twice")
        seen.add(step.item.id)
    warned = guard_tracked([p.item for p in plan], "these review changes", force)
    if notices is not None:
        notices.extend(warned)
    with rollback.restoring() as keep:
        for step in plan:
            keep(step.item.path)
            store.save(step.item)
    usage.record_in(ws, usage.Op.WRITE, [p.item.id for p in plan])
    return plan


def commit_hint(items: Iterable[store.Loaded], subject: str, toplevel: Path | None) -> str:
    paths = []
    for item in items:
        try:
            paths.append(str(item.path.relative_to(toplevel)) if toplevel else str(item.path))
        except ValueError:
            paths.append(str(item.path))
    return f"git commit -m {subject!r} -- " + " ".join(paths)


# ---------------------------------------------------------------- sync status


@dataclass
class SyncStatus:
    """The outbox and the branch as sync-status reports them."""

    outbox: list[store.Loaded]
    by_state: dict[str, list[store.Loaded]]
    quarantined: list[store.Quarantined]
    uncommitted: list[str]
    branch: str | None
    upstream: str | None
    ahead: int | None
    behind: int | None
    last_fetch: str | None
    stale: bool

    def as_json(self) -> dict[str, object]:
        def rows(items: list[store.Loaded]) -> list[dict[str, object]]:
            return [{"id": x.id, "scope": x.memory.scope, "review_state": x.memory.review_state,
                     "status": x.memory.status, "title": x.memory.title, "path": str(x.path)}
                    for x in items]
        return {"outbox": rows(self.outbox),
                "repo": {state: rows(items) for state, items in self.by_state.items()},
                "uncommitted": self.uncommitted, "branch": self.branch,
                "upstream": self.upstream, "ahead": self.ahead, "behind": self.behind,
                "last_fetch": self.last_fetch, "stale": self.stale,
                "unreadable": [str(q.path) for q in self.quarantined]}


def sync_status(ws: Workspace) -> SyncStatus:
    """The outbox, every in-repo memory by review state, and where the branch stands."""
    loaded, bad = store.read_all(ws, ["project", "org"])
    outbox = [x for x in loaded if x.home.is_outbox]
    by_state: dict[str, list[store.Loaded]] = {s: [] for s in model.REVIEW_STATES[1:]}
    for item in loaded:
        if item.home.in_git:
            by_state.setdefault(item.memory.review_state or "none", []).append(item)
    uncommitted: list[str] = []
    branch = up = None
    ahead = behind = None
    if ws.repo is not None:
        top = ws.repo.toplevel
        proc = gitio.run(["status", "--porcelain", "--untracked-files=all", "--",
                          ws.memory_dir_name], cwd=top, check=False)
        uncommitted = [line[3:] for line in proc.stdout.splitlines() if len(line) > 3]
        branch = gitio.current_branch(top)
        up = gitio.upstream(top)
        if up:
            counts = gitio.run(["rev-list", "--left-right", "--count", f"HEAD...{up}"],
                               cwd=top, check=False).stdout.split()
            if len(counts) == 2:
                ahead, behind = int(counts[0]), int(counts[1])
    last, stale = freshness.staleness(ws)
    return SyncStatus(outbox, by_state, bad, uncommitted, branch, up, ahead, behind,
                      clock.format_time(last) if last else None, stale)

