"""git-memex-health: counts, decay, conflicts and a health score, with what to do next."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


def _counts(data: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(data.items())) or "none"


@click.command("health")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(as_json: bool) -> None:
    """Report the health of the memories visible here: counts by scope, status and
    review state; drafts waiting in the outbox (`visibility: private` ones counted
    apart: they are never submitted); how long ago the repo last fetched
    (the mtime of .git/FETCH_HEAD against memex.staleAfter, default 7 days);
    retention states (active, aging, stale, cleanup) from the Ebbinghaus decay of
    each memory's use; ROT candidates; open contradictions; unreadable and v1 files.

    The score (0-100) weighs four parts: 30% active ratio, 20% (1 - ROT ratio),
    30% average confidence (high 1.0, medium 0.7, low 0.4) and 20% (1 - conflict
    ratio); 80 and up is excellent, 60-79 good, below that it needs attention. The
    report ends with the commands that would improve it. Reading only: nothing is
    written. On a terminal, a long first run shows a progress bar on stderr.
    """
    from memex.workflows import hygiene

    report = hygiene.health(_common.workspace(), progress=_common.pass_progress())
    if as_json:
        _common.emit_json(report.as_json())
        return
    p = report.parts
    click.echo(f"health {report.score}/100 ({report.grade})")
    click.echo(f"  active ratio {p['active_ratio']:.0%}, ROT ratio {p['rot_ratio']:.0%}, "
               f"average confidence {p['average_confidence']:.2f}, "
               f"conflict ratio {p['conflict_ratio']:.0%}")
    click.echo(f"memories {report.total}: {_counts(report.by_scope)}")
    click.echo(f"  status: {_counts(report.by_status)}")
    click.echo(f"  review: {_counts(report.by_review_state)}")
    click.echo(f"  retention: {_counts(report.retention_states)}")
    private = (f" ({report.outbox_private} private, never submitted)"
               if report.outbox_private else "")
    click.echo(f"outbox drafts {report.outbox}{private}; ROT candidates {report.rot}; "
               f"open contradictions {report.conflicts}; unreadable files "
               f"{report.quarantined} (v1: {report.legacy})")
    pull = report.pull
    if not pull.has_remote:
        click.echo("pull: no remote")
    elif pull.age_days is None:
        click.echo("pull: never fetched")
    else:
        flag = " (stale)" if pull.stale else ""
        click.echo(f"pull: last fetched {pull.age_days:.1f} days ago{flag}, "
                   f"stale after {pull.stale_after_days:g} days")
    if report.next_steps:
        click.echo("next:")
        for step in report.next_steps:
            click.echo(f"  {step}")


def main() -> None:
    _common.run_step(cli, "health")
