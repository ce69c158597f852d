"""Export and import: a portable JSON Lines archive, and open-memex folders.

The archive is JSON Lines: a manifest line, then one line per memory holding its
home (personal | outbox | repo | org), its file name, a sha256 and the file's exact
text. Carrying the text rather than re-emitting fields is what makes a round trip
byte-identical (hand-edited comments, key order and unknown keys included), and
a line per memory keeps a damaged archive readable: a bad line is reported and the
rest still import. (A tar.gz would also carry the bytes, but its member names are
paths to police and one corrupt block loses everything after it.)

Import never overwrites a differing memory: the same bytes are "unchanged", other
bytes are a conflict, reported, with a nonzero exit. Every entry passes redaction
and the size limit; names that are not `<ULID>.md` are refused, and so is an entry
whose text does not match its `sha256`. Nothing private and nothing unsubmitted
lands in a shared folder: a draft exported from the repo (or org) folder goes to
the matching outbox, and a `visibility: private` memory that is not a draft is
refused there (private never enters git; a foreign one lands as an outbox draft). A git-memex
archive is restored unchanged; foreign data (an open-memex `.ai/open-memex/`
folder, or JSON lines with fields instead of text) gets `via: import` and keys
that say where it came from.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.core import clock, frontmatter, jsonout, lifecycle, masking, model, redact
from memex.core.errors import InvalidMemory, MemexError, UsageError
from memex.core.ulid import is_ulid, new_ulid
from memex.storage import store, usage, writelock
from memex.storage.homes import Workspace
from memex.workflows import migrate, writes

FORMAT = "git-memex-export"
VERSION = 1
OPEN_MEMEX_DIRS = (Path(".ai") / "open-memex", Path(".open-memex"))
KEY_FILE = "export.key"
SIGNATURE = "hmac-sha256"


# ---------------------------------------------------------------- signing


def export_key(ws: Workspace, create: bool = False) -> bytes | None:
    """This machine's export key ($GIT_MEMEX_HOME/export.key, 0600, made on first use):
    an archive signed with it is one's own export, whose review state import restores."""
    path = ws.home / KEY_FILE
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            return None
        key = secrets.token_bytes(32)
        try:
            ws.home.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another export made it first
            return export_key(ws)
        except OSError as exc:
            raise MemexError(f"cannot create {path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
    except OSError as exc:
        raise MemexError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(key) >= 16:
        return key
    if create:  # an export signs with it: a short key would sign nothing worth trusting
        raise MemexError(
            f"{path} holds {len(key)} byte(s), too few to sign an export (a key is made "
            "with 32): move it away and export again to make a new one (archives signed "
            "with the old key then import as untrusted drafts)")
    return None  # import: nothing counts as one's own export


def sign(key: bytes, home: str, name: str, text: str) -> str:
    """The signature of one archive entry (its home, file name and exact text)."""
    message = json.dumps([home, name, text], ensure_ascii=False).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


# ---------------------------------------------------------------- export


def export_lines(ws: Workspace, include_personal: bool = False
                 ) -> tuple[list[str], list[store.Quarantined]]:
    """The archive's lines: this project's memories (outbox + repo); personal memories and
    `visibility: private` project memories only on request (private never leaves the
    machine by default)."""
    scopes = ["project", "personal"] if include_personal else ["project"]
    entries: list[dict[str, Any]] = []
    skipped: list[store.Quarantined] = []
    key = export_key(ws, create=True)
    assert key is not None
    for home in store.homes(ws, scopes):
        for path in store.home_files(home):
            try:
                text = store.decode(store.home_bytes(path, home))
                loaded = store.from_text(text, path, home)
            except (InvalidMemory, OSError) as exc:
                skipped.append(store.Quarantined(path, str(exc)))
                continue
            if loaded.memory.visibility == "private" and not include_personal:
                continue
            # the archive holds what a write would store: a token in a file that arrived
            # by git (or was edited by hand) is masked, and the masked text is signed
            text = store.mask_text(text)
            entries.append({
                "home": home.kind, "name": path.name, "id": loaded.id,
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "text": text,
                "signature": sign(key, home.kind, path.name, text),
            })
    manifest = {
        "format": FORMAT, "version": VERSION, "exported_at": clock.now_str(),
        "repo_id": ws.repo_id, "include_personal": include_personal, "count": len(entries),
        "signed": SIGNATURE,
    }
    # layout controls (bidi, C1) written escaped: the same JSON, nothing raw on a terminal
    lines = [jsonout.escape_layout(json.dumps(x, ensure_ascii=False))
             for x in (manifest, *entries)]
    usage.record_in(ws, usage.Op.EXPORT, [str(e["id"]) for e in entries])
    return lines, skipped


# ---------------------------------------------------------------- import


@dataclass
class Entry:
    """One memory to import, wherever it came from."""

    where: str  # "line 3" or a file path, for messages
    home: str | None  # the home it was exported from (None: decide from the memory)
    name: str | None
    text: str | None = None
    sha256: object = None  # the archive's checksum of `text`, when it carries one
    signature: object = None  # the exporting machine's HMAC of the entry (see `sign`)
    data: dict[str, Any] | None = None
    body: str = ""
    foreign: bool = False
    # the id a foreign entry without a ULID gets, drawn in the importing process in the
    # input's order (`_new_ids`: monotonic, whichever process prepares the entry)
    new_id: str | None = None


@dataclass
class ImportReport:
    imported: list[tuple[str, str]] = field(default_factory=list)  # (id, path)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)  # (id, why)
    rejected: list[tuple[str, str]] = field(default_factory=list)  # (where, why)
    notices: list[str] = field(default_factory=list)
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return not self.conflicts and not self.rejected

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok, "dry_run": self.dry_run,
            "imported": [{"id": i, "path": p} for i, p in self.imported],
            "unchanged": self.unchanged,
            "conflicts": [{"id": i, "reason": r} for i, r in self.conflicts],
            "rejected": [{"where": w, "reason": r} for w, r in self.rejected],
            "notices": self.notices,
        }


def _archive_entries(path: Path, limit: int, report: ImportReport) -> Iterator[Entry]:
    line_limit = 8 * limit + 65536  # a JSON-escaped body of `limit` bytes plus its header
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise MemexError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        first = True
        for number, raw in enumerate(handle, start=1):
            where = f"line {number}"
            if not raw.strip():
                continue
            if len(raw) > line_limit:
                report.rejected.append((where, f"entry of {len(raw)} bytes is over the "
                                               f"size limit (memex.maxBytes {limit})"))
                continue
            try:
                item = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                report.rejected.append((where, f"not a JSON line ({exc})"))
                first = False
                continue
            except RecursionError:  # nested deeper than the interpreter's stack
                report.rejected.append((where, "not a JSON line (nested too deeply)"))
                first = False
                continue
            if not isinstance(item, dict):
                report.rejected.append((where, "not a JSON object"))
                continue
            if first and "format" in item:
                first = False
                if item.get("format") != FORMAT:
                    raise UsageError(f"{path}: not a git-memex export "
                                     f"(format {redact.quoted(item.get('format'))})")
                if not isinstance(item.get("version"), int) or item["version"] > VERSION:
                    version = redact.quoted(item.get("version"))
                    raise UsageError(f"{path}: export version {version} is newer than "
                                     "this git-memex reads")
                continue
            first = False
            if isinstance(item.get("text"), str):
                home = item.get("home")
                yield Entry(where, home if isinstance(home, str) else "",
                            item.get("name") if isinstance(item.get("name"), str) else "",
                            text=item["text"], sha256=item.get("sha256"),
                            signature=item.get("signature"))
            elif isinstance(item.get("front_matter"), dict):
                yield Entry(where, None, None, data=item["front_matter"],
                            body=str(item.get("body") or ""), foreign=True)
            else:
                report.rejected.append((where, "no `text` or `front_matter` in the entry"))


def _folder_entries(folder: Path, report: ImportReport) -> Iterator[Entry]:
    """An open-memex folder: `.ai/open-memex/` or `.open-memex/` inside `folder`, or
    the folder itself (a repo's folder, or open-memex's data directory)."""
    root = next((folder / d for d in OPEN_MEMEX_DIRS if (folder / d).is_dir()), folder)
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root)
        if path.is_symlink() or any(p.startswith(".") for p in rel.parts):
            report.rejected.append((str(path), "symlink or hidden path: skipped"))
            continue
        if path.name.lower() in ("readme.md", "index.md", "changelog.md"):
            continue
        try:
            parsed = frontmatter.parse(store.read_text(path))
        except (InvalidMemory, OSError) as exc:
            report.rejected.append((str(path), str(exc)))
            continue
        yield Entry(str(path), None, None, data=parsed.data, body=parsed.body, foreign=True)


def _safe_name(name: str) -> str | None:
    if "/" in name or "\\" in name or ".." in name or "\0" in name:
        return None
    if not name.endswith(".md") or not is_ulid(name[:-3]):
        return None
    return name


def _home_path(ws: Workspace, kind: str) -> Path:
    if kind == "personal":
        return ws.personal_dir
    if kind == "outbox":
        return ws.outbox_dir  # this repo's outbox, whichever repo the entry came from
    if kind == "repo":
        if ws.memory_dir is None:
            raise MemexError("a shared (repo) memory needs a git repository to land in")
        return ws.memory_dir
    if kind in ("org", "org-outbox"):
        if ws.org_repo is None:
            raise MemexError("an org memory needs `git config memex.orgRepo PATH`")
        return ws.org_repo / ws.memory_dir_name if kind == "org" else ws.org_outbox_dir
    raise MemexError(f"unknown home {kind!r}")


# open-memex's `source` values -> (source, via) of protocol v2 here
OPEN_MEMEX_SOURCES = {"cli": ("user", "cli"), "tool": ("tool", "mcp"),
                      "keyword": ("keyword", "hook"), "inference": ("inference", None)}
_PEOPLE = ("created_by", "proposed_by", "approved_by")


def _namespaced(value: object) -> object:
    """`alice` -> `local:alice` (identities here are namespaced)."""
    if isinstance(value, str) and value.strip() and ":" not in value:
        return f"local:{value.strip()}"
    return value


def map_foreign(data: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """Front matter from another tool (open-memex v1 or v2, JSON lines with fields) in
    this protocol's terms; keys it does not know are kept. Pure."""
    data = dict(data)
    if model.legacy_version(data) is not None:
        data = migrate.convert(data, notes)
    source = data.get("source")
    if isinstance(source, str) and source in OPEN_MEMEX_SOURCES:
        data["source"], via = OPEN_MEMEX_SOURCES[source]
        if via and not data.get("via"):
            data["via"] = via
    elif source is not None and source not in model.SOURCES:
        data["imported_source"] = source
        data["source"] = "import"
    for key in ("scope_key", "project_name"):
        data.pop(key, None)  # open-memex's project key: this repo's repo_id replaces it
    if data.get("scope") == "user":
        data["scope"] = "personal"
    for key in _PEOPLE:
        data[key] = _namespaced(data.get(key))
    history = data.get("review_history")
    if isinstance(history, list):
        data["review_history"] = [
            {**entry, "by": _namespaced(entry.get("by"))} if isinstance(entry, dict) else entry
            for entry in history]
    for key, value in list(data.items()):
        if value is None:
            del data[key]
    data.setdefault("source", "import")
    data.setdefault("via", "import")
    return data


_TIMES = ("created_at", "updated_at")  # a foreign entry's times; now where left out


def _foreign_memory(ws: Workspace, entry: Entry, notes: list[str]
                    ) -> tuple[model.Memory, tuple[str, ...]]:
    """A memory from another tool's fields, in this repo's terms, and which of its
    times (created_at, updated_at) the entry left out and the import set to now."""
    data = map_foreign(entry.data or {}, notes)
    original_id = str(data.get("id") or "")
    if not is_ulid(original_id.upper()):
        data["id"] = entry.new_id or new_ulid()
        if original_id:
            data["imported_id"] = original_id
    else:
        data["id"] = original_id.upper()
    data.setdefault("scope", "project")
    stamped = tuple(key for key in _TIMES if key not in data)
    for key in stamped:
        data[key] = clock.now_str()
    memory = model.from_front_matter(data, entry.body)
    if memory.scope == "org":
        raise MemexError("org memories are imported into the org repository itself")
    return memory, stamped


def untrusted_draft(memory: model.Memory, at: str, by: str, origin: str,
                    dropped: str = "") -> str:
    """Make an imported memory an untrusted draft (issue 14.7): review, instruction
    and trust fields from outside become one review_history entry, never state.
    Returns that entry's note, masked (it is shown in the import's report). DROPPED:
    what `drop_outside_paths` said, added to the note."""
    was: list[str] = []
    if memory.review_state and memory.review_state != "draft":
        was.append(f"was {memory.review_state}")
    if memory.instruction_state and memory.instruction_state != "draft":
        was.append(f"instruction {memory.instruction_state}")
    if memory.trust_level and memory.trust_level != "untrusted":
        was.append(f"trust {memory.trust_level}")
    # who, masked as the stored file is (one masking step): the note is also a notice
    if memory.approved_by:
        was.append(redact.redact(f"by {memory.approved_by}").text)
    elif memory.proposed_by:
        was.append(redact.redact(f"proposed by {memory.proposed_by}").text)
    if dropped:
        was.append(dropped)
    note = f"imported from {origin}" + (f"; {', '.join(was)}" if was else "")
    before = memory.review_state
    memory.review_state = None if memory.scope == "personal" else "draft"
    memory.instruction_state = "draft" if memory.role == "instruction" else None
    memory.trust_level = "untrusted"
    memory.approved_by = None
    memory.proposed_by = None
    memory.extra.pop("local_approve", None)
    memory.review_history.append(lifecycle.history_entry(
        at, by, before, memory.review_state or "none", note))
    return note


def drop_outside_paths(memory: model.Memory) -> str:
    """Drop MEMORY's `paths` globs that name nothing in the repository (the write rule,
    model.outside_problem: absolute, `~`, a drive, a `..` part); what was dropped, as a
    note (masked), or "" when none was. An import keeps the memory: a glob that can
    never match a file is the one thing wrong with it."""
    dropped = [p for p in memory.paths if model.outside_problem(p)]
    if not dropped:
        return ""
    memory.paths = [p for p in memory.paths if not model.outside_problem(p)]
    return ("dropped paths outside the repository "
            + ", ".join(redact.quoted(p, 80) for p in dropped))


def _in_this_repo(ws: Workspace, memory: model.Memory) -> str:
    """Set an imported memory's repo_id to this repo's (personal: none); its home."""
    if memory.scope == "personal":
        memory.repo_id = None
        return "personal"
    if memory.scope == "org":
        return "org-outbox"
    if memory.repo_id and memory.repo_id != ws.repo_id:
        memory.extra["imported_repo_id"] = memory.repo_id
    memory.repo_id = ws.repo_id
    return "outbox"


def _as_imported_before(current: bytes, memory: model.Memory,
                        parsed: frontmatter.Parsed | None, stamped: tuple[str, ...]
                        ) -> str | None:
    """The text this import would have written at the time of an earlier import of the
    same entry (same import note, earlier `at`; the times of STAMPED, which the entry
    left out, as that import set them), so importing twice is "unchanged", not a
    conflict; None when the file on disk is not such an earlier import."""
    try:
        before = frontmatter.load(current.decode("utf-8"))[0]
    except (InvalidMemory, UnicodeDecodeError):
        return None
    if not before.review_history or not memory.review_history:
        return None
    mine, theirs = memory.review_history[-1], before.review_history[-1]
    if {k: v for k, v in mine.items() if k != "at"} != \
            {k: v for k, v in theirs.items() if k != "at"}:
        return None
    memory.review_history[-1] = {**mine, "at": theirs.get("at", mine.get("at", ""))}
    for key in stamped:
        setattr(memory, key, getattr(before, key))
    return frontmatter.rewrite(memory, parsed)


def _own_export(ws: Workspace, entry: Entry, memory: model.Memory, key: bytes | None
                ) -> bool:
    """Is this entry one's own export (signed with KEY, this machine's export key), for
    this repo (or personal)? Only then is its review state restored as it was."""
    if key is None or not isinstance(entry.signature, str) or entry.text is None:
        return False
    expected = sign(key, entry.home or "", entry.name or "", entry.text)
    if not hmac.compare_digest(expected, entry.signature.lower()):
        return False
    return memory.scope == "personal" or memory.repo_id == ws.repo_id


def _check_sha256(entry: Entry) -> None:
    """An archive entry whose text is not what its checksum says is damaged or edited."""
    if entry.sha256 is None or entry.text is None:
        return  # hand-made archives may leave it out
    actual = hashlib.sha256(entry.text.encode("utf-8")).hexdigest()
    if not isinstance(entry.sha256, str) or entry.sha256.lower() != actual:
        digest = isinstance(entry.sha256, str) and len(entry.sha256) == 64 \
            and all(c in "0123456789abcdefABCDEF" for c in entry.sha256)
        given = repr(entry.sha256) if digest else redact.quoted(entry.sha256)  # a digest: as is
        raise MemexError(f"sha256 {given} does not match the entry's text "
                         f"({actual}): damaged or edited; not imported")


def _shared_landing(kind: str, memory: model.Memory, notes: list[str]) -> str:
    """Where an archive entry from a shared (git) folder may land: drafts go to the
    outbox (only `submit` moves a draft into git); a private memory never enters git."""
    if kind not in ("repo", "org"):
        return kind
    if memory.review_state == "draft":
        outbox = "outbox" if kind == "repo" else "org-outbox"
        notes.append(f"review_state: draft, so imported into the {outbox} (submit it to "
                     "share it), not the shared folder")
        return outbox
    if memory.visibility == "private":
        raise MemexError(f"{memory.id} is visibility: private with review_state "
                         f"{memory.review_state}: private memories never enter the shared "
                         f"({kind}) folder; not imported")
    return kind


def _find_existing(run: _Run, memory_id: str) -> Path | None:
    name = f"{memory_id}.md"
    for folder in run.holding(name):
        if (folder / name).is_file():
            return folder / name
    return None


# Files an import writes at once (one flush to disk for each batch of them).
IMPORT_BATCH = 2000
# The forked helper's share of the entries' preparing, and how far ahead it may run
# (index.ahead.in_order's pattern and queue, in blocks of ahead.BLOCK entries). Three
# blocks in four: at 10k this process's own part (reading, lookups, the writes' system
# time, unpickling) costs about half as much as all the preparing; with seven in eight
# the helper ran 1.5-1.9x as long as this process (docs/benchmarks.md, import).
HELPER_PATTERN = "pccc"
HELPER_AHEAD = 32


@dataclass
class _Run:
    """What one import looks up once, and the files it has still to write."""

    folders: list[Path]
    key: bytes | None
    # (where in the input, id, path, text)
    pending: list[tuple[str, str, Path, str]] = field(default_factory=list)
    listed: dict[Path, frozenset[str]] = field(default_factory=dict)
    homes: dict[str, Path] = field(default_factory=dict)
    where: dict[str, list[Path]] | None = None  # name -> the folders listing it

    def home(self, ws: Workspace, kind: str) -> Path:
        """The folder of home KIND (`_home_path`), worked out once per import."""
        path = self.homes.get(kind)
        if path is None:
            path = self.homes[kind] = _home_path(ws, kind)
        return path

    def holding(self, name: str) -> list[Path]:
        """The folders (of `folders`, in their order) whose listing holds NAME: one
        lookup, not one per folder."""
        if self.where is None:
            self.where = {}
            for folder in self.folders:
                self.listed_in(folder, "")
                for listed in self.listed[folder]:
                    self.where.setdefault(listed, []).append(folder)
        return self.where.get(name, [])

    def listed_in(self, folder: Path, name: str) -> bool:
        """Whether FOLDER held NAME when first asked (one listing per folder: the
        import holds the write lock, and the names it adds itself are each refused a
        second time by `seen`); the caller stats only a name found."""
        names = self.listed.get(folder)
        if names is None:
            try:
                names = frozenset(os.listdir(folder))
            except OSError:
                names = frozenset()
            self.listed[folder] = names
        return name in names

    def flush(self, report: ImportReport) -> None:
        """Write the pending files; one that cannot be written is refused, not imported."""
        if not self.pending:
            return
        failed = dict(store.write_new_files([(path, text)
                                             for _, _, path, text in self.pending]))
        for where, memory_id, path, _ in self.pending:
            problem = failed.get(path)
            if problem is None:
                report.imported.append((memory_id, str(path)))
            else:
                report.rejected.append((where, str(problem)))
        self.pending.clear()


@dataclass
class _Context:
    """What every entry of one import is prepared with (the same for all of them)."""

    ws: Workspace
    limit: int
    origin: str
    at: str  # the import's time: each entry's import history entry says it
    by: str
    key: bytes | None


@dataclass
class _Prepared:
    """One entry's pure part (no file read or written): the memory it becomes, the
    text stored for it (masked), and what the import says about it. An exception is
    kept, to be raised where the import reaches this entry: EARLY before the check for
    an id seen twice, LATE after it (as a one-entry-at-a-time import raises them)."""

    memory_id: str = ""
    kind: str = ""
    text: str = ""
    restored: bool = False
    rewritten: bool = False  # restored, but not byte for byte (paths dropped)
    notes: list[str] = field(default_factory=list)  # said when the memory is written
    masked: str | None = None  # the masking notice, said whatever becomes of the entry
    early: Exception | None = None
    late: Exception | None = None
    # For an earlier import's file (`_as_imported_before`); not sent from a helper
    # process (the parent prepares such an entry again).
    memory: model.Memory | None = None
    parsed: frontmatter.Parsed | None = None
    stamped: tuple[str, ...] = ()  # `_foreign_memory`'s times set to now

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "memory": None, "parsed": None}


def _prepare(ctx: _Context, entry: Entry) -> _Prepared:
    """Everything of one entry that touches no file: checks, parse, the memory in this
    repo's terms (an untrusted draft unless restored), and the masked text to store.
    Validated once (from_front_matter; the import's own changes are valid values), the
    text scanned for secrets once; an entry with one is masked as a write masks it."""
    done = _Prepared()
    try:
        memory, parsed = _prepared_memory(ctx, entry, done)
    except Exception as exc:  # noqa: BLE001 - raised where the import reaches the entry
        done.early = exc
        return done
    done.memory, done.parsed, done.memory_id = memory, parsed, memory.id
    try:
        kept = entry.text if done.restored and not done.rewritten else None
        done.text = _stored_text(memory, parsed, kept, done)
    except Exception as exc:  # noqa: BLE001 - raised after the check for an id seen twice
        done.late = exc
    return done


def _prepared_memory(ctx: _Context, entry: Entry, done: _Prepared
                     ) -> tuple[model.Memory, frontmatter.Parsed | None]:
    notes = done.notes
    parsed: frontmatter.Parsed | None = None
    if entry.foreign:
        memory, done.stamped = _foreign_memory(ctx.ws, entry, notes)
    else:
        name = _safe_name(entry.name or "")
        if name is None:
            raise MemexError(f"refused file name {redact.quoted(entry.name)}: only "
                             "<ULID>.md, no folders")
        if entry.home not in store.HOME_KINDS:
            raise MemexError(f"unknown home {redact.quoted(entry.home)}")
        kind = entry.home
        assert entry.text is not None
        _check_sha256(entry)
        if "\0" in entry.text:
            raise MemexError("entry holds NUL bytes")
        parsed = frontmatter.parse(entry.text)
        if model.legacy_version(parsed.data) is not None:
            raise MemexError(store.LEGACY_REASON + " (before exporting)")
        memory = model.from_front_matter(parsed.data, parsed.body)
        if name != f"{memory.id}.md":
            raise MemexError(f"file name {name} does not match its id {memory.id}")
        if memory.scope != store.SCOPE_OF_HOME[kind]:
            raise MemexError(f"scope {memory.scope!r} does not belong in the {kind} folder")
        done.restored = _own_export(ctx.ws, entry, memory, ctx.key)
        if done.restored:
            done.kind = _shared_landing(kind, memory, notes)
    if not done.restored:
        if problem := model.written_problem(memory):
            raise MemexError(f"{memory.id}: {problem}; not imported")
        done.kind = _in_this_repo(ctx.ws, memory)
        dropped = drop_outside_paths(memory)
        note = untrusted_draft(memory, ctx.at, ctx.by, ctx.origin, dropped)
        if "; " in note:
            notes.append(f"kept as an untrusted draft ({note})")
    elif dropped := drop_outside_paths(memory):  # restored, state kept: said as history
        done.rewritten = True
        memory.review_history.append(lifecycle.history_entry(
            ctx.at, ctx.by, memory.review_state or "none", memory.review_state or "none",
            f"restored from {ctx.origin}; {dropped}"))
        notes.append(dropped)
    size = model.content_bytes(memory.body, memory.aliases)
    if size > ctx.limit:
        raise MemexError(f"{memory.id}: body of {size} bytes is over the {ctx.limit}-byte "
                         "limit (memex.maxBytes, aliases included); not imported")
    return memory, parsed


def _stored_text(memory: model.Memory, parsed: frontmatter.Parsed | None,
                 kept: str | None, done: _Prepared) -> str:
    """The text an entry is stored as: KEPT (an own export's text, byte for byte) or the
    memory written out, when the secret detector finds nothing in it (one pass over what
    is stored: title, body, aliases, every other field and comment). Else what a write
    stores: title, body and aliases masked (the memory validated again only if that
    changed them), tags and paths as the store masks them when a private block there
    would leave a bracketed placeholder (no tag, a glob class) in the text
    (`masking.mask_shaped`), the text written again only if so, then the whole text
    masked. The memory was validated when read (from_front_matter), and the import
    changes only state fields, to valid values: it is not validated again."""
    text = kept if kept is not None else frontmatter.rewrite(memory, parsed)
    if not redact.find_secrets(text):
        return text
    (title, body, *aliases), joined = redact.redact_parts(
        [memory.title, memory.body, *memory.aliases])
    reshaped = []
    for name in ("tags", "paths"):
        values, changed = masking.mask_shaped(name, getattr(memory, name))
        if changed:
            setattr(memory, name, values)
            reshaped.append(name)
    if joined.changed or reshaped:
        memory.title, memory.body, memory.aliases = title, body, aliases
        said = [joined.notice()] if joined.changed else []
        said += [f"redacted a private block in its {name}" for name in reshaped]
        done.masked = f"{memory.id}: {'; '.join(said)}"
        if joined.changed:
            model.validate(memory)
        text = frontmatter.rewrite(memory, parsed)
    # what store.mask_text stores; the scan above already found a secret in the text
    # when the fields were clean, so it is masked without scanning first
    return redact.redact(text).text


@writelock.holds_write_lock
def import_path(ws: Workspace, source: Path, dry_run: bool = False,
                progress: Callable[[int, int], None] | None = None,
                fork: bool | None = None) -> ImportReport:
    """Import an archive file or an open-memex folder into this workspace; PROGRESS (done,
    total) after each entry. Each entry's pure part (`_prepare`) may run in a forked
    helper on a second core (index.ahead; FORK: None lets it decide); a new id for an
    entry from another tool's fields is drawn here first (`_new_ids`); the lookups and
    writes stay in this process, in the input's order."""
    report = ImportReport(dry_run=dry_run)
    limit = writes.max_bytes(ws)
    if source.is_dir():
        entries: Iterable[Entry] = _folder_entries(source, report)
        origin = f"folder {source.name}"
    elif source.is_file():
        entries = _archive_entries(source, limit, report)
        origin = f"archive {source.name}"
    else:
        raise UsageError(f"no such file or folder: {redact.shown(str(source))}")
    seen: set[str] = set()
    todo = list(entries)
    run = _Run([home.path for home in store.homes(ws)], export_key(ws))
    ctx = _Context(ws, limit, origin, clock.now_str(), ws.identity(), run.key)
    _new_ids(todo)
    from memex.index import ahead

    # The helper prepares three blocks in four (this process also looks up and writes
    # every file), up to HELPER_AHEAD blocks ahead (~3.6 KB an entry), so a flush here
    # does not stop it.
    prepared = ahead.in_order(todo, lambda entry: _prepare(ctx, entry), fork=fork,
                              pattern=HELPER_PATTERN, queued=HELPER_AHEAD)
    try:
        for done, (entry, ready) in enumerate(zip(todo, prepared, strict=True), start=1):
            try:
                _import_one(ctx, entry, ready, report, seen, dry_run, run)
            except MemexError as exc:
                report.rejected.append((entry.where, str(exc)))
            if len(run.pending) >= IMPORT_BATCH or done == len(todo):
                run.flush(report)
            if progress is not None:
                progress(done, len(todo))
    finally:
        prepared.close()  # an import that stops early ends the helper
    if report.imported and not dry_run:
        usage.record_in(ws, usage.Op.IMPORT, [i for i, _ in report.imported])
    return report


def _new_ids(entries: list[Entry]) -> None:
    """Give each foreign entry whose id is not a ULID its new id now, in order, so the
    entry may be prepared in the helper process (a ULID drawn there would not be
    monotonic with this process's). `_foreign_memory` reads the id after map_foreign,
    which leaves `id` as it is."""
    for entry in entries:
        if entry.foreign and entry.data is not None and \
                not is_ulid(str(entry.data.get("id") or "").upper()):
            entry.new_id = new_ulid()


def _import_one(ctx: _Context, entry: Entry, ready: _Prepared, report: ImportReport,
                seen: set[str], dry_run: bool, run: _Run) -> None:
    """One prepared entry: refused, unchanged, a conflict, or queued to be written."""
    if ready.early is not None:
        raise ready.early
    if ready.memory_id in seen:
        raise MemexError(f"{ready.memory_id} appears twice in the input")
    seen.add(ready.memory_id)
    if ready.masked is not None:  # said even when the masked entry is then refused
        report.notices.append(ready.masked)
    if ready.late is not None:
        raise ready.late
    text = ready.text
    memory_id = ready.memory_id
    folder = run.home(ctx.ws, ready.kind)
    target = folder / f"{memory_id}.md"
    existing = _find_existing(run, memory_id)
    if existing is None and run.listed_in(folder, target.name) and target.is_file():
        existing = target
    if existing is not None:
        try:
            current = existing.read_bytes()
        except OSError as exc:
            raise MemexError(f"cannot read {existing}: {exc.strerror or exc}") from None
        if (not ready.restored or ready.rewritten) and current != text.encode("utf-8"):
            if ready.memory is None:  # prepared by the helper: again here, as it was
                ready = _prepare(ctx, entry)
            assert ready.memory is not None
            text = store.mask_text(_as_imported_before(current, ready.memory, ready.parsed,
                                                       ready.stamped)
                                   or text)
        if current == text.encode("utf-8"):
            report.unchanged.append(memory_id)
        else:
            report.conflicts.append((memory_id, f"{existing} exists with other content; "
                                                "left as it is (compare, then supersede "
                                                "or delete one by hand)"))
        return
    report.notices.extend(f"{memory_id}: {n}" for n in ready.notes)
    if dry_run:
        report.imported.append((memory_id, str(target)))
    else:
        run.pending.append((entry.where, memory_id, target, text))  # masked above
