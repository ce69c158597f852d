"""The fast paths of search, show, context, capture and update (their own argv parse, no
the click path: the same argv tables through both, the same stdout, stderr and exit
code; argvs the fast parser does not take go to click."""

from __future__ import annotations

import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from memex.adapters.cli import _common, dispatch
from memex.adapters.cli import context as context_cli
from memex.adapters.cli import search as search_cli
from memex.adapters.cli import show as show_cli
from memex.core.errors import MemexError, UsageError
from memex.index import build
from memex.workflows import reads
from tests.helpers import invoke_json

# (argv after `search`, whether the fast path runs it itself)
TABLE: list[tuple[list[str], bool]] = [
    (["deploy"], True),
    (["deploy", "--json"], True),
    (["--json", "deploy", "staging", "--limit", "2"], True),
    (["deploy", "-n", "1"], True),
    (["deploy", "-n", "007", "-n", "2"], True),
    (["deploy", "-q"], True),
    (["deploy", "--quiet", "--json", "--json"], True),
    (["zebra"], True),
    (["zebra", "-q"], True),
    (["zebra", "--json"], True),
    (["deploy", "--scope", "project"], True),
    (["deploy", "--scope", "personal", "--scope", "project"], True),
    (["deploy", "--type", "decision"], True),
    (["deploy", "--tag", "ops"], True),
    (["deploy", "--tag", "ops", "--tag", "team"], True),
    (["deploy", "--tag", ""], True),
    (["deploy", "--status", "active", "--include", "all"], True),
    (["deploy", "--explain"], True),
    (["naïve", "依赖", "deploy"], True),
    (["red"], True),  # a title holding an escape sequence (shown escaped)
    (["", "deploy"], True),
    # click's: errors, help, forms the fast parser leaves alone
    ([], False),
    (["--json"], False),
    (["deploy", "-n", "0"], False),
    (["deploy", "-n", "x"], False),
    (["deploy", "-n", "٣"], False),
    (["deploy", "--limit=2"], False),
    (["-n2", "deploy"], False),
    (["-qn", "2", "deploy"], False),
    (["deploy", "--scope", "nope"], False),
    (["deploy", "--type", "Decision"], False),
    (["deploy", "--tag"], False),
    (["deploy", "--tag", "-x"], False),
    (["deploy", "--bogus"], False),
    (["deploy", "-"], False),
    (["--", "-deploy"], False),
    (["deploy", "--help"], False),
    (["deploy", "--version"], False),
    (["deploy", "--as-of", "2020-01-01"], False),
    (["deploy", "--from-git"], False),
    (["deploy", "--repo", "."], False),
]


@pytest.fixture
def store(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-06-01T00:00:00Z")  # scores hold recency
    invoke_json("capture", "Deploy through the staging VPN", "--tag", "ops", "--tag", "team")
    invoke_json("capture", "We decided to deploy on Fridays", "--type", "decision")
    invoke_json("capture", "naïve pnpm 依赖 deploy notes " + "detail " * 90)
    invoke_json("capture", "a personal deploy habit", "--scope", "personal")
    invoke_json("capture", "\x1b[31mred\x1b[0m alert on deploy")
    (repo / ".memex").mkdir(exist_ok=True)
    (repo / ".memex" / "broken.md").write_text("---\nid: [unclosed\n---\nbody\n")
    # files written this second are hashed again by every refresh (racy stamps); old
    # ones are settled, so each run below reads the same index
    hour_ago = time.time() - 3600
    for path in repo.parent.rglob("*.md"):
        os.utime(path, (hour_ago, hour_ago))
    invoke_json("search", "deploy")
    return repo


def _forget_use() -> None:
    """Each run starts from the same ranking hints (a search's hits rank higher next
    time: the index's access table)."""
    with contextlib.closing(sqlite3.connect(".git/memex/index.sqlite")) as conn, conn:
        conn.execute("DELETE FROM access")


def _click_path(argv: list[str], capsys: pytest.CaptureFixture[str], step: str = "search"
                ) -> tuple[str, str, int]:
    _forget_use()
    with pytest.raises(SystemExit) as exc:
        _common.run_command(dispatch.cli, [step, *argv], "git-memex")
    got = capsys.readouterr()
    return got.out, got.err, int(exc.value.code or 0)


def _fast_path(argv: list[str], capsys: pytest.CaptureFixture[str],
               monkeypatch: pytest.MonkeyPatch, escapes: bool = False,
               step: ModuleType = search_cli) -> tuple[str, str, int] | None:
    """What the fast path prints and exits with, run as a process without click runs
    it; None when it leaves ARGV to click (having printed nothing)."""
    _forget_use()
    with monkeypatch.context() as m:
        m.delitem(sys.modules, "click")
        try:
            step.fast(argv, "git-memex")
        except SystemExit as exc:
            assert "click" not in sys.modules or escapes, "the fast path loaded click"
            got = capsys.readouterr()
            return got.out, got.err, int(exc.code or 0)
    got = capsys.readouterr()
    assert got.out == got.err == ""
    return None


def test_the_fast_path_prints_what_click_prints(
        store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for argv, plain in TABLE:
        expected = _click_path(argv, capsys)
        fast = _fast_path(argv, capsys, monkeypatch)
        assert (fast is not None) == plain, argv
        if fast is not None:
            assert fast == expected, argv
            assert expected[0] or expected[1], argv  # something to compare
        assert not _common.quiet()  # a fast run's -q does not outlive it


def test_show_and_context_print_what_click_prints(
        store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    [hit] = invoke_json("search", "Fridays")
    full, short = hit["id"], hit["id"][:10]
    table: list[tuple[ModuleType, list[str], bool]] = [
        (show_cli, [full], True), (show_cli, [short, "--json"], True),
        (show_cli, ["--json", short.lower()], True), (show_cli, ["01ZZZZ"], True),
        (show_cli, ["0"], True), (show_cli, [], False), (show_cli, [short, full], False),
        (show_cli, [short, "-q"], False), (show_cli, ["--", short], False),
        (show_cli, [short, "--help"], False),
        (context_cli, [], True), (context_cli, ["--json"], True),
        (context_cli, ["--query", "deploy fridays"], True),
        (context_cli, ["--query", "", "--json"], True),
        (context_cli, ["--query", "a", "--query", "deploy"], True),
        (context_cli, ["--hook", "claude"], True), (context_cli, ["extra"], False),
        (context_cli, ["--hook", "other"], False), (context_cli, ["--query"], False),
        (context_cli, ["--query=deploy"], False), (context_cli, ["--version"], False),
    ]
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup",
                          "session_id": "s1", "cwd": str(store)}).encode()
    for module, argv, plain in table:
        name = module.__name__.rsplit(".", 1)[1]
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
        expected = _click_path(argv, capsys, name)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
        fast = _fast_path(argv, capsys, monkeypatch, step=module)
        assert (fast is not None) == plain, (name, argv)
        if fast is not None:
            assert fast == expected, (name, argv)
            assert expected[0] or expected[1], (name, argv)


def test_controls_of_the_table(store: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """What the table compares shows up: hits, the unreadable file's warning, the
    quiet note; and a message holding an escape sequence (a file name), which click
    strips from a stream that is not a terminal, is written by click on both paths."""
    out, err, code = _click_path(["deploy"], capsys)
    assert code == 0 and out.count("\n") >= 6 and "broken.md" in err
    assert _click_path(["zebra"], capsys)[1].endswith("no memories match\n")
    assert "no memories match" not in _click_path(["zebra", "-q"], capsys)[1]
    (store / ".memex" / "\x1b[31mbad\x1b[0m.md").write_text("not front matter\n")
    out, err, code = _click_path(["deploy"], capsys)
    assert "bad.md" in err and "\x1b" not in err
    assert _fast_path(["deploy"], capsys, monkeypatch, escapes=True) == (out, err, code)


def test_failures_exit_alike(store: Path, capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    for error in (RuntimeError("boom"), KeyboardInterrupt(), MemexError("no"),
                  UsageError("wrong"), PermissionError(13, "denied", "/x")):
        def fail(*args: object, error: BaseException = error, **kwargs: object) -> None:
            raise error

        monkeypatch.setattr(reads, "search", fail)
        expected = _click_path(["deploy"], capsys)
        assert expected[2] in (1, 2, 3, 130) and expected[1], error
        assert _fast_path(["deploy"], capsys, monkeypatch) == expected, error


def test_whole_processes_agree(store: Path) -> None:
    """The executables (`git-memex search`, `git-memex-search`) against the click path
    run as a process, on streams of a real process."""
    click_path = [sys.executable, "-c", "import sys; from memex.adapters.cli import "
                  "_common, dispatch; _common.guard_stdout(); "
                  "_common.run_command(dispatch.cli, sys.argv[1:], 'git-memex')"]
    bindir = Path(sys.executable).parent
    [hit] = invoke_json("search", "Fridays")
    for step, argv, exe in (
            ("search", ["deploy", "--json", "-n", "2"], ["git-memex-search"]),
            ("search", ["zebra"], ["git-memex", "search"]),
            ("show", [hit["id"]], ["git-memex", "show"]),
            ("context", ["--query", "deploy"], ["git-memex-context"])):
        _forget_use()
        expected = subprocess.run([*click_path, step, *argv], capture_output=True)
        assert expected.returncode == 0 and (expected.stdout or expected.stderr)
        _forget_use()
        build.forget_connections()  # this process's: the step's is then the last one
        got = subprocess.run([str(bindir / exe[0]), *exe[1:], *argv], capture_output=True)
        assert (got.stdout, got.stderr, got.returncode) == (
            expected.stdout, expected.stderr, expected.returncode), exe
        # The index was closed at exit as by the click path: its WAL checkpointed and
        # removed (the fast path freezes the collector, which used to close it).
        assert not Path(".git/memex/index.sqlite-wal").exists(), exe


def test_ctrl_c_while_a_fast_step_loads_exits_130(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The fast step's module is imported before click's handler runs: Ctrl-C there
    still ends as every interrupted step does (one line, 130), not with a traceback."""
    from memex.adapters.cli import main as cli_main

    def interrupted(name: str) -> ModuleType:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main.importlib, "import_module", interrupted)
    with pytest.raises(SystemExit) as exited:
        cli_main.main(["search", "word"])
    assert exited.value.code == _common.Exit.INTERRUPTED
    assert capsys.readouterr().err == "git-memex: interrupted\n"


def test_main_lists_exactly_the_steps_that_have_a_fast_path() -> None:
    """main.FAST keeps start-up from importing every step to ask; it must name each
    module that defines `fast` and no other (a step left out silently loses its path)."""
    import importlib

    from memex.adapters.cli import main as cli_main
    from memex.adapters.cli.registry import STEPS

    having = {step for step, (module, _) in STEPS.items()
              if hasattr(importlib.import_module(module), "fast")}
    assert having == cli_main.FAST


def test_a_whole_fast_process_pauses_the_collector_and_freezes_on_exit() -> None:
    """fast_process: the collector is off inside; a fast path that exits leaves its
    objects frozen (the interpreter's last collection skips them); an argv it declines,
    an error, or an in-process caller leave the collector as it was."""
    import gc

    assert gc.isenabled()
    try:
        with _common.fast_process():
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() == 0  # declined: click runs next
        with pytest.raises(RuntimeError), _common.fast_process():
            raise RuntimeError
        assert gc.isenabled() and gc.get_freeze_count() == 0
        with _common.fast_process(whole=False):
            assert gc.isenabled()
        with pytest.raises(SystemExit), _common.fast_process():
            sys.exit(0)
        assert not gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.enable()


def test_capture_and_update_print_and_write_what_click_does(
        store: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """capture and update through both paths from the same store: the same output, exit
    code and memory file (each write is undone before the other path runs it; ids and
    the clock are pinned)."""
    from memex.adapters.cli import capture as capture_cli
    from memex.adapters.cli import update as update_cli
    from memex.storage import homes
    from memex.workflows import writes

    [hit] = invoke_json("search", "Fridays")
    target = Path(hit["path"])
    folders = [store, homes.memex_home()]

    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for f in folders for p in f.rglob("*.md")}

    table: list[tuple[ModuleType, list[str], bool]] = [
        (capture_cli, ["Rotate the signing key monthly"], True),
        (capture_cli, ["Rotate the signing key monthly", "--json"], True),
        (capture_cli, ["Pin the runner image", "--tag", "ci", "--tag", "Ops", "--title",
                       "Runner image", "--type", "decision", "-q"], True),
        (capture_cli, ["Use the vault for api_key=sk_live_abcdefghijklmnop1234", "--scope",
                       "personal", "--alias", "where do keys go?", "--paths", "src/*.py",
                       "--importance", "high", "--confidence", "low", "--source", "tool",
                       "--role", "knowledge", "--private", "--json"], True),
        (capture_cli, ["We decided to deploy on Fridays", "--type", "decision"], True),
        (capture_cli, ["Deploy through the staging VPN", "--dry-run"], True),
        (capture_cli, ["", "--json"], True),
        (capture_cli, ["a note", "--scope", "galaxy"], True),
        (capture_cli, ["a note", "--type", "Decision"], False),
        (capture_cli, ["a note", "--tag"], False),
        (capture_cli, ["a", "b"], False),
        (capture_cli, [], False),
        (capture_cli, ["-"], False),
        (capture_cli, ["a note", "--valid-from", "2026-01-01"], False),
        (capture_cli, ["--from-message", "remember to lint"], False),
        (capture_cli, ["a note", "--help"], False),
        (update_cli, [hit["id"], "--tag", "release"], True),
        (update_cli, [hit["id"][:10], "--untag", "none", "--json"], True),
        (update_cli, [hit["id"], "--title", "Friday deploys", "--body", "We deploy on "
                      "Fridays after the freeze", "--importance", "high", "--confidence",
                      "high", "--type", "knowledge", "--alias", "when?", "--force"], True),
        (update_cli, [hit["id"], "--unalias", "nope"], True),
        (update_cli, ["01ZZZZ", "--tag", "x"], True),
        (update_cli, [hit["id"], "--importance", "huge"], False),
        (update_cli, [hit["id"], "--body", "-"], False),
        (update_cli, [hit["id"]], True),
        (update_cli, [], False),
        (update_cli, [hit["id"], "--version"], False),
    ]
    for n, (module, argv, plain) in enumerate(table):
        name = module.__name__.rsplit(".", 1)[1]
        new_id = f"01J{n:02d}" + "Z" * 21
        monkeypatch.setattr(writes, "new_ulid", lambda new_id=new_id: new_id)
        before = files()
        expected = _click_path(argv, capsys, name)
        written = files()
        for path in set(written) - set(before):
            path.unlink()
        target.write_bytes(before[target])
        fast = _fast_path(argv, capsys, monkeypatch, step=module)
        assert (fast is not None) == plain, (name, argv)
        if fast is None:
            continue
        assert fast == expected, (name, argv)
        assert expected[0] or expected[1], (name, argv)
        assert files() == written, (name, argv)
        for path in set(written) - set(before):
            path.unlink()
        target.write_bytes(before[target])
        assert not _common.quiet()


def test_whole_capture_and_update_processes_run_without_click(store: Path) -> None:
    """`git-memex capture TEXT` and `git-memex update ID --tag T` as whole processes
    (the executables): done without loading click; their click forms are the control."""
    code = ("import sys; from memex.adapters.cli.main import main; sys.argv[0] = "
            "'git-memex'\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('CLICK %s' % ('click' in sys.modules))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    [hit] = invoke_json("search", "Fridays")

    def run(*argv: str) -> tuple[str, bool]:
        done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True,
                              text=True, env=env)
        assert done.returncode == 0, done.stderr
        err, _, loaded = done.stderr.rpartition("CLICK ")
        return done.stdout + err, loaded == "True"

    out, clicked = run("capture", "Keep the runbook in the wiki", "--tag", "ops")
    assert out.startswith("saved ") and not clicked
    out, clicked = run("update", hit["id"], "--tag", "release", "--json")
    assert json.loads(out)["id"] == hit["id"] and not clicked
    out, clicked = run("capture", "Keep the runbook in the wiki", "--valid-from", "2026-01-01")
    assert out.startswith("exists ") and clicked  # control: a form click parses
