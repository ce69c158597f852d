"""git-memex-verify: the gate for CI and hooks."""

from __future__ import annotations

import sys

import click

from memex.adapters.cli import _common

SHOWN = 5


@click.command("verify")
@click.option("--fix", is_flag=True, help="Repair what is safe (complete half-written "
              "supersede chains), then check again.")
@click.option("--since", metavar="TIME", help="With --require-recall / --require-write: "
              "RFC 3339 time, a date, or 3d / 2h ago.")
@click.option("--require-recall", is_flag=True, help="Fail when no memory of this repo was "
              "read after --since (from the local usage log).")
@click.option("--require-write", is_flag=True, help="Fail when no memory of this repo was "
              "written after --since (from the local usage log).")
@click.option("--limit", type=click.IntRange(min=1), default=SHOWN, show_default=True,
              help="Failures shown per rule (the counts are always complete).")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(fix: bool, since: str | None, require_recall: bool, require_write: bool, limit: int,
        as_json: bool) -> None:
    """Check the repository's memory folder and exit 0 only when every rule holds:
    every memory file parses and validates; its file name is its id; supersede
    chains are consistent on both ends; related, supersedes, superseded_by, extends
    and contradicts point at memories that exist; no personal memory and no
    visibility: private memory is in the repo; no unmasked secret or <private> block
    (files that arrived by git are reported, never rewritten); the search index, once
    refreshed (incrementally: only changed files are read), covers every readable
    memory file.

    With --since TIME, --require-recall fails when no memory of this repo was read
    after TIME and --require-write when none was written, from the usage log
    git-memex keeps outside the repo (meant for local gates, not a fresh CI clone).

    Each failure names the file and the rule; output is bounded on huge stores: a
    count per rule plus the first few (--limit). --fix repairs only what is safe.
    """
    from memex.workflows import verify

    report = verify.verify(_common.workspace(), since, require_recall, require_write, fix)
    if as_json:
        _common.emit_json(report.as_json(limit))
    else:
        for line in report.fixed:
            click.echo(f"fixed {line}")
        for rule, failures in report.by_rule().items():
            click.echo(f"FAIL {rule} ({len(failures)}): {verify.RULES.get(rule, rule)}")
            for failure in failures[:limit]:
                click.echo(f"  {failure.describe()}")
            if len(failures) > limit:
                click.echo(f"  ... and {len(failures) - limit} more")
        verdict = "ok" if report.ok else f"{len(report.failures)} failure(s)"
        click.echo(f"{verdict}: {report.checked} memory file(s) checked in "
                   f"{report.folder}/")
    sys.exit(0 if report.ok else 1)


def main() -> None:
    _common.run_step(cli, "verify")
