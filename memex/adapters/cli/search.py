"""git-memex-search: find memories by their words.

The everyday search (`git memex search WORDS` with --json, -q, --limit and the filters)
runs without loading click: `fast` parses those plain forms itself and runs the same
`run` the click command runs; anything else (--help, --as-of, an error) goes to click.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memex.adapters.cli import _common, _render
from memex.core import model

if TYPE_CHECKING:
    import click

SCOPES = ("personal", "project", "org")


def run(query: tuple[str, ...], limit: int = 10, scopes: tuple[str, ...] = (),
        types: tuple[str, ...] = (), tags: tuple[str, ...] = (),
        statuses: tuple[str, ...] = (), moment: str | None = None, from_git: bool = False,
        as_of: str | None = None, include: str | None = None, repo: str | None = None,
        explain: bool = False, as_json: bool = False) -> None:
    """The search step once its arguments are parsed (by click or by `fast`)."""
    from memex.search import engine
    from memex.workflows import reads

    text = " ".join(query)
    ws = _common.read_workspace()
    if repo:
        ws = engine.project_workspace(ws, repo)
    req = engine.SearchRequest(
        query=text, limit=limit, scopes=scopes or None, types=types, tags=tags,
        statuses=statuses, as_of=moment, include_all=include == "all", explain=explain,
        ahead=True)
    if from_git and as_of:
        from memex.workflows import asof

        with asof.from_git(ws, as_of) as past:
            _common.note(f"as of {past.moment}: the memory folder at commit "
                         f"{past.commit[:10]}")
            req.as_of = past.moment
            result = reads.search(past.ws, req, log_in=ws)
    else:
        result = reads.search(ws, req)
    _common.report_quarantine(result.quarantined)
    for warning in result.warnings:
        _common.warn(warning)
    if as_json:
        _common.emit_json([h.as_json() for h in result.hits])
        return
    if not result.hits:
        _common.note("no memories match")
        return
    rows = []
    for hit in result.hits:
        state = hit.memory.label + ("" if hit.status == "active" else f" {hit.status}")
        title = model.escape_controls(hit.title) if hit.title else hit.summary
        if len(title) > 70:
            title = title[:69] + "\u2026"
        rows.append([_render.short(hit.id), state, hit.memory.type, hit.scope,
                     _render.score(hit.score), title])
    table = _render.table(rows, ("ID", "STATE", "TYPE", "SCOPE", "SCORE", "TITLE"))
    if not explain:
        _common.page(table)
        return
    _common.echo(table)
    for hit in result.hits:
        e = hit.explain
        boosts = ", ".join(f"{k} x{v}" for k, v in e.get("boosts", {}).items()) or "none"
        parts = [f"{key} {_render.score(float(e[key]))}" for key in ("bm25", "cosine")
                 if key in e]
        if "coverage" in e:
            parts.append(f"coverage x{e['coverage']}")
        if "fusion" in e:
            parts.append(f"fused by {e['fusion']}")
        _common.echo(f"\n{_render.short(hit.id)}  score {_render.score(hit.score)} "
                   f"({e.get('lane')} lane, {e.get('match')}): {', '.join(parts)}; "
                   f"boosts: {boosts}")
        _common.echo(f"  matched: {', '.join(e.get('matched', [])) or '-'}")


def _positive(value: str) -> object:
    return int(value) if value.isascii() and value.isdigit() and int(value) >= 1 else None


_FLAGS = {"--json": "as_json", "-q": "quiet", "--quiet": "quiet", "--explain": "explain"}
_OPTIONS: dict[str, tuple[str, Callable[[str], object]]] = {
    "--limit": ("limit", _positive), "-n": ("limit", _positive),
    "--scope": ("scopes", _common.plain_choice(SCOPES)),
    "--type": ("types", _common.plain_choice(model.TYPES)),
    "--tag": ("tags", str), "--status": ("statuses", _common.plain_choice(model.STATUSES)),
    "--include": ("include", _common.plain_choice(("all",))),
}


def fast(argv: list[str], prog: str) -> None:
    """Run the search for ARGV without click when it is in the plain forms
    (_common.plain_args); return, having done nothing, for click to parse it."""
    parsed = _common.plain_args(argv, _FLAGS, _OPTIONS, prog)
    if parsed is None or not parsed[0]:
        return
    words, seen = parsed

    def many(name: str) -> tuple[str, ...]:
        return tuple(str(v) for v in seen.get(name, ()))

    limit = seen["limit"][-1] if "limit" in seen else 10
    include = seen["include"][-1] if "include" in seen else None
    _common.run_plain(lambda: run(
        tuple(words), limit=int(str(limit)), scopes=many("scopes"), types=many("types"),
        tags=many("tags"), statuses=many("statuses"),
        include=None if include is None else str(include), explain="explain" in seen,
        as_json="as_json" in seen), quiet_flag="quiet" in seen)


def _command() -> click.Command:
    import click

    @click.command("search")
    @click.argument("query", nargs=-1, required=True)
    @click.option("--limit", "-n", type=click.IntRange(min=1), default=10, show_default=True,
                  help="At most this many hits.")
    @click.option("--scope", "scopes", multiple=True,
                  type=click.Choice(SCOPES),
                  help="Only these scopes (repeatable; default this project + personal).")
    @click.option("--type", "types", multiple=True, type=click.Choice(model.TYPES),
                  help="Only memories of this type (repeatable).")
    @click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeatable: "
                  "all must be present).")
    @click.option("--status", "statuses", multiple=True, type=click.Choice(model.STATUSES),
                  help="Only this status (repeatable; retired ones need --include all).")
    @click.option("--as-of", "as_of", help="What was known and believed at TIME (RFC 3339).")
    @click.option("--from-git", "from_git", is_flag=True,
                  help="With --as-of: search the memory folder as git held it then.")
    @click.option("--include", type=click.Choice(["all"]),
                  help="all: also superseded, retracted, archived, rejected and expired ones.")
    @click.option("--repo", help="Search another project instead: a path to its checkout, or "
                  "its origin URL.")
    @click.option("--explain", is_flag=True, help="Show why each hit ranked where it did.")
    @_common.quiet_option
    @_common.json_option
    @_common.version_option
    @_common.handle_errors
    def cli(query: tuple[str, ...], limit: int, scopes: tuple[str, ...],
            types: tuple[str, ...], tags: tuple[str, ...], statuses: tuple[str, ...],
            as_of: str | None, from_git: bool, include: str | None, repo: str | None,
            explain: bool, as_json: bool) -> None:
        """Search this project's memories and your personal ones for QUERY.

        Any text is a valid query: it is reduced to plain words (quotes, operators,
        symbols and emoji are dropped, as are stop words, question words such as
        "what" or 什么, and question framing such as "what kind of" or "did X say").
        Memories holding every word rank first; the list is then filled with memories
        holding any of them, those holding more of the rarer words first. A few coding
        words also match their other spellings (db and database, k8s and kubernetes,
        repo and repository), and English irregular forms each other (meet and met,
        teach and taught, child and kids). A question asking "when did", "how many" or
        "where" ranks memories holding a time, a number or a place or path higher.
        Chinese, Japanese and Korean text is matched by two-character pieces, so mixed
        queries such as "pnpm 依赖" work.

        Relevance is BM25 over title, tags (both weighted above the body) and body; it
        is then adjusted by review (approved and published above proposed above
        drafts), importance, recency, and whether the memory's paths contain the
        current directory. Deprecated memories are shown ranked low with a warning;
        superseded, retracted, archived, rejected and expired ones are left out unless
        --include all. --as-of TIME shows what was known and valid at TIME; with
        --from-git the memory folder is read as of the last first-parent commit made at
        or before TIME (a date alone: the end of that day, UTC) through a temporary index,
        so rewritten files show what they said then. Another project's memories appear
        only when asked for with --repo.

        The index behind the search is a cache under the git directory, brought up to
        date before every search; reading never changes a memory file. An experimental
        semantic lane is used when `git config memex.embeddings` names a provider (see
        git-memex-embed): hits then say which lane found them (bm25, vector or
        bm25+vector), and memories not yet embedded are ranked by BM25 alone. No hits is not
        an error: the output is empty (`[]` with --json) and the exit status 0.
        """
        if from_git and not as_of:
            raise click.UsageError("--from-git needs --as-of DATE")
        moment = None if from_git else _common.time_value(as_of, "--as-of")
        run(query, limit=limit, scopes=scopes, types=types, tags=tags, statuses=statuses,
            moment=moment, from_git=from_git, as_of=as_of, include=include, repo=repo,
            explain=explain, as_json=as_json)

    return cli


def __getattr__(name: str) -> click.Command:
    return _common.lazy_cli(globals(), name, _command)


def main() -> None:
    _common.run_fast_step(fast, globals(), _command, "search")
