"""Render the man pages in man/ from the click commands (`python -m memex.adapters.cli.manpages`).

The pages are committed (so `pip install` puts them where `man` looks) and a test
checks they match what this renders, so help and manual never drift apart.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import click

from memex import __version__
from memex.adapters.cli import examples
from memex.adapters.cli.examples import Example
from memex.adapters.cli.registry import STEPS

DATE = "2026-12-01"


def _roff(text: str) -> str:
    out = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in out.splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _paragraphs(text: str) -> list[str]:
    blocks = [" ".join(b.split()) for b in text.strip().split("\n\n")]
    return [b for b in blocks if b]


def _options(command: click.Command) -> list[str]:
    ctx = click.Context(command, info_name=command.name)
    lines: list[str] = []
    for param in command.get_params(ctx):
        # --help is rendered once below: click caches it per command, with the names of
        # whichever context first asked, so rendering it would depend on call order.
        if isinstance(param, click.Argument) or "--help" in getattr(param, "opts", ()):
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        lines += [".TP", f"\\fB{_roff(names)}\\fR", _roff(help_text or "")]
    lines += [".TP", "\\fB\\-h, \\-\\-help\\fR", "Show the short help and exit."]
    return lines


def _synopsis(command: click.Command, name: str) -> str:
    ctx = click.Context(command, info_name=name)
    pieces = command.collect_usage_pieces(ctx)
    return f"\\fBgit memex {name}\\fR " + _roff(" ".join(pieces))


EXIT_STATUS = [
    ".SH EXIT STATUS",
    "0 on success (a search with no hits is a success); 1 on a failure or a check that "
    "failed (an id that matches no memory is a failure); 2 on a usage error (unknown "
    "option, malformed or ambiguous id, unknown enum value, missing argument); 3 on an "
    "internal error, a bug in git\\-memex (one line; \\fB\\-\\-debug\\fR or "
    "\\fBGIT_MEMEX_DEBUG=1\\fR prints the traceback to report); 130 when interrupted "
    "(Ctrl\\-C).",
]

ENVIRONMENT = [
    ".SH ENVIRONMENT",
    ".TP", "\\fBGIT_MEMEX_HOME\\fR",
    "Where personal memories, project drafts (the outbox) and the usage log live. "
    "Default: \\fI$XDG_DATA_HOME/git\\-memex\\fR, else \\fI~/.local/share/git\\-memex\\fR.",
    ".TP", "\\fBGIT_MEMEX_DEBUG\\fR",
    "Set to 1 (like \\fB\\-\\-debug\\fR): an internal error prints its traceback.",
]


def configuration(mentioned_in: str | None = None) -> list[str]:
    """CONFIGURATION from the settings registry: every key (the main page), or the keys
    a step's help names (a step page), each with its type and default."""
    from memex.storage import settings

    keys = [s for s in settings.REGISTRY
            if mentioned_in is None or s.name.lower() in mentioned_in.lower()]
    if mentioned_in is not None and not keys:
        return []
    lines = [".SH CONFIGURATION",
             "Settings are git config keys (\\fBgit config memex.maxBytes 128k\\fR, in the "
             "repository or \\fB\\-\\-global\\fR); those marked \\fIteam\\fR may also be set "
             "in the committed \\fI.memexconfig\\fR (git config syntax), which a person's "
             "own value overrides. Whole numbers take git's \\fBk\\fR, \\fBm\\fR and "
             "\\fBg\\fR suffixes. A value that does not parse stops the command (exit 1) "
             "with the key, the value and the file it came from; agent hooks log it and use "
             "the default."]
    for spec in keys:
        default = f"default {spec.default}" if spec.default is not None else "unset"
        team = ", team" if spec.team else ""
        lines += [".TP", f"\\fB{_roff(spec.name)}\\fR ({spec.kind}, {_roff(default)}{team})",
                  _roff(spec.doc)]
    if mentioned_in is not None:
        lines += [".PP", "Every key: \\fBgit\\-memex\\fR(1)."]
    return lines


def examples_section(items: tuple[Example, ...]) -> list[str]:
    """EXAMPLES from memex/adapters/cli/examples.py (tests/test_examples.py runs them)."""
    lines = [".SH EXAMPLES"]
    note = examples.placeholders(items)
    if note:
        lines += [_roff(note), ".PP"]
    for item in items:
        lines += [".TP", f"\\fB{_roff(item.line)}\\fR", _roff(item.what)]
    return lines


def render_step(name: str) -> str:
    module = importlib.import_module(STEPS[name][0])
    command: click.Command = module.cli
    summary = STEPS[name][1]
    lines = [
        f'.TH GIT-MEMEX-{name.upper()} 1 "{DATE}" "git-memex {__version__}" "Git Memex Manual"',
        ".SH NAME",
        f"git-memex-{_roff(name)} \\- {_roff(summary)}",
        ".SH SYNOPSIS",
        _synopsis(command, name),
        ".br",
        f"\\fBgit\\-memex\\-{_roff(name)}\\fR ...",
        ".SH DESCRIPTION",
    ]
    for i, para in enumerate(_paragraphs(command.help or summary)):
        if i:
            lines.append(".PP")
        lines.append(_roff(para))
    lines.append(".SH OPTIONS")
    lines += _options(command)
    lines += configuration(command.help or "")
    lines += examples_section(examples.STEPS[name]) + EXIT_STATUS + ENVIRONMENT
    lines += [".SH SEE ALSO", "\\fBgit\\-memex\\fR(1)"]
    return "\n".join(lines) + "\n"


def render_main() -> str:
    from memex.adapters.cli.dispatch import cli

    lines = [
        f'.TH GIT-MEMEX 1 "{DATE}" "git-memex {__version__}" "Git Memex Manual"',
        ".SH NAME",
        "git-memex \\- a local\\-first, git\\-native memory layer for AI coding agents",
        ".SH SYNOPSIS",
        "\\fBgit memex\\fR \\fISTEP\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]",
        ".br",
        "\\fBgit\\-memex\\-\\fR\\fISTEP\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]",
        ".SH DESCRIPTION",
    ]
    for i, para in enumerate(_paragraphs(cli.help or "")):
        if i:
            lines.append(".PP")
        lines.append(_roff(para))
    lines += [
        ".PP",
        "A memory is one Markdown file with YAML front matter; the files are the truth and "
        "a SQLite index is a cache rebuilt on demand. Personal memories live under "
        "\\fI$GIT_MEMEX_HOME/personal\\fR and never leave the machine. Project memories "
        "start as drafts in \\fI$GIT_MEMEX_HOME/outbox\\fR and move into the repository's "
        "\\fI.memex/\\fR folder only by \\fBgit memex submit\\fR.",
        ".SH STEPS",
    ]
    for name, (_, summary) in STEPS.items():
        lines += [".TP", f"\\fBgit\\-memex\\-{_roff(name)}\\fR(1)", _roff(summary)]
    lines += configuration()
    lines += examples_section(examples.MAIN) + EXIT_STATUS + ENVIRONMENT
    lines += [".SH SEE ALSO", "\\fBgit\\fR(1)"]
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    out = {"git-memex.1": render_main()}
    for name in STEPS:
        out[f"git-memex-{name}.1"] = render_step(name)
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[0] if args else "man")
    target.mkdir(exist_ok=True)
    wanted = pages()
    for old in target.glob("git-memex*.1"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        (target / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(wanted)} man pages to {target}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
