"""The committed `.memexconfig` read in-process, for the plain files git-memex writes.

`git config --file F key value` writes `[section]` headers and `<TAB>key = value` lines.
Every command reads that file, so reading it here saves a git process per command. The
parser accepts only that plain subset and answers None for anything else (quotes,
backslash escapes or continuation lines, comments after a value, tabs inside a value,
`[a.b]` or `[a  "b"]` headers, include sections, a byte-order mark, control characters,
text that is not UTF-8): the caller then asks `git config --file F --list` as before.
On what it accepts it gives exactly what gitio.config_map gives from git's output
(tests/test_configfile.py holds both to it).
"""

from __future__ import annotations

from pathlib import Path

from memex.core import lazyre

_SECTION = lazyre.compile(r'\[([A-Za-z0-9-]+)(?: "([^"\\]+)")?\]')
_ENTRY = lazyre.compile(r'([A-Za-z][A-Za-z0-9-]*)(?:[ ]*=[ ]*([^"\\#;\t]*))?')
_CONTROL = lazyre.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_NOT_PLAIN_SECTIONS = ("include", "includeif")


def parse(text: str) -> dict[str, str] | None:
    """{key: value} with keys lower-cased and the last value winning (config_map's
    shape), or None when `text` is not the plain subset."""
    out: dict[str, str] = {}
    section: str | None = None
    for line in text.split("\n"):
        if _CONTROL.search(line):
            return None
        stripped = line.strip(" \t")
        if not stripped or stripped[0] in "#;":
            continue
        if stripped[0] == "[":
            head = _SECTION.fullmatch(stripped)
            if head is None or head.group(1).lower() in _NOT_PLAIN_SECTIONS:
                return None
            name, sub = head.group(1).lower(), head.group(2)
            section = name if sub is None else f"{name}.{sub}"
            continue
        entry = _ENTRY.fullmatch(stripped)
        if entry is None or section is None:
            return None
        # git drops the spaces around a value: the line's by strip, the rest by _ENTRY
        out[f"{section}.{entry.group(1)}".lower()] = entry.group(2) or ""
    return out


def read(path: Path) -> dict[str, str] | None:
    """parse() of the file at `path`; None also when it cannot be read as UTF-8."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return parse(text)
