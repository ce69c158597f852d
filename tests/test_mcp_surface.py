"""What the MCP server tells hosts about itself: tool schemas that validate against the
JSON Schema metaschema and state what the server enforces, honest annotations, prompts
and resources that exist, a parse error for a line that is not JSON; and what an agent
is told when it writes outside git."""

from __future__ import annotations

from pathlib import Path

from memex.storage import homes
from memex.workflows import agent


def test_add_outside_git_is_personal_and_says_so(nogit_dir: Path) -> None:
    out = agent.add(homes.workspace(), "Prefers tabs over spaces")
    assert out["scope"] == "personal"
    assert any("not in a git repository" in n and "personal" in n for n in out["notices"])
    asked = agent.add(homes.workspace(), "A local project fact", scope="project")
    assert asked["scope"] == "project"
    assert any("stay local on this machine" in n for n in asked["notices"])


# ---------------------------------------------------------------- over MCP, the SDK client

import json  # noqa: E402
import select  # noqa: E402
import subprocess  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import jsonschema  # noqa: E402
import pytest  # noqa: E402

from memex.core import model  # noqa: E402
from tests.conftest import BIN  # noqa: E402
from tests.helpers.mcp_helpers import Server, make_env, make_repo, text_of  # noqa: E402

READS = {"memory_search", "memory_get", "memory_list", "memory_context"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    root = tmp_path_factory.mktemp("mcpsurface")
    env = make_env(root)
    repo = make_repo(root / "repo", env)
    with Server(repo, env) as server:
        yield server, repo


@pytest.fixture(scope="module")
def tools(served: tuple[Server, Path]) -> dict[str, Any]:
    return {t.name: t for t in served[0].list_tools().tools}


def test_every_schema_is_valid_json_schema_and_closed(tools: dict[str, Any]) -> None:
    for name, tool in tools.items():
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.input_schema["additionalProperties"] is False, name
        props = tool.input_schema["properties"]
        for field, values in (("scope", ["personal", "project", "org"]),
                              ("type", list(model.TYPES)),
                              ("importance", list(model.IMPORTANCES)),
                              ("confidence", list(model.CONFIDENCES))):
            if field in props:
                branches = props[field].get("anyOf") or [props[field]]
                enums = [b["enum"] for b in branches if "enum" in b]
                assert enums == [values], (name, field)
    assert tools["memory_search"].input_schema["properties"]["limit"]["maximum"] == 50
    assert tools["memory_list"].input_schema["properties"]["offset"]["minimum"] == 0


def test_annotations_say_what_the_tools_do(tools: dict[str, Any]) -> None:
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints.read_only_hint is (name in READS), name
        assert hints.open_world_hint is False
        if name in READS:
            assert "Access counts are kept locally" in " ".join(tool.description.split())
    assert tools["memory_forget"].annotations.idempotent_hint is False
    assert tools["memory_add"].annotations.idempotent_hint is True


# (tool, arguments): the schema and the server must agree on every one of them.
CALLS = [
    ("memory_search", {"query": "x", "limit": 1}), ("memory_search", {"query": "x", "limit": 50}),
    ("memory_search", {"query": "x", "limit": 0}), ("memory_search", {"query": "x", "limit": 51}),
    ("memory_search", {"query": "x", "scope": "personal"}),
    ("memory_search", {"query": "x", "scope": None}),
    ("memory_search", {"query": "x", "scope": "galaxy"}),
    ("memory_search", {"query": "x", "type": "fact"}),
    ("memory_search", {"query": "x", "type": "gossip"}),
    ("memory_search", {"query": "x", "colour": "red"}),
    ("memory_list", {"limit": 100}), ("memory_list", {"limit": 101}),
    ("memory_list", {"offset": 0}), ("memory_list", {"offset": -1}),
    ("memory_add", {"text": "Schemas agree with the server", "importance": "high",
                    "confidence": "low", "scope": "project"}),
    ("memory_add", {"text": "x y", "importance": "urgent"}),
    ("memory_add", {"text": "x y", "confidence": "sure"}),
    ("memory_add", {"text": "x y", "scope": "team"}),
    ("memory_add", {"text": "x y", "role": "boss"}),
]


@pytest.mark.parametrize(("tool", "args"), CALLS)
def test_schema_and_server_agree(served: tuple[Server, Path], tools: dict[str, Any],
                                 tool: str, args: dict[str, Any]) -> None:
    valid = jsonschema.Draft202012Validator(tools[tool].input_schema).is_valid(args)
    result = served[0].call(tool, args)
    assert (not result.is_error) is valid, text_of(result)


def test_the_context_is_a_prompt_and_a_memory_a_resource(served: tuple[Server, Path]) -> None:
    server, _ = served
    assert server.portal is not None and server.session is not None
    added = server.ok("memory_add", {"text": "Prompts and resources are real"})
    prompts = server.portal.call(server.session.list_prompts).prompts
    assert [p.name for p in prompts] == ["memory_context"]
    got = server.portal.call(server.session.get_prompt, "memory_context",
                             {"query": "prompts resources"})
    text = got.messages[0].content.text
    assert "Prompts and resources are real" in text and "Verify them" in text
    templates = server.portal.call(server.session.list_resource_templates)
    assert [t.uri_template for t in templates.resource_templates] == ["memex://memory/{id}"]
    read = server.portal.call(server.session.read_resource, f"memex://memory/{added['id']}")
    shown = json.loads(read.contents[0].text)
    assert shown["id"] == added["id"] and shown["body"] == "Prompts and resources are real"


def test_a_line_that_is_not_json_gets_an_error_not_silence(served: tuple[Server, Path]
                                                            ) -> None:
    _, repo = served
    env = make_env(repo.parent / "raw")
    proc = subprocess.Popen([str(BIN / "git-memex"), "mcp"], cwd=repo, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        replies = []
        for line in ("this is not json", '{"no": "jsonrpc"}',
                     '{"jsonrpc": "2.0", "id": 7, "method": "ping"}'):
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, f"no answer to {line!r}"  # silence, as before the fix
            replies.append(json.loads(proc.stdout.readline()))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert replies[0] == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32700, "message": "Parse error: the line is not JSON"}}
    assert replies[1]["id"] is None and replies[1]["error"]["code"] == -32600
    assert replies[2] == {"jsonrpc": "2.0", "id": 7, "result": {}}
