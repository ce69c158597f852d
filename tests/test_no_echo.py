"""Issue 14 items 2-3: no refusal, error or notice echoes a secret a user gave as a field's
value. Every message that quotes a value quotes it masked, through the one masking step
(redact.quoted); a refusal's other parts (the digest of a damaged entry) stay as they are.
The same secrets go into every field of the model, and through import (archive and
open-memex entries, with and without --json), capture and update (CLI and the MCP
operations), resolve, verify and the pre-commit scan."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memex.core import clock, model, redact
from memex.core.errors import InvalidMemory, MemexError
from memex.storage import homes
from memex.workflows import agent
from tests.conftest import BIN, run_cli

TOKENS = ["ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
          "AKIA" + "QYLPMN5HFIQR7XYA",
          "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
          "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc9Fq2Lk"]
TOKEN = TOKENS[0]
ULID = "01J" + "0" * 22 + "1"
AT = "2026-11-01T00:00:00Z"


def _unseen(text: str, tokens: list[str] = TOKENS, scan: bool = True) -> None:
    for token in tokens:
        assert token not in text, text
        assert token[4:] not in text, text  # nothing after the 4th character either
    if scan:  # (import's report shows a damaged entry's digest, which reads as random)
        assert not redact.find_secrets(text), text


def _shapes(token: str) -> list[Any]:
    """The value shapes a field may be given: plain, with spaces (not a word, not a tag),
    as a mapping and a list of mappings (not a single value), a flag, a number."""
    return [token, f"{token} x", f"x {token}", {"a": token}, [{"a": token}], [token, "a b"],
            [[token]], {"at": token}, "a " * 35 + token]


def _refusals(field: str, token: str) -> list[str]:
    messages = []
    for value in _shapes(token):
        data: dict[str, Any] = {"id": ULID, "scope": "personal", field: value}
        if field == "instruction_state":
            data["role"] = "instruction"
        if field in ("id", "scope"):
            data = {"id": ULID, "scope": "personal", **data}
        try:
            model.from_front_matter(data, "a plain note")
        except InvalidMemory as exc:
            messages.append(str(exc))
    return messages


@pytest.mark.parametrize("field", sorted(model.KNOWN_KEYS))
@pytest.mark.parametrize("token", TOKENS)
def test_no_model_refusal_quotes_a_secret(field: str, token: str) -> None:
    messages = _refusals(field, token)
    for message in messages:
        _unseen(message)
    if field in model.ENUMS or field in ("id", "created_at", "supersedes", "related",
                                         "revision", "pinned"):
        assert messages, field  # the value is refused (and the message says which field)
        assert any(field in m for m in messages)


def test_the_quoted_value_is_masked_and_the_rest_is_kept() -> None:
    with pytest.raises(InvalidMemory) as caught:
        model.check_enum("trust_level", TOKEN)
    assert str(caught.value) == (f"unknown trust_level {redact.quoted(TOKEN)}; "
                                 "expected one of: untrusted, reviewed, trusted")
    assert redact.quoted(TOKEN) == repr(TOKEN[:4] + "x" * (len(TOKEN) - 4))
    assert redact.quoted("pubished") == "'pubished'"  # an ordinary typo is shown as typed
    assert redact.quoted({"a": TOKEN}, limit=12) == "{'a': 'gh..."
    for call in (lambda: model.normalise_tags([f"{TOKEN} x"]),
                 lambda: model.check_aliases([TOKEN * 20]),
                 lambda: model.check_aliases([f"{TOKEN}\nx"]),
                 lambda: model.member("scope", model.SCOPES, TOKEN)):
        with pytest.raises(InvalidMemory) as caught:
            call()
        _unseen(str(caught.value))
    with pytest.raises(ValueError) as error:
        clock.normalise_time(TOKEN)
    _unseen(str(error.value))


FIELDS = ["trust_level", "review_state", "type", "visibility", "importance", "confidence",
          "status", "source", "role", "created_at", "valid_until", "supersedes", "related",
          "revision", "pinned", "id"]


def _text(mid: str, line: str) -> str:
    head = f"id: {mid}\n" if not line.startswith("id:") else ""
    return (f"---\n{head}schema_version: 2\nrevision: 1\nscope: personal\n{line}\n"
            f"created_at: {AT}\nupdated_at: {AT}\n---\n\na plain note\n")


def _archive(path: Path) -> Path:
    lines = [json.dumps({"format": "git-memex-export", "version": 1})]
    for n, field in enumerate([*FIELDS, "instruction_state"], start=1):
        mid = f"01J{n:023d}"
        line = f"{field}: {TOKEN}" if field != "instruction_state" else \
            f"role: instruction\ninstruction_state: {TOKEN}"
        if field in ("created_at", "revision", "id"):
            line = f"{field}: {TOKEN}"
        text = _text(mid, line).replace(f"revision: 1\nscope: personal\nrevision: {TOKEN}",
                                        f"scope: personal\nrevision: {TOKEN}")
        text = text.replace(f"created_at: {TOKEN}\ncreated_at: {AT}", f"created_at: {TOKEN}")
        lines.append(json.dumps({"home": "personal", "name": f"{mid}.md", "text": text}))
    good = _text("01J" + "9" * 23, "type: fact")
    lines.append(json.dumps({"home": "personal", "name": f"{TOKEN}.md", "text": good}))
    lines.append(json.dumps({"home": TOKEN, "name": f"01J{'9' * 23}.md", "text": good}))
    lines.append(json.dumps({"home": "personal", "name": f"01J{'9' * 23}.md", "text": good,
                             "sha256": TOKEN}))
    lines.append(json.dumps({"front_matter": {"id": ULID, "scope": "personal",
                                              "trust_level": TOKEN, "type": TOKEN},
                             "body": "a plain note"}))
    lines.append(json.dumps({"front_matter": {"id": TOKEN, "type": TOKEN},
                             "body": "a plain note"}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_refusals_never_quote_a_secret(repo: Path, tmp_path: Path) -> None:
    archive = _archive(tmp_path / "in.jsonl")
    for extra in ((), ("--json",)):
        proc = run_cli(str(BIN / "git-memex"), "import", str(archive), *extra, cwd=repo,
                       env={"GIT_MEMEX_HOME": str(tmp_path / f"home{len(extra)}")})
        shown = proc.stdout.decode() + proc.stderr.decode()
        assert proc.returncode == 1, shown
        assert shown.count("refused") if not extra else json.loads(proc.stdout)["rejected"]
        assert "unknown trust_level 'ghp_xxxx" in shown
        _unseen(shown, [TOKEN], scan=False)
    # the digest of a damaged entry is still shown: only the quoted value is masked
    report = json.loads(proc.stdout)
    damaged = [r["reason"] for r in report["rejected"] if "sha256" in r["reason"]]
    assert len(damaged) == 1 and "damaged or edited" in damaged[0]
    actual = damaged[0].split("(")[1].split(")")[0]
    assert len(actual) == 64 and "x" not in actual


def test_capture_and_update_refusals_never_quote_a_secret(repo: Path, memex_home: Path
                                                          ) -> None:
    cli = str(BIN / "git-memex")
    tries = [("capture", "--tag", f"{TOKEN} x", "a note"),
             ("capture", "--valid-until", TOKEN, "a note"),
             ("capture", "--expires-at", TOKEN, "a note"),
             ("capture", "--scope", TOKEN, "a note"),
             ("capture", "--type", TOKEN, "a note"),
             ("capture", "--alias", TOKEN * 20, "a note"),
             ("update", TOKEN, "--title", "x"),
             ("update", "01J0", "--title", "x"),
             ("show", TOKEN),
             ("resolve", TOKEN)]
    added = run_cli(cli, "capture", "--json", "a plain note", cwd=repo)
    mid = json.loads(added.stdout)["id"]
    tries += [("update", mid, "--tag", f"{TOKEN} x"), ("update", mid, "--type", TOKEN)]
    for args in tries:
        for extra in ((), ("--json",)):
            proc = run_cli(cli, *args, *extra, cwd=repo)
            shown = proc.stdout.decode() + proc.stderr.decode()
            assert proc.returncode != 0, (args, shown)
            _unseen(shown, [TOKEN])


def test_agent_refusals_never_quote_a_secret(repo: Path, memex_home: Path) -> None:
    ws = homes.workspace()
    mid = agent.add(ws, "a plain note")["id"]
    tries = [lambda: agent.add(ws, "a note", type=TOKEN),
             lambda: agent.add(ws, "a note", scope=TOKEN),
             lambda: agent.add(ws, "a note", importance=TOKEN),
             lambda: agent.add(ws, "a note", tags=[f"{TOKEN} x"]),
             lambda: agent.add(ws, "a note", expires_at=TOKEN),
             lambda: agent.add(ws, "a note", valid_from=TOKEN),
             lambda: agent.add(ws, "a note", aliases=[TOKEN * 20]),
             lambda: agent.get(ws, TOKEN),
             lambda: agent.update(ws, TOKEN, title="x"),
             lambda: agent.update(ws, mid, type=TOKEN),
             lambda: agent.update(ws, mid, add_tags=[f"{TOKEN} x"]),
             lambda: agent.supersede(ws, TOKEN, "x"),
             lambda: agent.forget(ws, TOKEN),
             lambda: agent.list_memories(ws, scope=TOKEN)]
    for call in tries:
        with pytest.raises(MemexError) as caught:
            call()
        _unseen(str(caught.value), [TOKEN])


def test_verify_and_the_hook_never_quote_a_secret(repo: Path, memex_home: Path) -> None:
    folder = repo / ".memex"
    folder.mkdir(exist_ok=True)
    for n, field in enumerate(FIELDS[:-1], start=1):
        (folder / f"01J{n:023d}.md").write_text(_text(f"01J{n:023d}", f"{field}: {TOKEN}"),
                                               encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    cli = str(BIN / "git-memex")
    for args in (("verify",), ("verify", "--json"), ("scan", "--staged"),
                 ("scan", "--staged", "--json")):
        proc = run_cli(cli, *args, cwd=repo)
        shown = proc.stdout.decode() + proc.stderr.decode()
        assert proc.returncode != 0, (args, shown)
        _unseen(shown, [TOKEN])
    assert shutil.which("git")


def test_migrate_notes_and_a_surrogate_refusal_never_quote_a_secret() -> None:
    from memex.core import frontmatter
    from memex.workflows import migrate

    notes: list[str] = []
    migrate.convert({"id": ULID, "scope": "personal", "priority": TOKEN}, notes)
    assert notes and any("priority" in n for n in notes)
    for note in notes:
        _unseen(note, [TOKEN])
    text = f'---\nid: {ULID}\nscope: personal\ntitle: "\\ud800 {TOKEN}"\n---\n\nx\n'
    with pytest.raises(InvalidMemory) as caught:
        frontmatter.parse(text)
    assert "surrogate" in str(caught.value)
    _unseen(str(caught.value), [TOKEN])


def test_the_mcp_argument_guard_never_quotes_a_secret() -> None:
    import asyncio
    from types import SimpleNamespace

    from memex.adapters import mcp_server

    guard = mcp_server.ArgumentGuard({"memory_add": {"text"}})
    ctx = SimpleNamespace(method="tools/call",
                          params={"name": "memory_add", "arguments": {TOKEN: "x"}})

    async def call_next(ctx: object) -> object:
        raise AssertionError("an unknown argument went through")

    result = asyncio.run(guard(ctx, call_next))
    shown = result.content[0].text
    assert "takes no argument" in shown
    _unseen(shown, [TOKEN])


def test_an_id_or_its_prefix_is_quoted_as_typed(repo: Path, memex_home: Path) -> None:
    """A value of a memory id's shape (Crockford base32, any case, up to 26 characters) is
    quoted as typed, not masked: a prefix of 12-25 characters or a lower-case id read as
    random to the bare detector (`no memory matches '01M8xxxxxxxxxxxx'`)."""
    from memex.core.errors import NotFound
    from memex.storage import store
    from memex.workflows import resolve

    ws = homes.workspace()
    agent.add(ws, "a plain note")
    typed = ["01M8W3Q1JMA4ZZZZ", "01m8w3q1jma49mv4askd0abrzz", "01M8W3Q1JMA49MV4ASKD0ABRZ",
             "01m8w3q1jma4"]
    for text in typed:
        for call in (lambda t=text: store.find(ws, t), lambda t=text: store.find_many(ws, [t]),
                     lambda t=text: agent.get(ws, t),
                     lambda t=text: resolve.settle(ws, t, both=True)):
            with pytest.raises(NotFound) as caught:
                call()
            assert repr(text) in str(caught.value), str(caught.value)
    cli = str(BIN / "git-memex")
    proc = run_cli(cli, "show", "01M8W3Q1JMA4ZZZZ", cwd=repo)
    assert "'01M8W3Q1JMA4ZZZZ'" in proc.stderr.decode(), proc.stderr.decode()
    for call in (lambda: store.find(ws, TOKEN), lambda: agent.get(ws, TOKEN)):
        with pytest.raises(MemexError) as caught:
            call()
        _unseen(str(caught.value), [TOKEN])


def test_an_import_entry_digest_is_shown_whole_and_other_values_masked(
        repo: Path, tmp_path: Path) -> None:
    good = _text("01J" + "9" * 23, "type: fact")
    wrong = hashlib.sha256(b"another text").hexdigest()  # random to the bare detector
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join([
        json.dumps({"format": "git-memex-export", "version": 1}),
        json.dumps({"home": "personal", "name": f"01J{'9' * 23}.md", "text": good,
                    "sha256": wrong}),
        json.dumps({"home": "personal", "name": f"01J{'8' * 23}.md",
                    "text": good.replace("9" * 23, "8" * 23), "sha256": TOKEN})]) + "\n",
        encoding="utf-8")
    proc = run_cli(str(BIN / "git-memex"), "import", str(archive), "--json", cwd=repo,
                   env={"GIT_MEMEX_HOME": str(tmp_path / "home")})
    reasons = [r["reason"] for r in json.loads(proc.stdout)["rejected"]]
    assert any(f"sha256 '{wrong}' does not match" in r for r in reasons), reasons
    assert any("sha256 'ghp_xxxx" in r for r in reasons), reasons
    _unseen(json.dumps(reasons), [TOKEN], scan=False)


def test_click_refusals_and_an_unknown_step_never_quote_a_secret(repo: Path,
                                                                  memex_home: Path) -> None:
    """Click's own refusals (a bad choice, an extra argument, a bad number) print the
    value: the CLI masks the message where it prints them (one masking step)."""
    cli = str(BIN / "git-memex")
    tries = [("status", ULID, TOKEN), ("link", ULID, ULID, TOKEN), ("search", "x", "--type", TOKEN),
             ("search", "x", "--scope", TOKEN), ("search", "x", "--limit", TOKEN),
             ("list", "--scope", TOKEN), ("init", "--client", TOKEN), ("completion", TOKEN),
             ("show", ULID, TOKEN), (TOKEN,)]
    for args in tries:
        proc = run_cli(cli, *args, cwd=repo)
        shown = proc.stdout.decode() + proc.stderr.decode()
        assert proc.returncode == 2, (args, shown)
        _unseen(shown, [TOKEN])
    proc = run_cli(str(BIN / "git-memex-list"), "--scope", TOKEN, cwd=repo)
    assert proc.returncode == 2
    _unseen(proc.stderr.decode(), [TOKEN])
    # an id and an ordinary typo stay readable
    proc = run_cli(cli, "status", ULID, "extra", cwd=repo)
    assert "extra" in proc.stderr.decode()
    proc = run_cli(cli, "list", "--scope", "projct", cwd=repo)
    assert "projct" in proc.stderr.decode()


def test_a_bad_setting_and_the_hook_log_never_quote_a_secret(repo: Path, memex_home: Path
                                                              ) -> None:
    from memex.storage import hooklog

    subprocess.run(["git", "config", "memex.nudgeItems", TOKEN], cwd=repo, check=True)
    with pytest.raises(homes.SettingError) as caught:
        homes.workspace().int_setting("memex.nudgeItems")
    assert "nudgeItems = 'ghp_xxxx" in str(caught.value), str(caught.value)
    _unseen(str(caught.value), [TOKEN])
    from memex.storage import settings

    assert "= '12x'" in settings.bad_value_message("memex.nudgeItems", "12x", "a number", None)
    log = memex_home / "hooklog-test"
    hooklog.record(log, "post-commit", f"failed on {TOKEN} in 01J0000000000000000000000A")
    written = hooklog.log_path(log).read_text(encoding="utf-8")
    assert "01J0000000000000000000000A" in written
    _unseen(written, [TOKEN])


def test_mcp_argument_type_errors_never_quote_a_secret(tmp_path: Path) -> None:
    """The SDK's argument validation (pydantic) quotes the value (`input_value='ghp_...'`):
    the server masks the error text it returns."""
    from tests.helpers.mcp_helpers import Server, make_env, make_repo

    env = make_env(tmp_path)
    repo = make_repo(tmp_path / "repo", env)
    tries = [("memory_search", {"query": "x", "limit": TOKEN}),
             ("memory_list", {"offset": TOKEN}),
             ("memory_add", {"text": "a note", "private": TOKEN}),
             ("memory_add", {"text": "a note", "tags": TOKEN}),
             ("memory_add", {"text": "a note", "paths": TOKEN})]
    with Server(repo, env) as server:
        for tool, args in tries:
            shown = server.error(tool, args)
            _unseen(shown, [TOKEN])
        assert "offset" in server.error("memory_list", {"offset": "12x"})


def test_diff_pull_and_rekey_refusals_never_quote_a_secret(repo: Path, memex_home: Path
                                                           ) -> None:
    cli = str(BIN / "git-memex")
    for args in (("diff", TOKEN), ("review", TOKEN), ("pull", TOKEN)):
        proc = run_cli(cli, *args, cwd=repo)
        shown = proc.stdout.decode() + proc.stderr.decode()
        assert proc.returncode != 0, (args, shown)
        _unseen(shown, [TOKEN])
    from memex.workflows import memdiff, rekey

    with pytest.raises(MemexError) as caught:
        rekey.parse_id(TOKEN)
    _unseen(str(caught.value), [TOKEN])
    with pytest.raises(MemexError) as caught:
        memdiff.commit_of(repo, "HEAD~9")
    assert "'HEAD~9'" in str(caught.value)


def test_mcp_resource_and_prompt_errors_and_the_server_log_never_quote_a_secret(
        tmp_path: Path) -> None:
    """redteam34: the tool results were masked (the argument guard), but a resource read
    of `memex://memory/<token>` answered "Error creating resource from template
    memex://memory/ghp_..." with the URI again in its data, and the SDK logged the URI
    and a prompt's unknown argument name, with tracebacks, to the server's stderr, which
    hosts keep in their MCP log files. Every error the server answers and every line it
    logs is masked as a write would store it."""
    from mcp.shared.exceptions import MCPError

    from tests.helpers.mcp_helpers import Server, make_env, make_repo

    env = make_env(tmp_path)
    repo = make_repo(tmp_path / "repo", env)
    with Server(repo, env) as server:
        assert server.portal is not None and server.session is not None
        with pytest.raises(MCPError) as caught:
            server.portal.call(server.session.read_resource, f"memex://memory/{TOKEN}")
        _unseen(str(caught.value) + json.dumps(caught.value.error.data), [TOKEN])
        assert "not a memory id" in str(caught.value)  # what went wrong is still said
        with pytest.raises(MCPError) as caught:
            server.portal.call(server.session.get_prompt, "memory_context",
                               {"query": "x", "about" + TOKEN: "1"})
        _unseen(str(caught.value) + json.dumps(caught.value.error.data), [TOKEN])
    _unseen(server.log.read_text(encoding="utf-8"), [TOKEN])
    assert "memory_context" in server.log.read_text(encoding="utf-8")  # still logged


QUOTED = 'deploy: password: "hunter2hunter2"'  # the text and markdown reviews mask it


def test_review_json_masks_each_string_as_the_text_output_does() -> None:
    """review34B finding 4: `review --json` masked the JSON text as a whole, where the
    quoted value reads `\\"hunter2hunter2\\"` and the rule no longer matched (leak)."""
    from memex.workflows import review

    assert "hunter2hunter2" not in redact.redact(QUOTED).text
    out = review.masked_json({"memories": [{"title": QUOTED, QUOTED: 1}]})
    assert "hunter2hunter2" not in json.dumps(out), out  # a value and a key
    assert review.masked_json({"n": 1, "ok": True, "none": None, "t": "plain"}) == {
        "n": 1, "ok": True, "none": None, "t": "plain"}


@pytest.mark.parametrize("data", [
    {"memories": [{"title": "the secret is Zq9vLmP2xK\" for staging", "path": ".memex/x.md"}]},
    {"memories": [{"title": "note <private>", "events": ["x</private>"]}]},
])
def test_review_json_does_not_crash_on_a_title(data: dict[str, object]) -> None:
    """review34B finding 4: a `"` right after a secret, or a private block spanning two
    fields, made the masked JSON text invalid (JSONDecodeError: review --json in CI)."""
    from memex.workflows import review

    out = review.masked_json(data)
    assert isinstance(out, dict) and set(out) == {"memories"}


def _raw_mcp(tmp_path: Path, requests: list[dict[str, object]]) -> list[dict[str, Any]]:
    """Each request's answer from a `git-memex mcp` spoken to line by line."""
    import os

    from tests.helpers.mcp_helpers import make_env, make_repo

    env = make_env(tmp_path)
    repo = make_repo(tmp_path / "repo", env)
    proc = subprocess.Popen([str(BIN / "git-memex"), "mcp"], cwd=repo,
                            env=dict(os.environ, **env), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    answers = []
    try:
        for line in [init, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                     *requests]:
            proc.stdin.write(json.dumps(line) + "\n")
            proc.stdin.flush()
            if "id" in line:
                answers.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    return answers[1:]


def test_mcp_error_data_masks_a_quoted_password(tmp_path: Path) -> None:
    """review34B finding 4: the error's data (the URI) was masked as JSON text: raw."""
    answers = _raw_mcp(tmp_path, [{"jsonrpc": "2.0", "id": 2, "method": "resources/read",
                                   "params": {"uri": f"memex://other/{QUOTED}"}}])
    assert "error" in answers[0] and "hunter2hunter2" not in json.dumps(answers), answers


def test_mcp_invalid_params_keep_their_json_rpc_code(tmp_path: Path) -> None:
    """review34B finding 5: the argument guard's catch-all answered the SDK's invalid
    params (-32602) as code 0 with pydantic's text, and logged it as a server error."""
    answers = _raw_mcp(tmp_path, [
        {"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "loud"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": 123, "arguments": {}}}])
    assert [a["error"]["code"] for a in answers] == [-32602, -32602], answers


def test_a_malformed_log_call_does_not_raise_through_the_masking_filter() -> None:
    """review34B finding 8: MaskedLog built the message outside the handler's guard, so
    `log.error("count %d", "x")` raised TypeError into the code that logged. It now logs
    the masked format and the masked arguments' repr."""
    import io
    import logging

    from memex.adapters.mcp_server import MaskedLog

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(MaskedLog())
    log = logging.getLogger("tests.no_echo.masked_log")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.error("count %d of " + TOKEN, "not-a-number " + TOKENS[1])
    finally:
        log.removeHandler(handler)
    shown = stream.getvalue()
    assert "count %d" in shown and "not-a-number" in shown, shown
    _unseen(shown, TOKENS[:2])
