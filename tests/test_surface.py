"""The command surface: dispatcher, executables, --version, man pages, README/CI."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memex import __version__
from memex.adapters.cli import manpages
from memex.adapters.cli.registry import STEPS
from tests.conftest import BIN, run_cli
from tests.helpers import invoke

ROOT = Path(__file__).resolve().parent.parent


def scripts() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    result: dict[str, str] = data["project"]["scripts"]
    return result


def test_every_step_has_a_script_and_the_registry_module() -> None:
    expected = {"git-memex": "memex.adapters.cli.main:main"}
    expected.update({f"git-memex-{n}": f"{m}:main" for n, (m, _) in STEPS.items()})
    assert scripts() == expected


def test_man_pages_match_the_commands() -> None:
    wanted = manpages.pages()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "man").glob("*.1")}
    assert set(on_disk) == set(wanted), "run: python -m memex.adapters.cli.manpages man"
    for name, text in wanted.items():
        assert on_disk[name] == text, f"{name} is stale: python -m memex.adapters.cli.manpages man"


@pytest.mark.skipif(not shutil.which("man"), reason="man is not installed")
def test_man_renders() -> None:
    for page in (ROOT / "man").glob("*.1"):
        proc = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                              env=dict(os.environ, MANPAGER="cat", MANWIDTH="80"))
        assert proc.returncode == 0 and "NAME" in proc.stdout, page


@pytest.mark.parametrize("step", list(STEPS))
def test_each_executable_has_help_and_version(step: str) -> None:
    exe = BIN / f"git-memex-{step}"
    assert exe.exists(), f"{exe} not installed: pip install -e ."
    # A real process, not measured by coverage: the entry point's code is measured in
    # test_each_executable_prints_the_version's process (docs/decisions.md).
    helped = run_cli(str(exe), "--help", measured=False)
    assert helped.returncode == 0 and b"Usage:" in helped.stdout
    via_dispatcher = invoke(step, "--version")
    assert via_dispatcher.exit_code == 0 and __version__ in via_dispatcher.stdout


# Each executable's entry point answers --version as the executable runs it (sys.argv,
# exit code): all of them in one process, one process start instead of one per step.
_VERSIONS = """
import contextlib, io, sys
from importlib.metadata import entry_points
for step in sys.argv[1:]:
    (point,) = entry_points(group="console_scripts", name=f"git-memex-{step}")
    sys.argv = [f"git-memex-{step}", "--version"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            point.load()()
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
    print(step, code, out.getvalue().strip().replace(chr(10), " "))
"""


def test_each_executable_prints_the_version() -> None:
    proc = run_cli(sys.executable, "-c", _VERSIONS, *STEPS)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert [line.split()[0] for line in lines] == list(STEPS)
    for line in lines:
        step, code, out = line.split(" ", 2)
        assert code == "0" and __version__ in out, line


def test_dispatcher_help_lists_steps_and_version() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for step in STEPS:
        assert step in result.stdout
    assert __version__ in invoke("--version").stdout


def test_unknown_step_lists_steps(repo: Path) -> None:
    proc = run_cli("git", "memex", "captrue")
    assert proc.returncode == 2
    assert b"not a git-memex step" in proc.stderr and b"capture" in proc.stderr


def test_both_spellings_run(repo: Path) -> None:
    a = run_cli("git", "memex", "capture", "--json", "via git")
    b = run_cli("git", "memex-capture", "--json", "via dash")
    c = run_cli("git-memex", "list", "--json")
    assert a.returncode == b.returncode == c.returncode == 0, (a.stderr, b.stderr)
    assert c.stdout.count(b'"id"') == 2


def test_bad_option_is_exit_2(repo: Path) -> None:
    assert invoke("capture", "--no-such-option").exit_code == 2
    assert run_cli("git-memex-list", "--bogus").returncode == 2


@pytest.mark.skipif(not shutil.which("man"), reason="man is not installed")
def test_git_help_opens_the_man_page(repo: Path) -> None:
    env = {"MANPAGER": "cat", "MANWIDTH": "80"}
    proc = run_cli("git", "help", "memex", env=env)
    if proc.returncode != 0:
        pytest.skip("man pages not installed where man looks (non-editable data files)")
    assert b"GIT-MEMEX(1)" in proc.stdout
    step = run_cli("git", "memex", "capture", "--help", env=env)
    assert step.returncode == 0 and b"GIT-MEMEX-CAPTURE(1)" in step.stdout
    direct = run_cli("git-memex", "capture", "--help", env=env)
    assert b"Usage:" in direct.stdout


def test_readme_second_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, re.S)
    install_and_test = blocks[1].strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f'bash -c "{install_and_test}"' in ci
    assert "pip install '.[embed]' && git memex demo" in blocks[0]  # the lane cleared its bar


def test_demo_runs_and_touches_nothing_of_ours(repo: Path, memex_home: Path) -> None:
    proc = run_cli("git", "memex", "demo")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    for needle in ("capture", "supersede", "list", "show", "superseded", "masked", "removed"):
        assert needle in out
    assert not memex_home.exists()
    assert subprocess.run(["git", "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""
