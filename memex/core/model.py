"""The memory record of protocol v2: fields, enums, defaults and validation (pure)."""

from __future__ import annotations

import dataclasses
import operator
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal, TypeVar, get_args

from memex.core import clock, lazyre
from memex.core.errors import InvalidMemory
from memex.core.ulid import is_ulid

SCHEMA_VERSION = 2

Scope = Literal["personal", "project", "org"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
RESERVED_SCOPES = ("team", "public")
Visibility = Literal["private", "internal", "shared"]
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
MemoryType = Literal[
    "preference", "fact", "decision", "lesson", "warning", "workflow",
    "architecture", "constraint", "todo", "knowledge", "observation",
]
TYPES: tuple[MemoryType, ...] = get_args(MemoryType)
Role = Literal["knowledge", "instruction"]
ROLES: tuple[Role, ...] = get_args(Role)
InstructionState = Literal["draft", "approved", "revoked"]
INSTRUCTION_STATES: tuple[InstructionState, ...] = get_args(InstructionState)
TrustLevel = Literal["untrusted", "reviewed", "trusted"]
TRUST_LEVELS: tuple[TrustLevel, ...] = get_args(TrustLevel)
Importance = Literal["low", "normal", "high"]
IMPORTANCES: tuple[Importance, ...] = get_args(Importance)
Confidence = Literal["high", "medium", "low"]
CONFIDENCES: tuple[Confidence, ...] = get_args(Confidence)
Status = Literal["active", "superseded", "deprecated", "retracted", "archived"]
STATUSES: tuple[Status, ...] = get_args(Status)
ReviewState = Literal["draft", "proposed", "approved", "rejected", "published"]
REVIEW_STATES: tuple[ReviewState, ...] = get_args(ReviewState)
Source = Literal["user", "tool", "keyword", "inference", "import"]
SOURCES: tuple[Source, ...] = get_args(Source)
LIVE_STATUSES: tuple[Status, ...] = ("active", "deprecated")

ENUMS: dict[str, tuple[str, ...]] = {
    "scope": SCOPES,
    "visibility": VISIBILITIES,
    "type": TYPES,
    "role": ROLES,
    "instruction_state": INSTRUCTION_STATES,
    "trust_level": TRUST_LEVELS,
    "importance": IMPORTANCES,
    "confidence": CONFIDENCES,
    "status": STATUSES,
    "review_state": REVIEW_STATES,
    "source": SOURCES,
}
# Each enum's values by themselves: check_enum's answer for a valid value, in one lookup.
_ENUM_VALUES: dict[str, dict[str, str]] = {
    name: {choice: choice for choice in choices} for name, choices in ENUMS.items()}

# The canonical key order (DESIGN.md, "The memory file"); the emitter writes this order.
FIELD_ORDER = (
    "id", "schema_version", "revision", "repo_id",
    "scope", "visibility",
    "type", "title", "tags", "aliases", "paths", "language",
    "role", "instruction_state", "trust_level", "importance", "confidence",
    "status", "supersedes", "superseded_by", "related", "extends", "contradicts",
    "review_state", "proposed_by", "approved_by", "derived_from", "review_history",
    "status_history",
    "source", "via", "created_by",
    "created_at", "updated_at", "retired_at", "valid_from", "valid_until", "expires_at",
    "canonical_ref", "pinned", "local_approve",
)
# The links between memories a front matter may list (`link`, `show`, the index's links).
RELATIONS = ("extends", "contradicts", "related")
LIST_FIELDS = frozenset({"tags", "aliases", "paths", "related", "extends", "contradicts"})
HISTORY_FIELDS = frozenset({"review_history", "status_history"})
TIME_FIELDS = frozenset(
    {"created_at", "updated_at", "retired_at", "valid_from", "valid_until", "expires_at"}
)
INT_FIELDS = frozenset({"schema_version", "revision"})
BOOL_FIELDS = frozenset({"pinned", "local_approve"})
HISTORY_KEYS = ("at", "by", "from", "to", "note")

# Other phrasings of what a memory answers (questions, synonyms, the symptom), written
# by whoever writes it and searched as a low-weight field.
MAX_ALIASES = 8
MAX_ALIAS_CHARS = 200
# What one write may give (a file from git may hold more: it is read as it is): tags and
# paths live in the front matter, outside memex.maxBytes, and each is an index term.
MAX_TAGS = 64
MAX_TAG_CHARS = 200
MAX_PATHS = 64
MAX_PATH_CHARS = 1024
# A one-line field a write is given -> (at most this many values, of at most this many
# characters each).
WRITE_BOUNDS = {"tag": (MAX_TAGS, MAX_TAG_CHARS), "path": (MAX_PATHS, MAX_PATH_CHARS),
                "alias": (MAX_ALIASES, MAX_ALIAS_CHARS)}
_TAG_RE = lazyre.compile(r"^[^\s,\[\]{}#]+$")


@dataclass
class Memory:
    """One memory. `extra` keeps keys this version does not know, in file order."""

    id: str
    scope: Scope
    type: MemoryType = "knowledge"
    title: str = ""
    body: str = ""
    schema_version: int = SCHEMA_VERSION
    revision: int = 1
    repo_id: str | None = None
    visibility: Visibility = "internal"
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    language: str | None = None
    role: Role = "knowledge"
    instruction_state: InstructionState | None = None
    trust_level: TrustLevel = "untrusted"
    importance: Importance = "normal"
    confidence: Confidence = "medium"
    status: Status = "active"
    supersedes: str | None = None
    superseded_by: str | None = None
    related: list[str] = field(default_factory=list)
    extends: list[str] = field(default_factory=list)
    contradicts: list[str] = field(default_factory=list)
    review_state: ReviewState | None = None
    proposed_by: str | None = None
    approved_by: str | None = None
    derived_from: str | None = None
    review_history: list[dict[str, str]] = field(default_factory=list)
    status_history: list[dict[str, str]] = field(default_factory=list)
    source: Source = "user"
    via: str = "cli"
    created_by: str | None = None
    created_at: str = ""
    updated_at: str = ""
    retired_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    expires_at: str | None = None
    canonical_ref: str | None = None
    pinned: bool = False
    local_approve: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def front_matter(self) -> dict[str, Any]:
        """Known fields in canonical order, empty ones left out, then unknown keys."""
        # A set value is kept at once (most are: texts, numbers, lists with items);
        # of the others only None, "", [] and False are left out (0 and {} are kept).
        out: dict[str, Any] = {
            name: value for name, value in zip(FIELD_ORDER, _FIELD_VALUES(self), strict=True)
            if value or not (value is None or value is False or value == "" or value == [])}
        if self.extra:
            for key, value in self.extra.items():
                if key not in out:
                    out[key] = value
        return out

    def copy(self, **changes: Any) -> Memory:
        clone = dataclasses.replace(self, **changes)
        for name in LIST_FIELDS | HISTORY_FIELDS:
            if name not in changes:
                setattr(clone, name, [dict(h) if isinstance(h, dict) else h
                                      for h in getattr(self, name)])
        if "extra" not in changes:
            clone.extra = dict(self.extra)
        return clone

    @property
    def is_live(self) -> bool:
        return self.status in LIVE_STATUSES

    @property
    def is_reviewed(self) -> bool:
        return self.review_state in ("approved", "published")

    @property
    def summary(self) -> str:
        return summarise(self.title, self.body)

    @property
    def label(self) -> str:
        """The bracket tag lists show (`label_of` its review state and scope)."""
        return label_of(self.review_state, self.scope)


def label_of(review_state: str | None, scope: str) -> str:
    """The bracket tag lists show: the review state for shared scopes, else the scope."""
    return f"[{review_state or scope}]"


# Every field of FIELD_ORDER of a memory, in that order, in one call; the same for the
# enum fields and the time fields (validate).
_FIELD_VALUES = operator.attrgetter(*FIELD_ORDER)
_ENUM_FIELDS = operator.attrgetter(*_ENUM_VALUES)
_TIME_NAMES = tuple(TIME_FIELDS)
_TIME_FIELDS = operator.attrgetter(*_TIME_NAMES)


# Characters that change how a terminal or a reader lays text out: C0/C1 controls
# (newline, escape, carriage return), line and paragraph separators, bidi overrides.
# LAYOUT_CONTROLS: those but C0, which JSON escapes itself (jsonout escapes these).
_LAYOUT_BREAKERS = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
# Invisible format characters (Unicode Cf but the prepended number signs of Arabic,
# Syriac and Kaithi, which show): soft hyphen, zero-width space, word joiner and the
# invisible operators, deprecated format controls, BOM, interlinear annotation, musical
# and shorthand format controls, Egyptian hieroglyph controls, tag characters. A line
# holding one looks like another, a word or token split by one reads whole to a person
# and not to a search, a detector or a rule, and tag characters spell text only a model
# reads. Written, displayed and escaped as the controls are.
_INVISIBLE = ("\xad\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb"
              "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
              "\U000e0001\U000e0020-\U000e007f")
# The bidi marks (Arabic letter mark, left-to-right, right-to-left mark) and the joiners
# (ZWNJ, ZWJ): right-to-left text, Persian, Indic scripts and emoji sequences need them,
# so a write and a display keep them but between two ASCII word characters, where they
# join nothing and only split a word (`_splits`); machine output escapes them all.
BIDI_MARKS = "\u061c\u200e\u200f"
_JOINERS = "\u200c\u200d"
_SPLITTERS = BIDI_MARKS + _JOINERS
# Variation selectors (VS1-16, VS17-256): one after a character picks its emoji or text
# form or a kanji variant, and is kept; a run of them (or one that follows nothing) is
# how bytes are hidden after an emoji ("emoji smuggling"): refused and escaped.
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_SELECTOR = lazyre.compile(f"[{_SELECTORS}]")
_CONTEXTUAL = _SPLITTERS + _SELECTORS
LAYOUT_CONTROLS = _LAYOUT_BREAKERS + _SPLITTERS + _INVISIBLE
_CONTROLS = "\x00-\x1f" + _LAYOUT_BREAKERS + _INVISIBLE
# One character class each (a look-around alternation made escape_text of a 3 KB body
# ~2.7x slower): a joiner or mark found is let through by `_escaped` / `_refused` unless
# it `_splits` a word.
_CONTROL = lazyre.compile(f"[{_CONTROLS}{_CONTEXTUAL}]")
_BREAKER = lazyre.compile(f"[\\x00-\\x1f{_LAYOUT_BREAKERS}]")
# The same but tab and newline: what multi-line text (a body) may hold as it is.
_TEXT_CONTROL = lazyre.compile(
    f"[\\x00-\\x08\\x0b-\\x1f{_LAYOUT_BREAKERS}{_INVISIBLE}{_CONTEXTUAL}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_WORD_CHARS = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


def _splits(match: re.Match[str]) -> bool:
    """Whether the joiner or bidi mark MATCH found stands between two ASCII word
    characters (it joins nothing there: it only splits a word or a token)."""
    text, at = match.string, match.start()
    return 0 < at < len(text) - 1 and text[at - 1] in _WORD_CHARS \
        and text[at + 1] in _WORD_CHARS


def _smuggles(match: re.Match[str]) -> bool:
    """Whether the variation selector MATCH found follows nothing, or is one of a run."""
    text, at = match.string, match.start()
    return at == 0 or _SELECTOR.match(text, at - 1) is not None \
        or _SELECTOR.match(text, at + 1) is not None


def _refused(match: re.Match[str]) -> bool:
    """Whether the character MATCH found is escaped by a display and refused by a write."""
    char = match.group(0)
    if _SELECTOR.match(char):
        return _smuggles(match)
    return char not in _SPLITTERS or _splits(match)


def _escaped(match: re.Match[str]) -> str:
    char = match.group(0)
    named = _NAMED.get(char)
    if named:
        return named
    if not _refused(match):
        return char
    return _escape_char(char)


def _escape_char(char: str) -> str:
    code = ord(char)
    return (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
            else f"\\U{code:08x}")


def escape_controls(text: str) -> str:
    """Text safe to print on one line: every control character shown as an escape
    (`\\n`, `\\x1b`, `\\u202e`), so a title from a file that arrived by git cannot
    forge extra lines or hide text in a display."""
    # no control, separator or format character (nor a variation selector): nothing to escape
    if text.isprintable() and (text.isascii() or _SELECTOR.search(text) is None):
        return text
    return _CONTROL.sub(_escaped, text)


def escape_text(text: str) -> str:
    """Multi-line text (a body) safe to print: `escape_controls` but tab and newline
    kept, so a body that arrived by git cannot reverse, clear, overwrite or hide what a
    terminal shows (bidi overrides, ESC, CR, backspace, BEL, C1). Machine output
    (--json) keeps the text exact."""
    if _TEXT_CONTROL.search(text) is None:
        return text
    return _TEXT_CONTROL.sub(_escaped, text)


def text_lines(text: str, keepends: bool = False) -> list[str]:
    """TEXT's lines split at newlines only: a CR, NEL or line separator stays in its
    line, where a display escapes it (`str.splitlines` would break there, and a diff
    would show it as a line end). KEEPENDS: each line keeps its newline."""
    lines = text.split("\n")
    last = lines.pop()
    if keepends:
        lines = [line + "\n" for line in lines]
    if last:
        lines.append(last)
    return lines


def line_problem(name: str, value: str) -> str | None:
    """Why a one-line text a write is given (a title, tag, path, alias, canonical_ref) is
    refused: it holds a control character (None: it is fine). The one rule for every
    write (capture, update, supersede, MCP, import); a file that arrives by git is still
    read, and displays escape it (`escape_controls`)."""
    found = next((m for m in _CONTROL.finditer(value) if _refused(m)), None)
    if found is None:
        return None
    char = _NAMED.get(found.group(0)) or _escape_char(found.group(0))
    kind = "a control" if _BREAKER.match(found.group(0)) else "an invisible"
    if name == "title":
        return f"the title holds {kind} character ({char}); a title is one line of plain text"
    article = "an" if name[0] in "aeiou" else "a"
    return (f"{name} {_quoted(value)} holds {kind} character ({char}); "
            f"{article} {name} is one line of plain text")


def title_problem(title: str) -> str | None:
    """Why a title given to a write is refused (None: it is fine)."""
    return line_problem("title", title)


def value_problem(name: str, value: str) -> str | None:
    """Why one value of a listed field a write is given (a tag, path or alias) is
    refused: a control character, or longer than WRITE_BOUNDS allows (None: it is fine).
    A memory's own values from git are not refused by it: a successor leaves them behind
    (writes._carried)."""
    if problem := line_problem(name, value):
        return problem
    longest = WRITE_BOUNDS[name][1]
    if len(value) > longest:
        return f"{name} {_quoted(value, 45)} is longer than {longest} characters"
    return None


def written_problem(memory: Memory) -> str | None:
    """`line_problem` of the first one-line field of MEMORY that holds a control
    character (title, tags, paths, aliases, canonical_ref): what a write refuses in a memory
    it is given whole (import)."""
    values = [("title", memory.title), *(("tag", t) for t in memory.tags),
              *(("path", p) for p in memory.paths), *(("alias", a) for a in memory.aliases),
              ("canonical_ref", memory.canonical_ref)]
    for name, value in values:
        if value and (problem := line_problem(name, value)):
            return problem
    return None


def normalised_text(text: str) -> str:
    """`text` with every run of whitespace one space: what "same content" compares."""
    return " ".join(text.split())


def same_content(a: Memory, b: Memory) -> bool:
    """Same title and body, whitespace aside: the one rule for "the same memory content"
    (propose, submit, pr-status). Capture's and clean's duplicate checks compare bodies
    by the same `normalised_text`."""
    return (normalised_text(a.title), normalised_text(a.body)) == (
        normalised_text(b.title), normalised_text(b.body))


def summarise(title: str, body: str, limit: int = 240) -> str:
    """One line of at most `limit` characters: the title, else the body's start."""
    text = title.strip()
    normal = text == " ".join(text.split())  # no inner run of spaces, tabs or newlines
    # Only the body's start can be shown: a long body is normalised from a prefix, when
    # that prefix alone is longer than what is shown and than any lower-casing of the
    # title (lower() never shortens a string and at most doubles it), so what is cut
    # off could neither be shown nor make the body equal the title.
    room = limit + 2 * len(text) + 64
    first_body = " ".join(body[:room].split()) if len(body) > room else ""
    if len(first_body) <= 2 * len(text) + limit + 2:
        first_body = " ".join(body.split())
    if text and first_body and first_body.lower() != text.lower():
        text = f"{text}: {first_body}"
    elif not text:
        text = first_body
    # What is shown is a prefix: normalised from one when that is long enough to be cut
    # (a normal title and the normalised body make a normal text already).
    head = text if normal else " ".join(text[: 2 * limit].split())
    if len(head) <= limit:
        head = " ".join(text.split())
    text = escape_controls(head[: limit + 1])
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "\u2026"
    return text


E = TypeVar("E", bound=str)


def member(name: str, choices: tuple[E, ...], value: str) -> E:
    """`value` as one of `choices` (the values of one of the Literal types above), typed
    as that type; else InvalidMemory naming the field."""
    if name == "scope" and value in RESERVED_SCOPES:
        raise InvalidMemory(
            f"scope {_quoted(value)} is reserved and not supported; use one of: {', '.join(SCOPES)}"
        )
    for choice in choices:
        if choice == value:
            return choice
    raise InvalidMemory(f"unknown {name} {_quoted(value)}; expected one of: {', '.join(choices)}")


def check_enum(name: str, value: str) -> str:
    found = _ENUM_VALUES[name].get(value) if isinstance(value, str) else None
    return found if found is not None else member(name, ENUMS[name], value)


def normalise_tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        tag = tag.strip()
        if not tag:
            continue
        if problem := value_problem("tag", tag):
            raise InvalidMemory(problem)
        if not _TAG_RE.match(tag):
            raise InvalidMemory(
                f"tag {_quoted(tag)} may not contain spaces, commas, brackets or '#'")
        if tag not in out:
            out.append(tag)
    check_count("tags", out, MAX_TAGS)
    return out


def check_count(name: str, values: list[str], most: int, before: int = 0) -> None:
    """InvalidMemory when a write would leave more than MOST NAME (tags, paths) and more
    than the memory held BEFORE (a file from git with more is kept as it is)."""
    if len(values) > max(most, before):
        raise InvalidMemory(f"{len(values)} {name}: at most {most} are allowed")


def normalise_paths(paths: list[str]) -> list[str]:
    """Paths as stored: stripped, empty and repeated ones dropped; InvalidMemory for a
    path with a control character, past MAX_PATH_CHARS or past MAX_PATHS."""
    out = list(dict.fromkeys(p.strip() for p in paths if p.strip()))
    for path in out:
        if problem := value_problem("path", path) or outside_problem(path):
            raise InvalidMemory(problem)
    check_count("paths", out, MAX_PATHS)
    return out


# A Windows path from the root: `C:\`, `C:/`, a leading backslash (a root, `\\share`);
# a backslash before a glob character is an escape (`\[draft\]/*`): relative.
_WINDOWS_ROOT = lazyre.compile(r"[A-Za-z]:[\\/]|\\(?![\[\]*?])")


def outside_problem(path: str) -> str | None:
    """Why a `paths` glob names nothing in the repository: absolute (`/`, `~` or `~/...`
    (`~backup/*` is a folder's name), a Windows drive or root) or with a `..` part.
    Paths are globs relative to the repository's top; such a glob never matches (None:
    it is fine). Judged stripped, as glob_pattern matches it."""
    path = path.strip()
    if (path.startswith("/") or path == "~" or path.startswith(("~/", "~\\"))
            or _WINDOWS_ROOT.match(path) or ".." in re.split(r"[/\\]", path)):
        return (f"path {_quoted(path, 45)} is not relative to the repository's top (no "
                "leading /, ~/ or drive, no .. part): paths are globs of the repository's files")
    return None


def glob_pattern(glob: str) -> str:
    """A `paths` glob as matched against repository-relative file names: stripped, each
    leading `./` and any leading or trailing `/` dropped (a dot-folder such as `.github`
    keeps its dot). Search's cwd boost and review's stale-path check both read it so."""
    pattern = glob.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:].lstrip("/")
    return pattern.strip("/")


def normalise_aliases(aliases: list[str]) -> list[str]:
    """Aliases as stored: each one line with its spaces collapsed, empty and repeated
    ones dropped; InvalidMemory past MAX_ALIASES or MAX_ALIAS_CHARS."""
    out: list[str] = []
    for alias in aliases:
        alias = " ".join(alias.split())
        if alias and alias.casefold() not in {a.casefold() for a in out}:
            out.append(alias)
    check_aliases(out)
    return out


def content_bytes(body: str, aliases: list[str]) -> int:
    """What memex.maxBytes limits: the body and its aliases (one line each)."""
    return len(body.encode("utf-8")) + sum(len(a.encode("utf-8")) + 1 for a in aliases)


def check_aliases(aliases: list[str]) -> None:
    if len(aliases) > MAX_ALIASES:
        raise InvalidMemory(f"{len(aliases)} aliases: at most {MAX_ALIASES} are allowed")
    for alias in aliases:
        if not alias.strip() or len(alias.splitlines()) != 1:
            raise InvalidMemory(f"alias {_quoted(alias)} must be one non-empty line")
        if len(alias) > MAX_ALIAS_CHARS:
            raise InvalidMemory(f"alias {_quoted(alias, 45)} is longer than "
                                f"{MAX_ALIAS_CHARS} characters")


def legacy_version(data: dict[str, Any]) -> int | None:
    """The protocol version of an older file (no `schema_version` counts as 1), else None."""
    value = data.get("schema_version")
    if value is None:
        return 1
    try:
        version = int(str(value))
    except ValueError:
        return None  # not a number: validation reports it
    return version if version < SCHEMA_VERSION else None


# The front matter keys a Memory has a field for (any other key is kept in `extra`).
KNOWN_KEYS = frozenset(f.name for f in dataclasses.fields(Memory)) - {"extra", "body"}
# What a Memory holds in a field its front matter leaves out (None for id and scope,
# which every memory has). Shared values: read them, never change them.
DEFAULTS: dict[str, Any] = {
    f.name: (f.default if f.default is not dataclasses.MISSING
             else f.default_factory() if f.default_factory is not dataclasses.MISSING
             else None)
    for f in dataclasses.fields(Memory) if f.name in KNOWN_KEYS}


# A new Memory's attributes in field order, each its default (the list fields get new
# lists in assemble). Memory has no __post_init__: its __init__ only assigns these.
_ATTRIBUTES: dict[str, Any] = {f.name: DEFAULTS.get(f.name) for f in dataclasses.fields(Memory)}
_NEW_LISTS = tuple(sorted(LIST_FIELDS | HISTORY_FIELDS))


def assemble(body: str, extra: dict[str, Any], values: dict[str, Any]) -> Memory:
    """Memory(body=body, extra=extra, **values) for VALUES already of the fields' types
    (known keys only, id and scope among them), in a third of the time: the index
    builds one per file and per row it reads, and a dataclass __init__ of 45 fields is
    the larger part of that. The same object, attribute order included."""
    memory = object.__new__(Memory)
    attributes = _ATTRIBUTES.copy()
    for name in _NEW_LISTS:
        attributes[name] = []
    attributes.update(values)
    attributes["body"] = body
    attributes["extra"] = extra
    memory.__dict__.update(attributes)
    return memory


# Known keys whose value is kept as the text it is (no number, flag, time or list).
_TEXT_KEYS = KNOWN_KEYS - INT_FIELDS - BOOL_FIELDS - TIME_FIELDS - LIST_FIELDS - HISTORY_FIELDS


def from_front_matter(data: dict[str, Any], body: str) -> Memory:
    """Build and validate a Memory from parsed front matter. Raises InvalidMemory."""
    if not isinstance(data, dict):
        raise InvalidMemory("front matter is not a mapping")
    known = KNOWN_KEYS
    text_keys = _TEXT_KEYS
    kwargs: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if type(value) is str and key in text_keys:
            kwargs[key] = value  # what _coerce gives a text field's text
            continue
        key = str(key)
        if key not in known:
            extra[key] = value
            continue
        kwargs[key] = _coerce(key, value)
    for required in ("id", "scope"):
        if required not in kwargs:
            raise InvalidMemory(f"missing required field {required!r}")
    memory = assemble(body, extra, kwargs)
    validate(memory)
    return memory


def _nullable() -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(Memory) if f.default is None)


# Fields a file may leave empty (`key: ~` or `key:`) and mean "no value".
NULLABLE_FIELDS = _nullable()
_SCALARS = (str, int, float)


def _coerce(key: str, value: Any) -> Any:
    if value is None:
        if key in LIST_FIELDS | HISTORY_FIELDS:
            return []
        if key in BOOL_FIELDS:
            return False
        if key in NULLABLE_FIELDS:
            return None
        raise InvalidMemory(f"{key} is empty (null); it needs a value")
    if key in INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                return int(str(value))
            except ValueError:
                raise InvalidMemory(f"{key} must be a whole number, not {_quoted(value)}") from None
        return value
    if key in BOOL_FIELDS:
        if isinstance(value, bool):
            return value
        raise InvalidMemory(f"{key} must be true or false, not {_quoted(value)}")
    if key in TIME_FIELDS:
        try:
            return clock.normalise_time(value)
        except (ValueError, OverflowError) as exc:
            raise InvalidMemory(f"{key}: {exc}") from None
    if key in LIST_FIELDS:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise InvalidMemory(f"{key} must be a list, not {_short(value)}")
        for item in value:
            if not isinstance(item, _SCALARS) or isinstance(item, bool):
                raise InvalidMemory(f"{key} entries must be words, not {_short(item)}")
        return [str(v) for v in value]
    if key in HISTORY_FIELDS:
        if not isinstance(value, list):
            raise InvalidMemory(f"{key} must be a list of entries")
        entries = []
        for entry in value:
            if not isinstance(entry, dict):
                raise InvalidMemory(f"{key} entries must be mappings, not {_short(entry)}")
            for v in entry.values():
                if v is not None and not isinstance(v, (*_SCALARS, date)):
                    raise InvalidMemory(f"{key} entry values must be single values, "
                                        f"not {_short(v)}")
            clean = {str(k): _history_value(k, v) for k, v in entry.items() if v is not None}
            entries.append(clean)
        return entries
    if isinstance(value, (dict, list)):
        raise InvalidMemory(f"{key} must be a single value, not {_short(value)}")
    return str(value)


def _short(value: Any) -> str:
    """A value in an error message, cut to one readable line."""
    if value is None:
        return "null"
    return _quoted(value, 60)


def _quoted(value: object, limit: int | None = None) -> str:
    """A value a message quotes, every secret in it masked (redact.quoted: the one masking
    step), so no refusal echoes a token a write would have masked."""
    from memex.core import redact  # only when a value is refused: valid files never load it

    return redact.quoted(value, limit)


def _history_value(key: object, value: Any) -> str:
    if key == "at":
        try:
            return clock.normalise_time(value)
        except (ValueError, OverflowError):
            return str(value)
    return str(value)


# Combinations of the enum fields' values (_ENUM_FIELDS, in order) validate has found
# valid: exact texts and None only (a str subclass's equality could differ).
_VALID_ENUMS: set[tuple[Any, ...]] = set()


def validate(memory: Memory) -> None:
    """Every rule a single file can be checked against on its own."""
    if not is_ulid(memory.id):
        raise InvalidMemory(f"id {_quoted(memory.id)} is not a ULID")
    enums = _ENUM_FIELDS(memory)
    try:
        seen = enums in _VALID_ENUMS  # most memories of a store share a few combinations
    except TypeError:  # a value that is no text, and not hashable (a list)
        seen = False
    if not seen:
        for name, value in zip(_ENUM_VALUES, enums, strict=True):
            if value is not None and not (isinstance(value, str) and value in _ENUM_VALUES[name]):
                check_enum(name, value)  # not one of the values: says which field, and why
        if all(type(value) is str or value is None for value in enums):
            if len(_VALID_ENUMS) >= 1024:
                _VALID_ENUMS.clear()
            _VALID_ENUMS.add(enums)
    if memory.schema_version != SCHEMA_VERSION:
        raise InvalidMemory(
            f"schema_version {memory.schema_version} is not {SCHEMA_VERSION}; "
            "run `git memex migrate`"
        )
    if memory.revision < 1:
        raise InvalidMemory("revision must be 1 or more")
    if memory.instruction_state is not None and memory.role != "instruction":
        raise InvalidMemory("instruction_state is only allowed with role: instruction")
    for name, value in zip(_TIME_NAMES, _TIME_FIELDS(memory), strict=True):
        if value and not clock.is_canonical_time(value):
            raise InvalidMemory(f"{name} {_quoted(value)} is not RFC 3339 UTC")
    for name in ("supersedes", "superseded_by", "derived_from"):
        value = getattr(memory, name)
        if value is not None and not is_ulid(value):
            raise InvalidMemory(f"{name} {_quoted(value)} is not a memory id")
    for name in RELATIONS:
        for value in getattr(memory, name):
            if not is_ulid(value):
                raise InvalidMemory(f"{name} entry {_quoted(value)} is not a memory id")
    check_aliases(memory.aliases)
