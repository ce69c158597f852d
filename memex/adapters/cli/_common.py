"""What every CLI step shares: the workspace, errors to exit codes, output helpers.

click is imported where a function needs it, not here: a step's fast path (a plain argv
the step parses itself, see `plain_args`) runs the step's body with these helpers and
never loads click (~20-25 ms of a search process). `echo` is click.echo whenever click
is loaded, so the click path writes exactly what it wrote before.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from memex import __version__
from memex.core.errors import MemexError, UsageError

if TYPE_CHECKING:
    import click

    from memex.storage.homes import Workspace
    from memex.storage.store import Quarantined

F = TypeVar("F", bound=Callable[..., Any])
PROG = "git-memex"


def version_option(func: F) -> F:
    import click

    return click.version_option(__version__, "--version", prog_name=PROG,
                                message="%(prog)s version %(version)s")(func)


def json_option(func: F) -> F:
    import click

    return click.option("--json", "as_json", is_flag=True,
                        help="Print machine-readable JSON on stdout.")(func)


def workspace(repo: str | None = None, allow_missing_git: bool = False,
              home_check: bool = True) -> Workspace:
    from memex.index import build
    from memex.storage.homes import workspace as make

    build.report_progress_with(index_progress())
    return make(Path(repo) if repo else None, allow_missing_git=allow_missing_git,
                home_check=home_check)


INDEX_PROGRESS_MIN = 500  # files parsed by one refresh before it is worth a word


def index_progress() -> Callable[[int, int], None]:
    """For a refresh that parses many files (the first read of a clone): a bar on a
    terminal's stderr, else one line when it is done; nothing for a small one."""
    bar = progress_bar(False, "indexing memories")

    def progress(done: int, total: int) -> None:
        if total < INDEX_PROGRESS_MIN or quiet():
            return
        if bar is not None:
            bar(done, total)
        elif done == total:
            note(f"git-memex: indexed {total:,} memory files")

    return progress


def pass_progress(minimum: int = INDEX_PROGRESS_MIN) -> Callable[[str, int, int], None]:
    """For a command's own passes over the memories (health's word pass and pair
    comparisons): a bar per pass, named by its label, on a terminal's stderr when the
    pass has at least MINIMUM steps; nothing otherwise (the report is the summary)."""
    bars: dict[str, Callable[[int, int], None] | None] = {}

    def progress(label: str, done: int, total: int) -> None:
        if total < minimum or quiet():
            return
        if label not in bars:
            bars[label] = progress_bar(False, label)
        bar = bars[label]
        if bar is not None:
            bar(done, total)

    return progress


def read_workspace(repo: str | None = None) -> Workspace:
    """The workspace of a command that reads, with the stale-pull warning DESIGN.md asks."""
    from memex.workflows import freshness

    ws = workspace(repo)
    stale = freshness.stale_warning(ws)
    if stale:
        warn(stale)
    if ws.repo is not None:
        from memex.storage import journalfile

        interrupted = journalfile.pending_notice(ws.repo.git_dir)
        if interrupted:
            warn(interrupted)
    return ws


def time_value(value: str | None, option: str) -> str | None:
    """A time option (RFC 3339, a date, or `3d`) as the canonical string; bad: exit 2."""
    if not value:
        return None
    from memex.core import clock

    try:
        return clock.normalise_time(value)
    except ValueError as exc:
        import click

        raise click.BadParameter(str(exc), param_hint=option) from None


def emit_json(data: object) -> None:
    from memex.core import jsonout

    echo(jsonout.document(data))


def emit_json_elements(elements: Iterable[bytes]) -> None:
    """A JSON array of ELEMENTS (each the UTF-8 of jsonout.element's text), byte for
    byte what emit_json writes for the list of the values they encode, written out
    every 64 elements. Where stdout is UTF-8 text over a byte stream the bytes go to
    that stream as they are (click.echo would have written them there): no text is
    made of them, and click's search for terminal colour codes (JSON escapes ESC, so
    there are none) is not run over every byte."""
    stream = _utf8_stdout()
    if stream is None:
        def write(data: bytes) -> None:
            echo(data.decode("utf-8"), nl=False)
    else:
        sys.stdout.flush()

        def write(data: bytes) -> None:
            stream.write(data)
            stream.flush()
    from memex.core import jsonout

    # Layout controls are escaped a block at a time (one search of 64 elements, not one
    # per element): an element is whole UTF-8 text and what joins them is plain ASCII,
    # so the block escaped is the elements escaped, joined. After the first block a
    # block starts with b"", so the join writes the comma before its first element.
    escape = jsonout.escape_layout_bytes
    pending: list[bytes] = []
    add = pending.append
    count = 0
    for count, element in enumerate(elements, 1):
        add(element)
        if count % 64 == 0:
            block = b",\n  ".join(pending)
            write(escape(b"[\n  " + block if count == 64 else block))
            pending[:] = (b"",)
    if count % 64:
        block = b",\n  ".join(pending)
        write(escape(b"[\n  " + block if count < 64 else block))
    write(b"\n]\n" if count else b"[]\n")


def _utf8_stdout() -> Any:
    """stdout's byte stream, when its text layer is UTF-8 with no newline translation
    (the one click.echo writes through): the UTF-8 of text with no lone surrogate is
    what that layer writes under any error handler. Else None."""
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is None or os.linesep != "\n":
        return None
    try:
        utf8 = codecs.lookup(out.encoding).name == "utf-8"
    except (AttributeError, LookupError, TypeError):
        return None
    if not utf8:
        return None
    if isinstance(out, _PipeSafeStream):  # the bytes survive a reader going away too
        buffer = _PipeSafeStream(buffer)
    return buffer


def warn(message: str) -> None:
    echo(f"warning: {message}", err=True)


def quiet_option(func: F) -> F:
    """`-q/--quiet`, as git's: no progress messages or chatter; data (--json), warnings
    and errors still print."""
    def remember(ctx: click.Context, _: click.Parameter, value: bool) -> bool:
        ctx.find_root().meta["git_memex_quiet"] = value
        return value

    import click

    return click.option("--quiet", "-q", is_flag=True, expose_value=False,
                        callback=remember, is_eager=True,
                        help="Print no progress messages, only warnings and errors.")(func)


_plain = {"quiet": False}  # a fast path's -q (it has no click context to keep it in)


def quiet() -> bool:
    click = sys.modules.get("click")
    ctx = click.get_current_context(silent=True) if click is not None else None
    if ctx is None:
        return _plain["quiet"]
    return bool(ctx.find_root().meta.get("git_memex_quiet"))


def echo(message: str = "", err: bool = False, nl: bool = True) -> None:
    """echo(message, err=err, nl=nl): click's own once click is loaded (and for a
    text holding an escape, which click strips from a stream that is not a terminal);
    else the same bytes without loading it. A fast path runs only on streams click
    writes to as they are (plain_streams)."""
    if "click" in sys.modules or "\x1b" in message:
        import click

        click.echo(message, err=err, nl=nl)
        return
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    out = message + "\n" if nl else message
    if out:
        stream.write(out)
    stream.flush()


def note(message: str) -> None:
    """A message on stderr (silenced by --quiet)."""
    if not quiet():
        echo(message, err=True)


def notice(message: str) -> None:
    """What happened to a memory (a secret masked, a scope chosen for you) on stderr:
    unlike note(), printed even with --quiet."""
    echo(message, err=True)


def say(message: str) -> None:
    """Chatter on stdout that is not data (silenced by --quiet)."""
    if not quiet():
        echo(message)


def report_quarantine(items: Iterable[Quarantined]) -> None:
    items = list(items)
    if not items:
        return
    warn(f"skipped {len(items)} unreadable memory file(s), left untouched:")
    for item in items[:5]:
        echo(f"  {item.path}: {item.reason}", err=True)
    if len(items) > 5:
        echo(f"  ... and {len(items) - 5} more (git memex doctor --json lists them)",
                   err=True)


def stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def stdout_is_tty() -> bool:
    try:
        return sys.stdout is not None and sys.stdout.isatty()
    except (ValueError, OSError):
        return False


def page(text: str) -> None:
    """TEXT through git's pager (`git var GIT_PAGER`: GIT_PAGER, core.pager, PAGER, less;
    LESS=FRX unless set, so a short listing just prints) on a terminal, like git's own
    listings; straight to stdout otherwise."""
    page_pieces((text,))


def page_pieces(pieces: Iterable[str]) -> None:
    """page("".join(PIECES)), written as the pieces come (a block at a time): a listing
    of any length is never held whole."""
    blocks = _blocks(pieces)
    if not stdout_is_tty():
        for block in blocks:
            echo(block, nl=False)
        return
    import subprocess

    from memex.storage import gitio

    pager = gitio.run(["var", "GIT_PAGER"], check=False).stdout.strip() \
        if gitio.git_binary() else os.environ.get("PAGER", "less")
    if not pager or pager == "cat":
        for block in blocks:
            echo(block, nl=False)
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        pager_process = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        for block in blocks:
            echo(block, nl=False)
        return
    stdin = pager_process.stdin
    assert stdin is not None
    with contextlib.suppress(BrokenPipeError):  # the pager quit before the end
        for block in blocks:
            stdin.write(block.encode("utf-8"))
    with contextlib.suppress(BrokenPipeError):
        stdin.close()
    pager_process.wait()


def _blocks(pieces: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """The text of PIECES in blocks of about SIZE characters, ending in a newline (one
    added when it does not)."""
    pending: list[str] = []
    held = 0
    last = ""
    for piece in pieces:
        if piece:
            pending.append(piece)
            held += len(piece)
            last = piece
            if held >= size:
                yield "".join(pending)
                pending.clear()
                held = 0
    if not last.endswith("\n"):
        pending.append("\n")
    yield "".join(pending)


@contextlib.contextmanager
def paged() -> Iterator[None]:
    """What the block prints on stdout goes through page() on a terminal (git pages
    log, diff and show); otherwise it is printed as it goes."""
    if not stdout_is_tty():
        yield
        return
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        yield
    if buffer.getvalue():
        page(buffer.getvalue())


def read_stdin_text() -> str:
    """All of stdin as UTF-8 text; binary input is a usage error."""
    import click

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
    import click

    return click.confirm(question, default=False)


class Exit(IntEnum):
    """Every exit code of every step."""

    OK = 0
    FAILED = 1  # a check failed, or a MemexError the user can act on
    USAGE = 2  # called wrongly (UsageError, click's usage errors)
    INTERNAL = 3  # a bug: an exception git-memex did not expect
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


DEBUG_ENV = "GIT_MEMEX_DEBUG"
DEBUG_FLAG = "--debug"


def debugging() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def take_debug_flag(argv: list[str]) -> list[str]:
    """argv without `--debug` (before any `--`), which sets GIT_MEMEX_DEBUG=1 instead."""
    end = argv.index("--") if "--" in argv else len(argv)
    if DEBUG_FLAG not in argv[:end]:
        return argv
    os.environ[DEBUG_ENV] = "1"
    return [a for a in argv[:end] if a != DEBUG_FLAG] + argv[end:]


def exit_code_for(exc: BaseException) -> int:
    """The one error handler: print what `exc` means on stderr, return its exit code.

    A MemexError is one line with its own code (1, or 2 for usage); Ctrl-C is 130; any
    other exception is a bug: one line saying so and how to report it (exit 3), with the
    traceback only under --debug or GIT_MEMEX_DEBUG=1.
    """
    if isinstance(exc, MemexError):
        echo(f"{PROG}: error: {exc}", err=True)
        return int(exc.exit_code)
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        # The machine said no (EACCES, EROFS, ENOSPC) on a step the library did not word.
        where = f" ({exc.filename})" if exc.filename else ""
        echo(f"{PROG}: error: {exc.strerror or exc}{where}", err=True)
        return 1
    click = sys.modules.get("click")
    if isinstance(exc, KeyboardInterrupt) or (
            click is not None and isinstance(exc, click.Abort)
            and isinstance(exc.__context__, KeyboardInterrupt)):
        echo(f"{PROG}: interrupted", err=True)
        return Exit.INTERRUPTED
    if debugging():
        import traceback  # only here: it costs a hook's every start ~5 ms

        traceback.print_exception(exc, file=sys.stderr)
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    hint = ("" if debugging() else
            f"; run it again with {DEBUG_FLAG} (or {DEBUG_ENV}=1) for the traceback")
    echo(f"{PROG}: internal error ({detail}). This is a bug in git-memex "
               f"{__version__}: please report it to the git-memex maintainers with the "
               f"command you ran and the traceback{hint}", err=True)
    return Exit.INTERNAL


def handle_errors(func: F) -> F:
    """Every failure of a step -> one message on stderr and its Exit code (exit_code_for)."""

    import click

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, BrokenPipeError):
            raise  # click's own exits and usage errors; the pipe guard's case
        except click.Abort as exc:
            if isinstance(exc.__context__, KeyboardInterrupt):
                sys.exit(exit_code_for(exc))
            raise
        except (Exception, KeyboardInterrupt) as exc:
            sys.exit(exit_code_for(exc))

    return wrapper  # type: ignore[return-value]


def run_command(command: click.Command, argv: list[str], prog_name: str) -> None:
    """Run a click command as a whole process; what escapes the step (an error while
    parsing or importing it, Ctrl-C outside it) goes through exit_code_for too."""
    _mask_click_refusals()
    _as_process(lambda: command.main(args=take_debug_flag(argv), prog_name=prog_name))


def _mask_click_refusals() -> None:
    """Click prints its refusals (a bad choice, an extra argument, a bad number) with the
    value given: what it prints goes through the write rule (redact.redact, the one
    masking step) first, so a secret given in the wrong place is not echoed; ids, hex
    digests and ordinary typos stay readable. Installed once, for a whole process."""
    import click

    for cls in (click.ClickException, click.UsageError):
        original = cls.__dict__["show"]
        if getattr(original, "masked", False):
            continue

        def show(self: Any, file: Any = None, _original: Any = original) -> None:
            import io

            from memex.core import redact  # only for a refusal

            buffer = io.StringIO()
            _original(self, buffer)
            target = file if file is not None else sys.stderr
            target.write(redact.redact(buffer.getvalue()).text)
            target.flush()

        show.masked = True  # type: ignore[attr-defined]
        cls.show = show  # type: ignore[method-assign]


def _as_process(call: Callable[[], object]) -> None:
    """CALL as a whole process's work: a reader gone away (EPIPE) exits 1 quietly, any
    other failure leaves through exit_code_for."""
    try:
        call()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(Exit.FAILED)
    except (Exception, KeyboardInterrupt) as exc:
        sys.exit(exit_code_for(exc))


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
    from memex.adapters.cli import examples

    command.context_settings.setdefault("help_option_names", ["-h", "--help"])
    examples.attach(command, step)
    guard_stdout()
    run_command(command, sys.argv[1:], f"{PROG}-{step}")


def lazy_cli(namespace: dict[str, Any], name: str, make: Callable[[], click.Command]
             ) -> click.Command:
    """A step module's `cli` for its module `__getattr__`: the click command, made (and
    click loaded) when first asked for, so the module loads without click."""
    if name != "cli":
        raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
    command = namespace["cli"] = make()
    return command


def run_fast_step(fast: Callable[[list[str], str], None], namespace: dict[str, Any],
                  make: Callable[[], click.Command], step: str) -> None:
    """Entry point of a `git-memex-<step>` executable with a fast path: FAST runs the
    plain argv (and exits), else the click command runs it."""
    guard_stdout()  # before the fast path writes: a reader that left is not a failure
    from memex.storage import gitio

    gitio.config_ahead()  # git finds the repository beside the step's imports
    with fast_process():
        fast(take_debug_flag(sys.argv[1:]), f"{PROG}-{step}")
    run_step(lazy_cli(namespace, "cli", make), step)


@contextlib.contextmanager
def fast_process(whole: bool = True) -> Iterator[None]:
    """Around a whole process's fast path (WHOLE; in-process callers pass False):
    Python's cyclic collector is off while it runs, and when it exits its objects are
    frozen (gc.freeze), so the interpreter's last collection does not walk them all
    once more. Its imports and its work make no cycles worth collecting (reference
    counting frees what it drops); the two passes cost ~15 ms of a ~120 ms search.
    An argv the fast path declines leaves the collector as it was, for click."""
    if not whole or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    except SystemExit:
        gc.freeze()
        raise
    except BaseException:
        gc.enable()
        raise
    gc.enable()


def plain_streams() -> bool:
    """Whether stdout and stderr are streams click.echo writes to as they are (text
    streams with an encoding other than ASCII), so a fast path's echo writes what
    click's would."""
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) if stream is not None else None
        try:
            if not encoding or codecs.lookup(encoding).name == "ascii":
                return False
        except LookupError:
            return False
    return True


Convert = Callable[[str], object]


def plain_choice(choices: Sequence[str]) -> Convert:
    """A fast path's converter for a fixed-choice option: the value, or None (refused,
    so click parses it and prints its error) when it is not one of CHOICES."""
    return lambda value: value if value in choices else None


def plain_args(argv: Sequence[str], flags: Mapping[str, str],
               options: Mapping[str, tuple[str, Convert]],
               prog: str) -> tuple[list[str], dict[str, list[object]]] | None:
    """A step's argv in the plain forms its fast path takes: arguments (no leading
    `-`), the FLAGS (`--json`, `-q`: token -> name) and the OPTIONS followed by their
    value as the next token (token -> name and a converter, which returns None for a
    value click would refuse). Returns the arguments in order and each name's values in
    order, or None for anything else (`--`, `--opt=value`, `-qn5`, --help, --version,
    an unknown option, a value that starts with `-` or is refused, click's shell
    completion asked for (PROG's completion variable), streams click would wrap): those
    go to click, which parses or refuses them as it always did."""
    completion = f"_{prog}_COMPLETE".replace("-", "_").upper()  # click's name for it
    if completion in os.environ or not plain_streams():
        return None
    words: list[str] = []
    seen: dict[str, list[object]] = {}
    i = 0
    while i < len(argv):
        token = argv[i]
        if not token.startswith("-"):
            words.append(token)
            i += 1
        elif token in flags:
            seen.setdefault(flags[token], []).append(True)
            i += 1
        elif token in options and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            name, convert = options[token]
            value = convert(argv[i + 1])
            if value is None:
                return None
            seen.setdefault(name, []).append(value)
            i += 2
        else:
            return None
    return words, seen


def run_plain(body: Callable[[], object], quiet_flag: bool) -> NoReturn:
    """Run a step's body as a whole process without click (its fast path): the exits,
    messages and pipe handling of run_command and handle_errors."""
    _plain["quiet"] = quiet_flag
    try:
        _as_process(body)
    finally:
        _plain["quiet"] = False
    sys.exit(Exit.OK)


def progress_bar(silent: bool, label: str = "embedding") -> Any:
    """A progress callback drawing a bar on a terminal's stderr (None when silent)."""
    if silent or not sys.stderr.isatty():
        return None
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            import click

            bar = click.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    return progress
