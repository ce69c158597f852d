"""git-memex-reindex: bring the search index up to date, or rebuild it."""

from __future__ import annotations

import sys
from typing import Any

import click

from memex.adapters.cli import _common


@click.command("reindex")
@click.option("--full", is_flag=True, help="Rebuild the index from scratch.")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(full: bool, quiet: bool, as_json: bool) -> None:
    """Bring the search index up to date with the memory files, or rebuild it with
    --full.

    The index is a cache: a SQLite FTS5 database under the git directory
    (`.git/memex/`, one per worktree) or, outside git, under $GIT_MEMEX_HOME. Every
    command that reads memories refreshes it on its own, re-reading only files whose
    size or modification time changed, so this step is needed only to rebuild on
    purpose or to see what the index holds. A missing, damaged or outdated index is
    rebuilt without being asked. Unreadable memory files are reported and left
    untouched. When the semantic lane is on (see git-memex-embed), the vectors of
    new and edited memories are computed afterwards: at once for a fast provider,
    else by a background run. On a terminal a progress bar is shown on stderr.
    """
    from memex import index

    ws = _common.workspace()
    show_bar = not quiet and not as_json and sys.stderr.isatty()
    bar: Any = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if not show_bar or total < 200:
            return
        if bar is None:
            bar = click.progressbar(length=total, label="indexing", file=sys.stderr)
            bar.__enter__()
        bar.update(done - bar.pos)

    try:
        report = index.refresh(ws, full=full, progress=progress)
        if full:
            from memex.workflows import hygiene_cache

            hygiene_cache.clear_side_caches(ws.index_dir)
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    vectors = _embed(ws, quiet or as_json)
    if as_json:
        data = report.as_json()
        if vectors is not None:
            data["vectors"] = vectors
        _common.emit_json(data)
        return
    for warning in report.warnings:
        _common.warn(warning)
    if quiet:
        return
    _common.report_quarantine(report.quarantined)
    changes = (f"{report.new} new, {report.changed} changed, {report.deleted} deleted, "
               f"{report.moved} moved")
    _common.note(f"index: {report.memories} memories ({changes}) in {report.seconds:.2f} s")
    if vectors is not None and "embedded" in vectors:
        _common.note(f"vectors ({vectors['provider']}): {vectors['embedded']} embedded, "
                     f"{vectors['pruned']} removed")


def _embed(ws: Any, silent: bool) -> dict[str, object] | None:
    """The semantic lane's vectors, when the lane is on: at once for a provider fast
    enough, else by a background run; a provider that cannot run here is a warning,
    not a failed reindex."""
    from memex.search import dense as embed
    from memex.search import engine as search
    from memex.workflows import embedding

    name = search.enabled(ws)
    if name is None:
        return None
    try:
        provider = search.provider(name)
    except embed.ProviderUnavailable as exc:
        _common.warn(f"{exc}; vectors not updated")
        return {"error": str(exc)}
    if not embed.inline(name) and embedding.background_allowed(ws):
        embedding.start_background(ws)
        return {"provider": provider.name, "background": True}
    return embedding.run_foreground(ws, provider,
                                    progress=_common.progress_bar(silent)).as_json()


def main() -> None:
    _common.run_step(cli, "reindex")
