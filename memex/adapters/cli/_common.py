"""What every CLI step shares: the workspace, errors to exit codes, output helpers."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from memex import __version__
from memex.core.errors import MemexError, UsageError

F = TypeVar("F", bound=Callable[..., Any])
PROG = "git-memex"


def version_option(func: F) -> F:
    return click.version_option(__version__, "--version", prog_name=PROG,
                                message="%(prog)s version %(version)s")(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True,
                        help="Print machine-readable JSON on stdout.")(func)


def workspace(repo: str | None = None, allow_missing_git: bool = False,
              home_check: bool = True) -> Any:
    from memex.storage.homes import workspace as make

    return make(Path(repo) if repo else None, allow_missing_git=allow_missing_git,
                home_check=home_check)


def read_workspace(repo: str | None = None) -> Any:
    """The workspace of a command that reads, with the stale-pull warning DESIGN.md asks."""
    from memex.workflows import pull

    ws = workspace(repo)
    stale = pull.stale_warning(ws)
    if stale:
        warn(stale)
    return ws


def time_value(value: str | None, option: str) -> str | None:
    """A time option (RFC 3339, a date, or `3d`) as the canonical string; bad: exit 2."""
    if not value:
        return None
    from memex.core import clock

    try:
        return clock.normalise_time(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint=option) from None


def emit_json(data: object) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def note(message: str) -> None:
    click.echo(message, err=True)


def report_quarantine(items: Iterable[Any]) -> None:
    items = list(items)
    if not items:
        return
    warn(f"skipped {len(items)} unreadable memory file(s), left untouched:")
    for item in items[:5]:
        click.echo(f"  {item.path}: {item.reason}", err=True)
    if len(items) > 5:
        click.echo(f"  ... and {len(items) - 5} more (git memex doctor --json lists them)",
                   err=True)


def stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def read_stdin_text() -> str:
    """All of stdin as UTF-8 text; binary input is a usage error."""
    data = sys.stdin.buffer.read() if sys.stdin is not None else b""
    if b"\0" in data:
        raise click.UsageError("stdin holds binary data (NUL bytes), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise click.UsageError("stdin is not UTF-8 text") from None


def confirm(question: str, yes: bool) -> bool:
    """Ask on a terminal; without one, only --yes agrees (never prompt)."""
    if yes:
        return True
    if not stdin_is_tty():
        # one line on stderr, exit 2 (handle_errors); click's UsageError would print a
        # whole usage block just to say "pass --yes"
        raise UsageError(f"{question.rstrip('?')}: needs confirmation; pass --yes "
                         "(stdin is not a terminal)")
    return click.confirm(question, default=False)


def handle_errors(func: F) -> F:
    """MemexError -> message on stderr with its exit code, never a traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MemexError as exc:
            click.echo(f"{PROG}: error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


class _PipeSafeStream:
    """stdout that survives its reader going away (`git memex list | head -1`): the
    first EPIPE points fd 1 at /dev/null, so the step finishes quietly and exits with
    its own code (a failing verify still exits 1), with no traceback or error."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _to_devnull(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)

    def write(self, text: Any) -> int:
        try:
            return int(self._stream.write(text))
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()
            with contextlib.suppress(OSError, ValueError):
                self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Install _PipeSafeStream (real processes only: called by the entry points)."""
    if sys.stdout is not None and not isinstance(sys.stdout, _PipeSafeStream):
        sys.stdout = _PipeSafeStream(sys.stdout)


def run_step(command: click.Command, step: str) -> None:
    """Entry point of a standalone `git-memex-<step>` executable."""
    command.context_settings.setdefault("help_option_names", ["-h", "--help"])
    guard_stdout()
    try:
        command.main(prog_name=f"{PROG}-{step}")
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)


def progress_bar(silent: bool, label: str = "embedding") -> Any:
    """A progress callback drawing a bar on a terminal's stderr (None when silent)."""
    if silent or not sys.stderr.isatty():
        return None
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    return progress
