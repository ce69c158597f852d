"""Every write git-memex makes to a memory file: capture, update, supersede, forget, status.

One redaction function runs on every path; every write is validated, atomic and logged.
"""

from __future__ import annotations

import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memex.core import clock, lifecycle, masking, model, policy, redact
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.core.ulid import new_ulid
from memex.storage import store, usage, writelock
from memex.storage.homes import Workspace

if TYPE_CHECKING:
    from memex.index import views

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class CaptureRequest:
    """What a capture asks for: the text and the fields given with it."""

    text: str
    scope: str | None = None
    type: str = "knowledge"
    title: str | None = None
    tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    importance: str = "normal"
    role: str = "knowledge"
    confidence: str = "medium"
    source: str = "user"
    via: str = "cli"
    trust_level: str | None = None
    visibility: str = "internal"
    language: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    expires_at: str | None = None
    canonical_ref: str | None = None
    supersedes: str | None = None
    pending_supersedes: str | None = None  # an agent's successor of a person-approved one
    # the scopes whose memories the writer may be told of (possible conflicts): an agent
    # is never shown a memory it may not read (None: every scope, a person's write)
    told_scopes: tuple[str, ...] | None = None


@dataclass
class WriteResult:
    """What a capture or update wrote (or would write, dry run), and its notices."""

    memory: model.Memory
    path: Path
    created: bool
    dry_run: bool = False
    redaction: redact.Redaction | None = None
    near_duplicates: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    possible_conflicts: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.memory.id, "scope": self.memory.scope, "status": self.memory.status,
            "review_state": self.memory.review_state, "path": str(self.path),
            "created": self.created, "dry_run": self.dry_run,
            "near_duplicates": self.near_duplicates,
            "redacted": [f.kind for f in self.redaction.findings] if self.redaction else [],
            "possible_conflicts": self.possible_conflicts,
        }


def max_bytes(ws: Workspace) -> int:
    return ws.int_setting("memex.maxBytes")


def _redact_fields(title: str, body: str, aliases: list[str]
                   ) -> tuple[str, str, list[str], redact.Redaction]:
    """Title, body and aliases through the one redaction function, in one pass."""
    (new_title, new_body, *new_aliases), joined = redact.redact_parts([title, body, *aliases])
    return new_title, new_body, new_aliases, joined


def check_size(ws: Workspace, body: str, aliases: list[str], what: str = "") -> None:
    """memex.maxBytes holds the body and its aliases together."""
    size = model.content_bytes(body, aliases)
    limit = max_bytes(ws)
    if size > limit:
        with_aliases = " with its aliases" if aliases else ""
        raise MemexError(f"memory body{with_aliases} is {size} bytes, over the {limit}-byte "
                         f"limit (memex.maxBytes){what}")


def _aliases(values: list[str]) -> list[str]:
    try:
        return model.normalise_aliases(values)
    except InvalidMemory as exc:
        raise UsageError(str(exc)) from None


def _check_aliases(given: list[str]) -> None:
    """The aliases a write is given, each as stored (its spaces collapsed), hold no
    control character (`model.line_problem`); the memory's own are not checked again."""
    for alias in given:
        if problem := model.line_problem("alias", " ".join(alias.split())):
            raise UsageError(f"{problem}; nothing was saved")


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def similar(a: str, b: str) -> bool:
    return _similar_words(_words(a), _words(b))


def _similar_words(wa: set[str], wb: set[str]) -> bool:
    """`similar` of two texts' word sets."""
    if not wa or not wb:
        return False
    return len(wa & wb) / len(wa | wb) >= 0.8


def _similar_ids(ws: Workspace, scope: str, body: str) -> list[str]:
    """Live memories of the scope whose text is nearly the same: only the best search
    hits are compared, so the check stays cheap however large the store. The index was
    refreshed by the capture's lookup a moment before (no second walk). The search runs
    only when some memory of the scope may be that near (_may_be_near)."""
    mine = _words(body)  # once, not once per hit
    try:
        if not _may_be_near(ws, scope, mine):
            return []
        from memex.search import engine as search  # loaded only when it decides

        hits = search.search(ws, search.SearchRequest(
            query=body[:2000], limit=10, scopes=(scope,), record_access=False,
            vectors=False, refresh=False)).hits  # near-identical text: words suffice
    except MemexError:
        return []
    return [h.id for h in hits if _similar_words(_words(h.memory.body), mine)]


# A memory `similar` to a text lacks at most a fifth of the text's words (|A & B| >=
# 0.8 |A | B| >= 0.8 |A|), so of any K of them it holds at least K minus that many.
# The check asks the index for the memories holding NEAR_AT_LEAST of the text's rarest
# words (K = a fifth + NEAR_AT_LEAST) and compares only those: at 100,000 memories
# ~0.03 s, where the search's any-term lane ranks every memory holding any word of it.
NEAR_AT_LEAST = 6
NEAR_MOST_WORDS = 128  # more words to look up than this: the search decides
# A word in at least this share of the memories (and NEAR_COMMON_MIN) is common: its
# count is not read further (termcounts.rarity); when a text's rarest words include
# one, the search decides.
NEAR_COMMON_SHARE = 20
NEAR_COMMON_MIN = 64
# Memories the index gives that are compared at most: past them, the search decides.
NEAR_COMPARED_MOST = 64
_PLAIN = re.compile(r"[a-z0-9]+")  # a word the index holds as this one token


def _may_be_near(ws: Workspace, scope: str, mine: set[str]) -> bool:
    """Whether a memory of the scope may be `similar` to a text of the words MINE
    (_words): False only when none is (each memory holding enough of its rarest plain
    words is compared); True when the text has too few or too many such words to tell,
    when too few of them are rare, or when too many memories hold enough of them."""
    from memex.index import build, termcounts, views

    plain = sorted(w for w in mine if w.isascii() and _PLAIN.fullmatch(w))
    lacking = len(mine) // 5  # what a similar memory may lack (5 * lacking <= |mine|)
    asked = min(len(plain), lacking + NEAR_AT_LEAST)
    if asked - lacking < 1 or asked > NEAR_MOST_WORDS:
        return True
    with build.open_index(ws, refresh=False) as index:
        stems = termcounts.stems(index.conn, plain)
        cap = max(NEAR_COMMON_MIN, index.report.memories // NEAR_COMMON_SHARE)
        counts = build.term_rarity(index.conn, {its[0]: w for w, its in stems.items()
                                                if len(its) == 1}, cap)

        def rank(word: str) -> int:
            its = stems[word]  # a word of another form than one token: not looked up
            return counts.get(its[0], cap) if len(its) == 1 else cap

        rarest = sorted(plain, key=lambda w: (rank(w), w))[:asked]
        if rank(rarest[-1]) >= cap:
            return True  # a common word among them: too many memories may hold enough
        texts = views.holding(index.conn, scope, rarest, asked - lacking)
        for text in itertools.islice(texts, NEAR_COMPARED_MOST):
            if _similar_words(_words(text), mine):
                return True
        return next(texts, None) is not None  # more than NEAR_COMPARED_MOST: the search


def _check_title(title: str | None) -> None:
    if title is not None and (problem := model.title_problem(title.strip())):
        raise UsageError(f"{problem}; nothing was saved")


def default_title(body: str, limit: int = 80) -> str:
    """The first line with words in it (not a `---` rule or a lone fence), unmarked."""
    first = next((line.strip() for line in body.splitlines() if _WORD.search(line)), "")
    first = model.escape_controls(first.lstrip("#>*- ").strip())
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0] or first[:limit]
    return cut.rstrip(",;:.") + "\u2026"


def default_scope(ws: Workspace) -> str:
    return "project" if ws.in_git else "personal"


def _target_home(ws: Workspace, scope: str) -> store.Home:
    if scope == "personal":
        return store.Home("personal", ws.personal_dir)
    if scope == "project":
        return store.Home("outbox", ws.outbox_dir)
    if scope == "org":
        if ws.org_repo is None:
            raise UsageError("org scope needs `git config memex.orgRepo PATH` (a local clone)")
        return store.Home("org-outbox", ws.org_outbox_dir)
    raise UsageError(f"unknown scope {redact.quoted(scope)}")


@writelock.holds_write_lock
def capture(ws: Workspace, req: CaptureRequest, dry_run: bool = False) -> WriteResult:
    """Save a new memory (or return the identical live one). Nothing written on error.
    The identical-content check and the write happen under the home's write lock, so
    identical concurrent captures make one file."""
    try:
        scope = model.member("scope", model.SCOPES, req.scope or default_scope(ws))
        mtype = model.member("type", model.TYPES, req.type)
        importance = model.member("importance", model.IMPORTANCES, req.importance)
        role = model.member("role", model.ROLES, req.role)
        confidence = model.member("confidence", model.CONFIDENCES, req.confidence)
        source = model.member("source", model.SOURCES, req.source)
        visibility = model.member("visibility", model.VISIBILITIES, req.visibility)
        trust = (model.member("trust_level", model.TRUST_LEVELS, req.trust_level)
                 if req.trust_level else
                 "reviewed" if req.via == "cli" and source == "user" else "untrusted")
    except InvalidMemory as exc:
        raise UsageError(str(exc)) from None
    body = req.text.replace("\r\n", "\n").lstrip("\ufeff").strip()
    if not body:
        raise UsageError("nothing to capture: the text is empty")
    aliases = _aliases(req.aliases)
    _check_aliases(aliases)
    check_size(ws, body, aliases, "; nothing was saved")
    if "\0" in body or any("\0" in a for a in aliases):
        raise UsageError("the text contains NUL bytes; nothing was saved")
    _check_title(req.title)
    title, body, aliases, redaction = _redact_fields((req.title or "").strip(), body, aliases)
    if not title:
        title = default_title(body)
    try:
        tags = model.normalise_tags(req.tags)
        paths = model.normalise_paths(req.paths)
    except InvalidMemory as exc:
        raise UsageError(str(exc)) from None
    notices: list[str] = []
    if req.scope is None and not ws.in_git:
        notices.append("not in a git repository: saved as a personal memory "
                       "(--scope project keeps a local-only project memory)")
    if scope == "project" and not ws.in_git:
        notices.append("not in a git repository: project memories stay local on this machine "
                       f"({ws.outbox_dir})")
    if req.visibility == "private" and scope != "personal":
        notices.append("visibility private: this memory will never be submitted to the repo")

    from memex.index import views
    from memex.workflows import conflicts

    home = _target_home(ws, scope)
    memory_id = new_ulid()
    version = conflicts.cache_version()
    seen = views.neighbours(ws, scope, body, title, tags, paths, home.path, memory_id,
                            version)
    if seen.same is not None:
        return WriteResult(seen.same.memory, seen.same.path, created=False, dry_run=dry_run,
                           redaction=redaction, notices=notices)
    near: list[str] = list(seen.same_title)
    content = model.normalised_text(body)
    same = _identical_unindexed(home, seen.indexed, content)
    if same is not None:
        return WriteResult(same.memory, same.path, created=False, dry_run=dry_run,
                           redaction=redaction, notices=notices)
    near += [i for i in _similar_ids(ws, scope, body) if i not in near]

    at = clock.now_str()
    memory = model.Memory(
        id=memory_id, scope=scope, type=mtype, title=title, body=body,
        repo_id=ws.repo_id if scope != "personal" else None, visibility=visibility,
        tags=tags, aliases=aliases, paths=paths,
        language=req.language, role=role,
        instruction_state="draft" if role == "instruction" else None,
        trust_level=trust, importance=importance, confidence=confidence,
        review_state="draft" if scope != "personal" else None,
        source=source, via=req.via, created_by=ws.identity(),
        created_at=at, updated_at=at, valid_from=req.valid_from, valid_until=req.valid_until,
        expires_at=req.expires_at, canonical_ref=req.canonical_ref, supersedes=req.supersedes,
    )
    if req.pending_supersedes:
        memory.extra[PENDING] = req.pending_supersedes
    model.validate(memory)
    path = store.new_path(home, memory.id)
    memory = masking.mask_memory(memory)  # what is shown (a dry run too) is what is stored
    result = WriteResult(memory, path, created=True, dry_run=dry_run, redaction=redaction,
                         near_duplicates=near, notices=notices)
    _note_conflicts(ws, result, [g for g in seen.gated if g.id != req.supersedes and (
        req.told_scopes is None or g.scope in req.told_scopes)], version)
    if dry_run:
        return result
    store.save(store.Loaded(memory, path, home))
    _indexed_now(ws, path)
    usage.record_in(ws, usage.Op.WRITE, [memory.id])
    result.notices += _embed(ws, memory)
    return result


def _indexed_now(ws: Workspace, path: Path) -> None:
    """Index the file just written from this write's own walk (its lookup refreshed the
    index), so the next command's refresh finds nothing to do (build.note_written)."""
    from memex.index import build

    build.note_written(ws, [path])


def _embed(ws: Workspace, memory: model.Memory) -> list[str]:
    from memex.workflows import embedding  # the vector lane: loaded only by writes

    return embedding.after_write(ws, [memory])


def _identical_unindexed(home: store.Home, indexed: set[str], content: str
                         ) -> store.Loaded | None:
    """A live memory of the target home with this content that the index did not show
    (another process's refresh held the index while this one looked): one listing of
    the folder, and only files the index missed are read."""
    prefix = str(home.path) + os.sep
    for stem in sorted(store.memory_ids(home.path)):
        if f"{prefix}{stem}.md" in indexed:  # no Path object per indexed file
            continue
        path = home.path / f"{stem}.md"
        try:
            other = store.read(path, home)
        except (InvalidMemory, OSError):
            continue
        if other.memory.is_live and model.normalised_text(other.memory.body) == content:
            return other
    return None


def _note_conflicts(ws: Workspace, result: WriteResult, others: list[views.Gated],
                    version: str) -> None:
    """Contradictions with live memories become a notice; nothing is written for them
    (but what the index keeps for the next check: views.keep_pair_cache)."""
    from memex.index import views
    from memex.workflows import conflicts

    def known(row: views.Gated) -> conflicts.Known:
        named = row.names_me
        return conflicts.Known(
            row.id, frozenset(t.lower() for t in row.tags), tuple(row.paths), row.text,
            row.keys, row.feats, None if named is None else (lambda: named))

    found_all, made = conflicts.against_known(result.memory, [known(g) for g in others])
    views.keep_pair_cache(ws, [(others[i].rowid, others[i].hash, keys, feats)
                               for i, (keys, feats) in sorted(made.items())], version)
    mine = result.memory.id[:10]
    for found in found_all:
        why = "; ".join(r.detail for r in found.reasons)
        other = found.b[:10]
        result.possible_conflicts.append({"id": found.b, "reason": why})
        result.notices.append(
            f"may contradict {other}: {why}. Both stay active; decide with `git memex "
            f"supersede {other} TEXT`, `git memex link {mine} contradicts {other}`, or "
            f"`git memex link {mine} related {other}` if they agree")


CONTENT_FIELDS = ("title", "body", "aliases")


@dataclass
class UpdateRequest:
    """What an update asks to change (None / empty: left as it is)."""

    body: str | None = None
    title: str | None = None
    add_tags: list[str] = field(default_factory=list)
    remove_tags: list[str] = field(default_factory=list)
    importance: str | None = None
    confidence: str | None = None
    type: str | None = None
    paths: list[str] | None = None
    aliases: list[str] | None = None  # the whole new list
    add_aliases: list[str] = field(default_factory=list)
    remove_aliases: list[str] = field(default_factory=list)


PENDING = "pending_supersedes"
# what a status change does, as a verb: "an agent cannot retract it"
_STATUS_VERB = {"retracted": "retract", "deprecated": "deprecate", "archived": "archive",
                "active": "restore", "superseded": "retire"}


def refuse_agent(loaded: store.Loaded, via: str, what: str) -> None:
    """Issue 14.8: an agent (MCP) never weakens what a person approved."""
    if via == "mcp" and policy.approved_by_person(loaded.memory):
        m = loaded.memory
        how = ", ".join(x for x in (
            f"review_state {m.review_state}" if m.review_state in
            policy.PERSON_APPROVED_STATES else "",
            "instruction approved" if m.instruction_state == "approved" else "",
            f"approved_by {m.approved_by}" if m.approved_by else "") if x)
        raise MemexError(f"{m.id} was approved by a person ({how}); an agent cannot {what} "
                         "it: use memory_supersede to propose a successor draft, which only "
                         "the user can accept")


def check_editable(loaded: store.Loaded, via: str) -> None:
    """DESIGN.md "Editing shared memories"."""
    memory = loaded.memory
    refuse_agent(loaded, via, "edit")
    if via == "mcp" and loaded.home.in_git:
        raise MemexError(
            f"{memory.id} is shared ({memory.review_state}); agents edit only drafts and "
            "personal memories: use memory_supersede to propose a successor"
        )
    if memory.review_state == "published":
        raise MemexError(
            f"{memory.id} is published: it is not edited but superseded "
            f"(git memex supersede {memory.id[:10]} TEXT)"
        )
    if memory.status == "superseded":
        raise MemexError(f"{memory.id} is superseded by {memory.superseded_by}; edit that one")


def _find_or_none(ws: Workspace, memory_id: str) -> store.Loaded | None:
    try:
        return store.find(ws, memory_id)
    except MemexError:  # gone, or unreadable: nothing to repair there
        return None


def repair_chain(ws: Workspace, loaded: store.Loaded) -> list[str]:
    """Write the chain completion reads only show (DESIGN.md: the next write fixes it).

    Fixes the predecessor that a memory `supersedes` and the memory itself when a
    successor claims it. Pending supersedes (outbox draft over a shared memory) are
    left for submit.
    """
    from memex.index import views

    notices: list[str] = []
    memory = loaded.memory
    at = clock.now_str()
    pairs: list[tuple[store.Loaded, store.Loaded]] = []
    if memory.supersedes and (old := _find_or_none(ws, memory.supersedes)) is not None:
        pairs.append((old, loaded))
    for successor_id in views.successor_ids(ws, memory.id):  # the index: no file scan
        if (successor := _find_or_none(ws, successor_id)) is not None:
            pairs.append((loaded, successor))
    for old, new in pairs:
        if old.memory.superseded_by == new.id and old.memory.status == "superseded":
            continue
        if old.memory.superseded_by and old.memory.superseded_by != new.id:
            continue  # two successors: a conflict for a person, not a repair
        if not old.memory.is_live or not new.memory.is_live:
            continue
        if old.home.in_git and not new.home.in_git:
            continue  # pending: retired by the commit that submits the successor
        retired, _ = lifecycle.supersede(old.memory, new.memory, at, ws.identity())
        old.memory = retired
        store.save(old)
        notices.append(f"repaired the supersede chain: {old.id} is superseded by {new.id}")
    return notices


@writelock.holds_write_lock
def update(ws: Workspace, id_or_prefix: str, req: UpdateRequest, via: str = "cli",
           note: str | None = None, force: bool = False) -> WriteResult:
    """Edit in place. A memory git tracks is not edited while a rebase, merge,
    cherry-pick, revert or am is in progress (its --abort would drop the edit) unless
    `force`; drafts and personal memories always are."""
    from memex.workflows import team  # a tracked file's guard: update only

    loaded = store.find(ws, id_or_prefix)
    guarded = team.guard_tracked([loaded], "this edit", force)
    repaired = repair_chain(ws, loaded)
    if loaded.memory.status == "superseded" and repaired:
        raise MemexError(f"{repaired[-1]}; edit its successor {loaded.memory.superseded_by}")
    check_editable(loaded, via)
    _check_title(req.title)
    old = loaded.memory
    new = old.copy()
    title = req.title if req.title is not None else old.title
    if req.body is not None and req.title is None and old.title == default_title(old.body):
        title = ""  # the title was derived from the old body: derive it from the new one
    body = (req.body if req.body is not None else old.body).replace("\r\n", "\n").strip()
    body = body.lstrip("\ufeff")
    if not body:
        raise UsageError("a memory body cannot be empty (use `git memex forget`)")
    aliases = list(old.aliases) if req.aliases is None else list(req.aliases)
    _check_aliases([*(req.aliases or []), *req.add_aliases])
    removed = {" ".join(a.split()).casefold() for a in req.remove_aliases}
    aliases = _aliases([a for a in aliases + req.add_aliases
                        if " ".join(a.split()).casefold() not in removed])
    check_size(ws, body, aliases)
    # Every write redacts the whole text, also what an earlier hand edit or a merge put there.
    new.title, new.body, new.aliases, redaction = _redact_fields(title.strip(), body, aliases)
    if not new.title:
        new.title = default_title(new.body)
    for name in ("importance", "confidence", "type"):
        value = getattr(req, name)
        if value is not None:
            setattr(new, name, model.check_enum(name, value))
    if req.add_tags or req.remove_tags:
        remove = set(req.remove_tags)
        try:  # the tags given are checked; the memory's own are kept as they are
            added = model.normalise_tags(req.add_tags)
            new.tags = [t for t in dict.fromkeys(new.tags + added) if t not in remove]
            model.check_count("tags", new.tags, model.MAX_TAGS, len(old.tags))
        except InvalidMemory as exc:
            raise UsageError(str(exc)) from None
    if req.paths is not None:
        try:
            new.paths = model.normalise_paths(req.paths)
        except InvalidMemory as exc:
            raise UsageError(str(exc)) from None
    if new == old:
        return WriteResult(old, loaded.path, created=False, redaction=redaction,
                           notices=[*repaired, "nothing changed"])
    at = clock.now_str()
    new.revision = old.revision + 1
    new.updated_at = at
    notices: list[str] = [*guarded, *repaired]
    content_changed = any(getattr(new, f) != getattr(old, f) for f in CONTENT_FIELDS)
    if content_changed and via == "mcp":
        # Words an agent wrote are unreviewed, whoever wrote the original (rule 1); an
        # approved one never gets here (check_editable refuses the agent).
        new.trust_level = "untrusted"
    if content_changed and old.review_state == "approved" and loaded.home.in_git:
        new.review_state = "proposed"
        new.review_history.append(lifecycle.history_entry(
            at, ws.identity(), "approved", "proposed", note or "content edited"))
        notices.append(f"{old.id}: content changed, so it is proposed again for review")
    if loaded.home.in_git:
        notices.append(f"edited {loaded.path} in the working tree; commit it when ready")
    loaded.memory = new
    store.save(loaded)
    _indexed_now(ws, loaded.path)
    usage.record_in(ws, usage.Op.WRITE, [new.id])
    if content_changed:
        notices += _embed(ws, loaded.memory)
    return WriteResult(loaded.memory, loaded.path, created=False, redaction=redaction,
                       notices=notices)


def _carried(name: str, values: list[str], dropped: list[str]) -> list[str]:
    """The old memory's VALUES a successor inherits: one that arrived by git holding a
    control character, which a write refuses (model.line_problem), or past a write's
    bounds (model.WRITE_BOUNDS: too long, or past the number allowed), is left behind and
    its reason added to DROPPED, so the successor is written, not refused for a value
    nobody typed."""
    most = model.WRITE_BOUNDS[name][0]
    kept = []
    for value in values:
        if problem := model.value_problem(name, value):
            dropped.append(problem)
        else:
            kept.append(value)
    if len(kept) > most:
        dropped.append(f"{len(kept) - most} {name}(s) past the first {most}")
    return kept[:most]


@writelock.holds_write_lock
def supersede(ws: Workspace, old_id: str, req: CaptureRequest) -> tuple[WriteResult, Path]:
    """Write a successor of OLD and retire OLD (for shared memories: at submit)."""
    old = store.find(ws, old_id)
    if old.memory.status == "superseded":
        raise lifecycle.TransitionError(
            f"{old.id} is already superseded by {old.memory.superseded_by}; supersede that one")
    if not old.memory.is_live:
        raise lifecycle.TransitionError(
            f"{old.id} is {old.memory.status}; restore it first with `status active`")
    req.scope = old.memory.scope
    if not req.text.strip():
        raise UsageError("the replacement text is empty")
    dropped: list[str] = []
    req.tags = req.tags or _carried("tag", old.memory.tags, dropped)
    req.paths = req.paths or _carried("path", old.memory.paths, dropped)
    # An agent's successor of a person-approved memory outside git is only a proposal:
    # the old one stays until the person accepts (`supersede --accept`) or retires it.
    held = (req.via == "mcp" and not old.home.in_git
            and policy.approved_by_person(old.memory))
    if held:
        req.pending_supersedes = old.id
    else:
        req.supersedes = old.id
    req.aliases = req.aliases or _carried("alias", old.memory.aliases, dropped)
    if req.type == "knowledge":
        req.type = old.memory.type
    result = capture(ws, req)
    if not result.created:
        raise MemexError(f"that text is already memory {result.memory.id}; nothing superseded")
    result.notices.extend(f"{problem}: not carried over from {old.id}" for problem in dropped)
    if held:
        result.notices.append(
            f"{old.id} was approved by a person, so it stays as it is: the successor "
            f"{result.memory.id} waits for the user (git memex supersede --accept "
            f"{result.memory.id[:10]})")
        return result, old.path
    if old.home.in_git:
        result.notices.append(
            f"{old.id} is shared: the successor {result.memory.id} is a draft, and "
            f"{old.id} is retired in the commit that submits it (git memex submit)")
        return result, old.path
    retired, _ = lifecycle.supersede(old.memory, result.memory, clock.now_str(), ws.identity())
    old.memory = retired
    store.save(old)
    usage.record_in(ws, usage.Op.WRITE, [old.id])
    return result, old.path


@writelock.holds_write_lock
def set_status(ws: Workspace, id_or_prefix: str, status: str, note: str | None = None,
               via: str = "cli") -> WriteResult:
    lifecycle.check_note(note)
    loaded = store.find(ws, id_or_prefix)
    if via == "mcp" and loaded.home.in_git:
        raise MemexError(f"{loaded.id} is shared; agents change only drafts and personal ones")
    refuse_agent(loaded, via, _STATUS_VERB.get(status, f"set status {status} on"))
    new = lifecycle.set_status(loaded.memory, status, clock.now_str(), ws.identity(), note)
    loaded.memory = new
    store.save(loaded)
    _indexed_now(ws, loaded.path)
    usage.record_in(ws, usage.Op.WRITE, [new.id])
    notices = []
    if loaded.home.in_git:
        notices.append(f"changed {loaded.path} in the working tree; commit it when ready")
    return WriteResult(new, loaded.path, created=False, notices=notices)


@writelock.holds_write_lock
def accept_successor(ws: Workspace, id_or_prefix: str) -> tuple[WriteResult, store.Loaded]:
    """A person accepts an agent's successor (`supersede --accept ID`): the memory it
    proposes to replace is retired now, and the chain is written on both files."""
    new = store.find(ws, id_or_prefix)
    old_id = new.memory.extra.get(PENDING)
    if not isinstance(old_id, str) or not old_id:
        raise MemexError(f"{new.id} does not wait to supersede anything (no {PENDING}); "
                         f"to replace a memory: git memex supersede OLD TEXT")
    old = store.find(ws, old_id)
    if old.home.in_git:
        raise MemexError(f"{old.id} is shared: it is retired by the commit that submits "
                         f"{new.id} (git memex submit)")
    if not old.memory.is_live:
        raise lifecycle.TransitionError(f"{old.id} is {old.memory.status} already; nothing "
                                        "to accept")
    if not new.memory.is_live:
        raise lifecycle.TransitionError(f"{new.id} is {new.memory.status}; restore it first")
    at = clock.now_str()
    successor = new.memory.copy(revision=new.memory.revision + 1, updated_at=at)
    successor.extra = {k: v for k, v in successor.extra.items() if k != PENDING}
    retired, successor = lifecycle.supersede(old.memory, successor, at, ws.identity())
    new.memory, old.memory = successor, retired
    store.save(new)
    store.save(old)
    usage.record_in(ws, usage.Op.WRITE, [new.id, old.id])
    return WriteResult(successor, new.path, created=False), old


@writelock.holds_write_lock
def delete(ws: Workspace, id_or_prefix: str) -> store.Loaded:
    from memex.workflows import hygiene_cache  # a delete's only

    loaded = store.find(ws, id_or_prefix)
    store.delete(loaded)
    usage.record_in(ws, usage.Op.DELETE, [loaded.id])
    hygiene_cache.clear_side_caches(ws.index_dir)
    return loaded
