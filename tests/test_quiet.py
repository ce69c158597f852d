"""`-q/--quiet` on the steps that print progress, summaries or next-step hints on
stderr: those go, data on stdout stays, and so do warnings, errors and notices about
what happened to a memory (a masked secret, a scope chosen for you)."""

from __future__ import annotations

import importlib
from pathlib import Path

import click
import pytest

from memex.adapters.cli.registry import STEPS
from tests.helpers import invoke, invoke_json

# Steps whose stderr chatters (a summary, a hint, progress); each decided in
# docs/decisions.md. The rest print data, or only notices and errors.
QUIET = ["init", "capture", "list", "search", "propose", "submit", "promote", "pull",
         "clean", "conflicts", "diff", "distill", "doctor", "export", "import", "migrate",
         "pr-status", "resolve", "scan", "review", "rekey", "reindex", "embed"]


@pytest.mark.parametrize("step", list(STEPS))
def test_quiet_is_offered_where_a_step_chatters(step: str) -> None:
    command: click.Command = importlib.import_module(STEPS[step][0]).cli
    names = {o for p in command.params if isinstance(p, click.Option) for o in p.opts}
    assert ({"-q", "--quiet"} <= names) == (step in QUIET), step


def both(*args: str) -> tuple[click.testing.Result, click.testing.Result]:
    loud, quiet = invoke(*args), invoke(*args, "--quiet")
    assert loud.exit_code == quiet.exit_code, loud.stderr + quiet.stderr
    assert loud.stdout == quiet.stdout  # data stays
    return loud, quiet


def test_quiet_silences_summaries_and_hints_only(repo: Path) -> None:
    invoke_json("init", "--yes")
    first = invoke_json("capture", "--tag", "db", "Use pnpm to install dependencies here")
    invoke_json("capture", "--tag", "db", "Use npm to install dependencies here")
    mine = invoke_json("capture", "--scope", "personal", "I like short commit subjects")["id"]
    cases = {
        ("list", "--limit", "1"): "the newest 1 of 3 shown",
        ("search", "zzqx"): "no memories match",
        ("conflicts",): "open, 0 acknowledged",
        ("export", "-o", "out.jsonl"): "exported",
        ("scan",): "scanned",
        ("diff",): "no memory changed",
        ("distill",): "up to date",
        ("clean",): "",
        ("migrate", "--dry-run"): "no v1 files",
    }
    for args, chatter in cases.items():
        loud, quiet = both(*args)
        assert chatter in loud.stderr, (args, loud.stderr)
        assert quiet.stderr == "", (args, quiet.stderr)
    loud = invoke("propose", mine)
    assert loud.exit_code == 0 and "next: git memex submit" in loud.stderr
    quiet = invoke("propose", "--quiet", mine)  # the same draft, named again
    assert quiet.exit_code == 0 and quiet.stdout.startswith("exists")
    assert "next:" not in quiet.stderr and "already proposed" in quiet.stderr  # a notice
    similar = invoke("capture", "Use pnpm to install the dependencies here")
    assert similar.exit_code == 0 and "similar to" in similar.stderr
    similar = invoke("capture", "--quiet", "Use pnpm to install all dependencies here")
    assert similar.exit_code == 0 and similar.stderr == ""
    assert first["id"]


def test_quiet_keeps_notices_about_what_happened(repo: Path) -> None:
    result = invoke("capture", "--quiet", "the db password=Zx9Qw8Lk3Jh7Gf is in the vault")
    assert result.exit_code == 0 and "masked" in result.stderr
