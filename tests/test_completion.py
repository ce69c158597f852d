"""`git memex <TAB>`: the generated script, driven through bash's completion functions
(git's own completion script calling `_git_memex`) in a subprocess; zsh only when it is
installed (.ci/hosts installs it in CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memex.adapters.cli.registry import STEPS
from tests.helpers import invoke, invoke_json

GIT_COMPLETION = Path("/usr/share/bash-completion/completions/git")

DRIVER = r"""
drive () {
	COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<< "$COMP_LINE"
	[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
	COMPREPLY=()
	local fn
	fn=$(complete -p "${COMP_WORDS[0]}" | sed -E 's/.*-F ([^ ]+).*/\1/')
	"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
	local words=() w
	for w in "${COMPREPLY[@]}"; do words+=("${w% }"); done
	local IFS=' '
	printf '%s\n' "${words[*]}"
}
"""


def complete(script: Path, lines: list[str], git: bool, cwd: Path) -> list[str]:
    source = f". {GIT_COMPLETION}\n" if git else ""
    program = source + f". {script}\n" + DRIVER + "".join(f"drive '{x}'\n" for x in lines)
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], cwd=cwd,
                          capture_output=True, text=True, env=dict(os.environ), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.fixture
def script(repo: Path, tmp_path: Path) -> Path:
    result = invoke("completion", "bash")
    assert result.exit_code == 0
    path = tmp_path / "git-memex.bash"
    path.write_text(result.stdout, encoding="utf-8")
    return path


def test_bash_through_gits_completion(script: Path, repo: Path) -> None:
    if not GIT_COMPLETION.exists():
        message = f"{GIT_COMPLETION} is missing (the bash-completion package; .ci/hosts)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    memory = invoke_json("capture", "Tab completion finds this one")["id"]
    out = complete(script, ["git memex se", "git memex sync", "git memex search --ex",
                            "git memex capture --sc", f"git memex show {memory[:4]}",
                            "git memex pin ", "git memex --vers"], git=True, cwd=repo)
    assert out == ["search", "sync-status", "--explain", "--scope", memory, memory,
                   "--version"]


def test_bash_for_the_direct_command(script: Path, repo: Path) -> None:
    memory = invoke_json("capture", "Another memory to complete")["id"]
    out = complete(script, ["git-memex re", "git-memex list --", f"git-memex forget {memory}",
                            "git-memex verify --require-r"], git=False, cwd=repo)
    assert out[0].split() == [s for s in STEPS if s.startswith("re")]
    assert {"reindex", "rekey", "resolve"} <= set(out[0].split())
    assert "--scope" in out[1].split() and "--json" in out[1].split()
    assert out[2:] == [memory, "--require-recall"]


def test_ids_outside_anything_print_nothing(nogit_dir: Path) -> None:
    result = invoke("completion", "--ids", "ZZ")
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
def test_zsh_loads_the_script_and_completes(script: Path, repo: Path) -> None:
    program = (f"autoload -U compinit && compinit -u\n. {script}\n"
               "COMP_WORDS=(git-memex s); COMP_CWORD=1; _git_memex; print -r -- $COMPREPLY\n"
               "(( $+functions[_git-memex] )) && print has-git-subcommand-function\n")
    proc = subprocess.run(["zsh", "-f", "-c", program], cwd=repo, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        " ".join(s for s in STEPS if s.startswith("s")), "has-git-subcommand-function"]
    assert "search" in proc.stdout.split()


def test_unknown_step_suggests_the_nearest(repo: Path) -> None:
    result = invoke("serch", "x")
    assert result.exit_code == 2
    assert result.stderr.strip() == \
        "git-memex: 'serch' is not a git-memex step; did you mean search?"
    far = invoke("zzzzqqq")
    assert far.exit_code == 2 and "the steps are: init, capture" in far.stderr
