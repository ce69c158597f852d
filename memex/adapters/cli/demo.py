"""git-memex-demo: run the whole flow in a throwaway repo and home."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from memex.adapters.cli import _common, _render


def _say(text: str) -> None:
    # NO_COLOR (https://no-color.org): no styling even on a terminal.
    if os.environ.get("NO_COLOR"):
        click.echo(f"\n$ {text}")
    else:
        click.secho(f"\n$ {text}", bold=True)


@click.command("demo")
@click.option("--keep", is_flag=True, help="Keep the throwaway repo and home afterwards.")
@_common.version_option
@_common.handle_errors
def cli(keep: bool) -> None:
    """Make a throwaway git repo and memory home, then capture, dedupe, redact,
    supersede, list, show and forget memories in it, printing each step. Touches
    nothing of yours: your own memories and repos are never read or written.
    """
    from memex.core import frontmatter
    from memex.storage import gitio, homes
    from memex.workflows import reads, setup, writes

    root = Path(tempfile.mkdtemp(prefix="git-memex-demo-"))
    try:
        repo, home = root / "repo", root / "home"
        repo.mkdir()
        gitio.run(["init", "-q", "-b", "main", str(repo)])
        gitio.run(["remote", "add", "origin", "git@github.com:example/demo.git"], cwd=repo)
        ws = homes.workspace(repo, home=home)
        ws.config["memex.embeddings"] = "off"  # a throwaway repo: no model, no background run
        click.echo(f"demo repo {repo}\nmemory home {home}\nrepo_id {ws.repo_id}")

        _say("git memex init --yes")
        for line in setup.init_repo(ws).changed:
            click.echo(line)

        def capture(text: str, **kw: object) -> writes.WriteResult:
            result = writes.capture(ws, writes.CaptureRequest(text=text, **kw))  # type: ignore[arg-type]
            if result.redaction and result.redaction.changed:
                click.echo(f"  ({result.redaction.notice()})")
            verb = "saved" if result.created else "exists"
            click.echo(f"{verb} {_render.one_line(result.memory)}")
            return result

        _say('git memex capture --type decision --tag tooling "We use pnpm, not npm ..."')
        first = capture("We use pnpm, not npm: the lockfile is pnpm-lock.yaml.",
                        type="decision", tags=["tooling"])
        _say('git memex capture --scope personal "I prefer short commit subjects"')
        capture("I prefer commit subjects under 50 characters.", scope="personal",
                type="preference")
        _say("git memex capture ... (the same text again)")
        capture("We use  pnpm, not npm: the lockfile is pnpm-lock.yaml.")
        _say('git memex capture "CI token is ghp_... <private>my laptop</private>"')
        token = "ghp_" + "Dem0" * 9
        capture(f"The CI bot token is {token}; rotate it yearly. <private>on my laptop</private>",
                type="warning")

        _say(f'git memex supersede {_render.short(first.memory.id)} "We use pnpm 9 ..."')
        new, _ = writes.supersede(ws, first.memory.id, writes.CaptureRequest(
            text="We use pnpm 9, not npm or yarn: the lockfile is pnpm-lock.yaml."))
        click.echo(f"superseded {_render.short(first.memory.id)} by "
                   f"{_render.one_line(new.memory)}")

        _say("git memex list")
        view = reads.load_view(ws)
        click.echo(_render.table(_render.memory_rows(view.items), _render.LIST_HEADERS))

        _say('git memex search "which lockfile do we use"')
        from memex.search import engine as search

        found = search.search(ws, search.SearchRequest(query="which lockfile do we use"))
        for hit in found.hits:
            click.echo(f"{hit.score:<10.4g} {_render.one_line(hit.memory)}")

        _say(f"git memex show {_render.short(new.memory.id)}")
        item, _ = reads.show(ws, new.memory.id)
        click.echo(_render.show_text(item))

        _say(f"cat {new.path}")
        click.echo(frontmatter.emit(item.memory), nl=False)

        _say(f"git memex forget {_render.short(view.items[-1].id)}")
        gone = writes.set_status(ws, view.items[-1].id, "retracted")
        click.echo(f"retracted {_render.one_line(gone.memory)}")

        _say("git memex list --include all")
        view = reads.load_view(ws, include_all=True)
        click.echo(_render.table(_render.memory_rows(view.items), _render.LIST_HEADERS))
        click.echo("\nProject drafts wait in the outbox (outside the repo) until "
                   "`git memex submit`; personal memories never leave the machine.")
    finally:
        if keep:
            click.echo(f"\nkept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
            click.echo(f"\nremoved {root}")


def main() -> None:
    _common.run_step(cli, "demo")
