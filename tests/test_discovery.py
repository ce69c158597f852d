"""gitio.discover_config: one git process in a plain checkout, and in every case exactly
what discover() (rev-parse) and config_map() (config --list) say."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex.storage import gitio, homes
from tests.helpers import git


def _both(start: Path) -> tuple[gitio.RepoInfo | None, dict[str, str]]:
    return gitio.discover(start), gitio.config_map(start)


def _counted(monkeypatch: pytest.MonkeyPatch, start: Path
             ) -> tuple[tuple[gitio.RepoInfo | None, dict[str, str]], int]:
    calls: list[list[str]] = []
    real = gitio.run

    def counting(args: list[str], *rest: object, **kw: object) -> object:
        calls.append(args)
        return real(args, *rest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitio, "run", counting)
    got = gitio.discover_config(start)
    monkeypatch.setattr(gitio, "run", real)
    return got, len(calls)


def test_plain_checkout_top_and_subfolder_take_one_git_process(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    for start in (repo, sub):
        got, calls = _counted(monkeypatch, start)
        assert got == _both(start) and got[0] is not None
        assert got[0].toplevel == repo.resolve() and calls == 1


def test_symlinked_path_and_odd_folder_names(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for n, name in enumerate(("with space", "back\\slash", "caf\u00e9", "new\nline")):
        top = tmp_path / name
        git("init", "-q", str(top), cwd=tmp_path)
        link = tmp_path / f"link-{n}"
        link.symlink_to(top)
        for start in (top, link, link / ".git" / ".."):
            assert gitio.discover_config(start) == _both(start), name


def test_worktree_submodule_bare_and_git_dir(repo: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", str(wt), cwd=repo)
    (wt / "deep").mkdir()
    bare = tmp_path / "bare.git"
    git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo), "sub",
        cwd=repo)
    for start in (wt, wt / "deep", bare, repo / ".git", repo / ".git" / "refs",
                  repo / "sub", tmp_path):
        got, calls = _counted(monkeypatch, start)
        assert got == _both(start), start
        assert calls == 2, start  # not plain: rev-parse answered
    assert gitio.discover_config(wt) == (gitio.RepoInfo(
        wt.resolve(), (repo / ".git" / "worktrees" / "wt").resolve(),
        (repo / ".git").resolve()), gitio.config_map(wt))


def test_core_worktree_elsewhere(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    git("config", "core.worktree", str(elsewhere), cwd=repo)
    for start in (repo, elsewhere):
        assert gitio.discover_config(start) == _both(start), start


@pytest.mark.parametrize("variable", ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES",
                                      "GIT_TRACE_SETUP"])
def test_environment_that_steers_git_is_honoured(repo: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  variable: str) -> None:
    other = tmp_path / "other"
    git("init", "-q", str(other), cwd=tmp_path)
    sub = repo / "sub"
    sub.mkdir()
    value = {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(tmp_path),
             "GIT_CEILING_DIRECTORIES": str(repo), "GIT_TRACE_SETUP": "0"}[variable]
    monkeypatch.setenv(variable, value)
    if variable == "GIT_WORK_TREE":
        monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    got, calls = _counted(monkeypatch, sub)
    assert got == _both(sub) and calls == 2


def test_workspace_reads_the_same(repo: Path) -> None:
    (repo / homes.MEMEXCONFIG).write_text("[memex]\n\tdir = docs/memory\n", encoding="utf-8")
    ws = homes.workspace(repo)
    assert (ws.repo, ws.config) == _both(repo)
    assert ws.team_config == {"memex.dir": "docs/memory"}
    assert ws.memory_dir == repo.resolve() / "docs" / "memory"


# ---------------------------------------------------------------- started ahead (config_ahead)


def test_the_git_process_started_ahead_answers_the_next_discovery(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start = repo.resolve()
    expected = _both(start)
    gitio.config_ahead()
    assert start in gitio._AHEAD
    got, calls = _counted(monkeypatch, start)
    assert got == expected and calls == 0  # its answer, no git process of its own
    assert start not in gitio._AHEAD
    assert _counted(monkeypatch, start)[1] == 1  # taken once: the next one runs git


def test_a_process_started_ahead_is_not_taken_once_the_environment_changed(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    start = repo.resolve()
    gitio.config_ahead()
    other = tmp_path / "other.gitconfig"
    other.write_text("[memex]\n\tembeddings = changed\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(other))
    got, calls = _counted(monkeypatch, start)
    assert got == _both(start) and calls == 1
    assert got[1].get("memex.embeddings") == "changed"


def test_a_process_started_ahead_answers_only_its_own_folder(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gitio.config_ahead()
    elsewhere = tmp_path / "plain"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    got, calls = _counted(monkeypatch, elsewhere.resolve())
    assert got == (None, gitio.config_map(elsewhere)) and calls >= 1
    assert repo.resolve() in gitio._AHEAD
    gitio._taken(repo.resolve())  # reaped


# A PATH entry for git_binary's lookup: what the folder holds under the name `git`.
_ENTRIES = ("none", "exec", "plain", "folder", "link", "missing")


@pytest.mark.skipif(os.name != "posix", reason="the lookup is shutil.which's off POSIX")
@given(st.lists(st.tuples(st.sampled_from(_ENTRIES), st.booleans()), max_size=6),
       st.sampled_from(["", os.pathsep, "rel", None]))
@settings(max_examples=60, deadline=None,
          # a list replaces the profile's (hypothesis does not add them): keep its too_slow
          suppress_health_check=[*settings().suppress_health_check,
                                 HealthCheck.function_scoped_fixture])
def test_git_binary_finds_what_shutil_which_finds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        entries: list[tuple[str, bool]], extra: str | None) -> None:
    """gitio.git_binary looks git up on PATH itself (shutil costs a search ~2 ms of
    imports): its answer is shutil.which's for any PATH, with folders that hold no git,
    an executable git, a git not executable, a folder named git, a link to git, a
    missing folder, the same folder twice, an empty entry and a relative one."""
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    folders = []
    for n, (kind, again) in enumerate(entries):
        folder = root / f"d{n}"
        if kind != "missing":
            folder.mkdir()
        target = folder / "git"
        if kind == "exec":
            target.write_text("#!/bin/sh\n")
            target.chmod(0o755)
        elif kind == "plain":
            target.write_text("#!/bin/sh\n")
        elif kind == "folder":
            target.mkdir()
            target.chmod(0o755)
        elif kind == "link":
            target.symlink_to(shutil.which("git") or "/bin/sh")
        folders.append(str(folder))
        if again:
            folders.append(str(folder))
    if extra is not None:
        folders.append(extra)
    (root / "rel").mkdir()
    (root / "rel" / "git").write_text("#!/bin/sh\n")
    (root / "rel" / "git").chmod(0o755)
    monkeypatch.chdir(root)
    monkeypatch.setenv("PATH", os.pathsep.join(folders))
    gitio.git_binary.cache_clear()
    try:
        assert gitio.git_binary() == shutil.which("git")
    finally:
        gitio.git_binary.cache_clear()


@pytest.mark.skipif(os.name != "posix", reason="the lookup is shutil.which's off POSIX")
def test_git_binary_without_path_takes_the_default_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PATH")
    gitio.git_binary.cache_clear()
    try:
        assert gitio.git_binary() == shutil.which("git")
        monkeypatch.setenv("PATH", "")
        gitio.git_binary.cache_clear()
        assert gitio.git_binary() is None
    finally:
        gitio.git_binary.cache_clear()


def _popen_answer(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, encoding="utf-8", errors="replace")
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("args", [
    ["config", "--null", "--list"],
    ["config", "--get", "no.such-key"],  # exit status 1, nothing printed
    ["config", "--get", "odd.value"],  # CR, CRLF and a byte that is not UTF-8
    ["config", "--list", "--show-origin"],  # stdout over a pipe's buffer, stderr traced
    ["no-such-command"],  # git's own error on stderr
])
def test_the_process_started_ahead_reads_what_popen_reads(
        repo: Path, args: list[str]) -> None:
    """config_ahead's git process (gitio._Started: os.posix_spawn, `git -C`) gives the
    exit status, stdout and stderr that subprocess.Popen(text=True) gives."""
    start = repo.resolve()
    config = start / ".git" / "config"
    with config.open("ab") as out:
        out.write(b'[odd]\n\tvalue = "a\rb\r\\nc\xff d"\n')
        out.write(b"".join(b"[big%d]\n\tkey = %s\n" % (n, b"v" * 40) for n in range(2000)))
    binary = gitio.git_binary()
    assert binary is not None
    env = {**os.environ, **gitio._SETUP_TRACE}
    got = gitio._Started([binary, *args], start, env).communicate()
    assert got == _popen_answer([binary, *args], start, env)
    if args[-1] == "value":
        assert got[:2] == (0, "a\nb\nc\ufffd d\n")  # CR and CRLF read as newlines
    if args[-1] == "--show-origin":
        assert got[0] == 0 and len(got[1]) > 65536 and "setup: git_dir" in got[2]


def test_the_process_started_ahead_falls_back_to_popen(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there is no posix_spawn (or a standard stream is closed) Popen starts it."""
    monkeypatch.delattr(os, "posix_spawn", raising=False)
    start = repo.resolve()
    binary = gitio.git_binary()
    assert binary is not None
    env = {**os.environ, **gitio._SETUP_TRACE}
    argv = [binary, "config", "--null", "--list"]
    started = gitio._Started(argv, start, env)
    assert started._popen is not None
    assert started.communicate() == _popen_answer(argv, start, env)


@pytest.mark.skipif(not hasattr(signal, "SIGCHLD"), reason="POSIX only")
def test_the_process_started_ahead_when_children_are_reaped_already(repo: Path) -> None:
    """With SIGCHLD ignored the kernel reaps the child itself: no status to wait for,
    and the answer is Popen's (status 0)."""
    start = repo.resolve()
    binary = gitio.git_binary()
    assert binary is not None
    env = {**os.environ, **gitio._SETUP_TRACE}
    argv = [binary, "config", "--get", "no.such-key"]
    before = signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    try:
        got = gitio._Started(argv, start, env).communicate()
        assert got == _popen_answer(argv, start, env) and got[0] == 0
    finally:
        signal.signal(signal.SIGCHLD, before)


def test_the_property_test_here_keeps_the_untimed_profiles_suppression() -> None:
    """fix32b: the @settings above named only function_scoped_fixture, which replaced the
    conftest profile's too_slow suppression: the test could fail a loaded run on
    hypothesis's data-generation speed."""
    kept = test_git_binary_finds_what_shutil_which_finds._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert HealthCheck.too_slow in kept.suppress_health_check
    assert HealthCheck.function_scoped_fixture in kept.suppress_health_check
    assert kept.deadline is None
