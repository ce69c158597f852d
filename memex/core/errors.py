"""Errors every layer raises; interfaces turn them into messages and exit codes."""

from __future__ import annotations

import sys


def install_command(*requirements: str) -> str:
    """The command that installs REQUIREMENTS into the Python running git-memex (an
    optional dependency is named by its own PyPI name: never by an extra of a
    distribution name another project may hold)."""
    import shlex  # only in the message that names the command (~0.3 ms of every process)

    return shlex.join([sys.executable, "-m", "pip", "install", *requirements])


class MemexError(Exception):
    """A failure the user can act on: printed as one message, exit 1."""

    exit_code = 1


class UsageError(MemexError):
    """The command was called wrongly (bad id, unknown enum value): exit 2."""

    exit_code = 2


class NotFound(MemexError):
    """No memory matches the id or prefix given."""


class Ambiguous(UsageError):
    """An id prefix matches more than one memory."""

    def __init__(self, prefix: str, matches: list[str]) -> None:
        shown = ", ".join(matches[:10])
        more = f" (+{len(matches) - 10} more)" if len(matches) > 10 else ""
        super().__init__(f"id prefix {prefix!r} is ambiguous: {shown}{more}")
        self.matches = matches


class InvalidMemory(MemexError):
    """A memory's fields break the protocol (unknown enum, bad time, wrong id)."""
