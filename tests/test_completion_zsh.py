"""`git memex <TAB>` in an interactive zsh: the real path a person's TAB takes (zle ->
compinit's _git -> `_git-memex` -> the script), driven through zsh's zpty module.
Runs only where zsh is installed (.ci/hosts installs it in CI)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memex.adapters.cli.registry import STEPS
from tests.helpers import invoke, invoke_json

# Types each line into an interactive `zsh -f` on a pseudo-terminal, presses TAB, then a
# key bound to a widget that appends the edited line to $out and clears it. compadd is
# wrapped to append each set of matches it is given to $out.matches.
DRIVER = r"""
zmodload zsh/zpty || exit 3
out=$1 script=$2; shift 2
zpty shell zsh -f -i
zpty -w shell "PS1='> '; unsetopt beep; autoload -Uz compinit && compinit -u -D"
zpty -w shell ". ${(q)script}"
zpty -w shell "compadd () { local -a m; builtin compadd -O m \"\$@\";" \
    "(( \$#m )) && print -r -- \"\${(j: :)m}\" >> ${(q)out}.matches;" \
    "builtin compadd \"\$@\"; }"
zpty -w shell "dump () { print -r -- \"\$BUFFER\" >> ${(q)out}; BUFFER=''; };" \
    "zle -N dump; bindkey '^T' dump"
for line in "$@"; do
    zpty -w -n shell "$line"$'\t\x14'
done
zpty -w shell exit
while zpty -r shell chunk; do :; done
"""


def zsh_with_git_completion() -> str:
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed here (.ci/hosts installs it in CI)")
    probe = subprocess.run([zsh, "-fc", "zmodload zsh/zpty && autoload -Uz +X _git"],
                           capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip("this zsh has no zpty module or no _git completion function")
    return zsh


def tab(lines: list[str], repo: Path, tmp_path: Path) -> tuple[list[str], list[str]]:
    """(each line after TAB, the match lists compadd was given)."""
    zsh = zsh_with_git_completion()
    script = tmp_path / "git-memex.zsh"
    result = invoke("completion", "zsh")
    assert result.exit_code == 0
    script.write_text(result.stdout, encoding="utf-8")
    driver = tmp_path / "drive.zsh"
    driver.write_text(DRIVER, encoding="utf-8")
    out = tmp_path / "typed"
    proc = subprocess.run([zsh, "-f", str(driver), str(out), str(script), *lines],
                          cwd=repo, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    matches = Path(f"{out}.matches")
    return (out.read_text(encoding="utf-8").splitlines(),
            matches.read_text(encoding="utf-8").splitlines() if matches.exists() else [])


def test_tab_in_zsh_through_gits_completion(repo: Path, tmp_path: Path) -> None:
    memory = invoke_json("capture", "zsh completes this id")["id"]
    typed, matches = tab(["git meme", "git memex sync-s", "git memex search --ex",
                          f"git memex pin {memory[:5]}", "git memex s"], repo, tmp_path)
    # `git meme`: zsh's _git offers only commands it knows and the user-commands style
    assert typed == ["git memex ", "git memex sync-status ", "git memex search --explain ",
                     f"git memex pin {memory} ", "git memex s"]
    assert matches[-1].split() == [s for s in STEPS if s.startswith("s")]


def test_the_script_keeps_a_users_own_git_commands(tmp_path: Path) -> None:
    zsh = zsh_with_git_completion()
    script = tmp_path / "git-memex.zsh"
    script.write_text(invoke("completion", "zsh").stdout, encoding="utf-8")
    program = ("zstyle ':completion:*:*:git:*' user-commands wip:'my own'\n"
               f". {script}\n. {script}\n"
               "zstyle -g got ':completion:*:*:git:*' user-commands; print -rl -- $got\n")
    proc = subprocess.run([zsh, "-f", "-c", program], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "wip:my own", "memex:a memory layer for AI coding agents (git-memex)"]
