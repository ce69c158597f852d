"""git-memex-capture: save a memory from TEXT or stdin.

`git memex capture TEXT` with its plain options (_FLAGS, _OPTIONS) runs without loading
click (`fast`); anything else (stdin, --from-message, --hook, the time options, help)
goes to the click command."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memex.adapters.cli import _common, _hooks, _render
from memex.core import frontmatter, model

if TYPE_CHECKING:
    import click

    from memex.workflows.writes import CaptureRequest, WriteResult


def capture_options(func: _common.F) -> _common.F:
    import click

    for option in reversed([
        click.option("--type", "mtype", type=click.Choice(model.TYPES),
                     default=_DEFAULTS["mtype"],
                     show_default=True, help="What kind of memory this is."),
        click.option("--title", help="A short title (default: the first line)."),
        click.option("--tag", "tags", multiple=True, help="A tag (repeatable)."),
        click.option("--alias", "aliases", multiple=True,
                     help="Another way to ask for this memory: a question it answers, a "
                          "synonym, the symptom it explains (repeatable, at most 8 lines; "
                          "searched with a low weight)."),
        click.option("--importance", type=click.Choice(model.IMPORTANCES),
                     default=_DEFAULTS["importance"],
                     show_default=True),
        click.option("--role", type=click.Choice(model.ROLES), default=_DEFAULTS["role"],
                     show_default=True, help="instruction: may guide agents once approved."),
        click.option("--paths", "paths", multiple=True,
                     help="Repo-relative glob this memory is about (repeatable)."),
        click.option("--confidence", type=click.Choice(model.CONFIDENCES),
                     default=_DEFAULTS["confidence"],
                     show_default=True),
        click.option("--source", type=click.Choice(model.SOURCES), default=_DEFAULTS["source"],
                     show_default=True, help="Where the knowledge came from."),
        click.option("--private", is_flag=True,
                     help="visibility private: never leaves this machine."),
        click.option("--valid-from", help="When the fact became true (RFC 3339)."),
        click.option("--valid-until", help="When the fact stops being true (RFC 3339)."),
        click.option("--expires-at", help="When the memory should drop out of results."),
    ]):
        func = option(func)
    return func


def build_request(text: str, scope: str | None, kw: dict[str, Any]) -> CaptureRequest:
    from memex.workflows.writes import CaptureRequest

    return CaptureRequest(
        text=text, scope=scope, type=kw["mtype"], title=kw.get("title") or None,
        tags=list(kw["tags"]), paths=list(kw["paths"]), aliases=list(kw["aliases"]),
        importance=kw["importance"],
        role=kw["role"], confidence=kw["confidence"], source=kw["source"],
        visibility="private" if kw["private"] else "internal",
        valid_from=_common.time_value(kw.get("valid_from"), "--valid-from"),
        valid_until=_common.time_value(kw.get("valid_until"), "--valid-until"),
        expires_at=_common.time_value(kw.get("expires_at"), "--expires-at"),
    )


def get_text(text: str | None) -> str:
    if text is not None:
        if text == "-":
            return _common.read_stdin_text()
        return text
    if _common.stdin_is_tty():
        import click

        raise click.UsageError("give the memory as TEXT or on stdin")
    return _common.read_stdin_text()


def print_result(result: WriteResult, as_json: bool, verb: str = "saved") -> None:
    if result.redaction is not None and result.redaction.changed:
        _common.notice(f"git-memex: {result.redaction.notice()}")
    for message in result.notices:
        _common.notice(f"git-memex: {message}")
    if result.near_duplicates:
        ids = ", ".join(_render.short(i) for i in result.near_duplicates)
        _common.note(f"git-memex: similar to {ids}; to replace one instead: "
                     f"git memex supersede {_render.short(result.near_duplicates[0])} TEXT")
    if as_json:
        _common.emit_json(result.as_json())
        return
    if result.dry_run:
        _common.note("dry run: nothing written; this is what would be saved:")
        _common.echo(frontmatter.emit(result.memory), nl=False)
        return
    if not result.created and verb == "saved":
        _common.echo(f"exists {_render.one_line(result.memory)}")
    elif verb == "updated" and "nothing changed" in result.notices:
        _common.echo(f"unchanged {_render.one_line(result.memory)}")
    else:
        _common.echo(f"{verb} {_render.one_line(result.memory)}")
    _common.echo(f"  {result.path}")


def run(text: str | None, scope: str | None, dry_run: bool, as_json: bool,
        kw: dict[str, Any]) -> None:
    """Capture TEXT (stdin when None or `-`) once the arguments are parsed (by click or
    by `fast`): neither --from-message nor --hook."""
    from memex.workflows import writes

    body = get_text(text)
    ws = _common.workspace()
    result = writes.capture(ws, build_request(body, scope, kw), dry_run=dry_run)
    print_result(result, as_json)


# The plain forms `fast` runs: flags and options as click's command has them, with a
# converter that refuses (None) what click's would (a choice not in its list).
_FLAGS = {"--json": "as_json", "--dry-run": "dry_run", "--private": "private",
          "-q": "quiet", "--quiet": "quiet"}



_OPTIONS: dict[str, tuple[str, _common.Convert]] = {
    "--scope": ("scope", str), "--title": ("title", str), "--tag": ("tags", str),
    "--alias": ("aliases", str), "--paths": ("paths", str),
    "--type": ("mtype", _common.plain_choice(model.TYPES)),
    "--importance": ("importance", _common.plain_choice(model.IMPORTANCES)),
    "--role": ("role", _common.plain_choice(model.ROLES)),
    "--confidence": ("confidence", _common.plain_choice(model.CONFIDENCES)),
    "--source": ("source", _common.plain_choice(model.SOURCES)),
}
# The defaults of click's options too (capture_options): one list for both parsers.
_DEFAULTS = {"mtype": "knowledge", "importance": "normal", "role": "knowledge",
             "confidence": "medium", "source": "user"}
_MANY = ("tags", "aliases", "paths")


def fast(argv: list[str], prog: str) -> None:
    """Run `capture TEXT` with plain options without click; return, having done nothing,
    for any other argv (click parses it)."""
    parsed = _common.plain_args(argv, _FLAGS, _OPTIONS, prog)
    if parsed is None or len(parsed[0]) != 1:
        return
    [text], seen = parsed
    kw: dict[str, Any] = {name: tuple(str(v) for v in seen.get(name, ())) for name in _MANY}
    for name, default in _DEFAULTS.items():
        kw[name] = str(seen[name][-1]) if name in seen else default
    kw["title"] = str(seen["title"][-1]) if "title" in seen else None
    kw["private"] = "private" in seen
    scope = str(seen["scope"][-1]) if "scope" in seen else None
    _common.run_plain(lambda: run(text, scope, "dry_run" in seen, "as_json" in seen, kw),
                      quiet_flag="quiet" in seen)


def _command() -> click.Command:
    import click

    @click.command("capture")
    @click.argument("text", required=False)
    @click.option("--scope", metavar="[personal|project|org]",
                  help="personal (this machine only), project (default inside a repo) or org.")
    @capture_options
    @click.option("--dry-run", is_flag=True, help="Show what would be saved; write nothing.")
    @click.option("--from-message", "message", metavar="TEXT",
                  help="Scan a user's message (`-`: stdin) for remember/TIL/记住... triggers "
                       "and save what they mark, routed to personal or project.")
    @_hooks.hook_option("Answer a host's prompt hook (JSON on stdin): keyword capture plus a "
                        "relevant-memory nudge; never fails (exit 0, no output on error).")
    @_common.quiet_option
    @_common.json_option
    @_common.version_option
    @_common.handle_errors
    @click.pass_context
    def cli(ctx: click.Context, /, text: str | None, scope: str | None, dry_run: bool,
            message: str | None, hook: str | None, as_json: bool, **kw: Any) -> None:
        """Save a memory from TEXT (or stdin, or `-`).

        Project memories land as drafts in your outbox, outside the repo's working tree,
        until `git memex submit`. Secrets are masked and <private>...</private> is
        redacted before anything is written. Capturing text identical to a live memory
        returns that memory instead of a copy.

        --from-message TEXT scans a message the user typed: each line that starts with a
        trigger ("remember ...", "note that ...", "TIL ...", "save this: ...", 记住...,
        我们决定..., 帮我们记住...) becomes one memory (source keyword, via hook).
        "About me" phrases (remember for me, 记住我, 替我记, 我觉得, 我喜欢) go to
        personal and claim the line first; "about us" ones (我们决定, 我们认为, 帮我们记住,
        plain 记住, and 记住我们) go to project. Fenced code, quoted lines and questions
        are skipped. A message without a trigger saves nothing and exits 0. --hook claude
        does the same for Claude Code's UserPromptSubmit hook and answers in its JSON.
        """
        if hook:
            from memex.workflows import agent_hooks

            _hooks.answer(agent_hooks.user_prompt_submit)
            return
        if message is not None:
            _from_message(ctx, text, scope, message, dry_run, as_json, kw)
            return
        run(text, scope, dry_run, as_json, kw)

    return cli


def _from_message(ctx: click.Context, text: str | None, scope: str | None, message: str,
                  dry_run: bool, as_json: bool, kw: dict[str, Any]) -> None:
    import click

    from memex.workflows import keywords

    flags = {param.name: param.opts[0] for param in ctx.command.params}
    given = [flags[name] for name in ("scope", *kw)
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if text is not None or given:
        extra = ", ".join(given) or "TEXT"
        raise click.UsageError(f"--from-message routes and types memories itself; "
                               f"it does not take {extra}")
    if message == "-":
        message = _common.read_stdin_text()
    ws = _common.workspace()
    results, errors = keywords.capture_message(ws, message, dry_run=dry_run)
    for error in errors:
        _common.warn(error)
    if as_json:
        _common.emit_json({"saved": [r.as_json() for r in results], "errors": errors})
    elif not results and not errors:
        _common.note("no trigger (remember, note that, TIL, save this:, 记住...) in the "
                     "message; nothing saved")
    for result in results if not as_json else []:
        print_result(result, False)
    if errors:
        raise SystemExit(1)


def __getattr__(name: str) -> click.Command:
    return _common.lazy_cli(globals(), name, _command)


def main() -> None:
    _common.run_fast_step(fast, globals(), _command, "capture")
