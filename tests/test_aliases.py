"""aliases: other phrasings of what a memory answers, from the writer (issue 19)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter, model
from memex.core.errors import InvalidMemory
from memex.workflows import file_merge as merge
from tests.helpers import invoke, invoke_json
from tests.helpers.memfiles import memory

BODY = "Hooks with language: system run the executable found on PATH."
ALIASES = ["my hook can't find black though it's in my venv", "command not found in pre-commit"]


def _capture(*extra: str) -> dict[str, object]:
    args = ["capture", "--scope", "personal", BODY]
    for alias in ALIASES:
        args += ["--alias", alias]
    return invoke_json(*args, *extra)  # type: ignore[no-any-return]


def _search(query: str) -> list[str]:
    out = invoke_json("search", query)
    return [h["id"] for h in out]


def test_capture_alias_round_trips_and_is_searched(repo: Path) -> None:
    out = _capture()
    text = Path(str(out["path"])).read_text(encoding="utf-8")
    loaded = frontmatter.load(text)[0]
    assert loaded.aliases == ALIASES
    assert frontmatter.emit(loaded) == text  # canonical: the emitter wrote it
    # Words only the aliases hold find the memory; the body's words still do.
    assert _search("venv black") == [out["id"]]
    assert _search("executable PATH") == [out["id"]]


def test_update_adds_and_removes_aliases(repo: Path) -> None:
    out = _capture()
    invoke_json("update", str(out["id"]), "--alias", "isolated environment missing tool",
                "--unalias", ALIASES[0])
    got = invoke_json("show", str(out["id"]))
    assert got["aliases"] == [ALIASES[1], "isolated environment missing tool"]
    assert _search("venv black") == []
    assert _search("isolated environment") == [out["id"]]


def test_alias_limits(repo: Path, memex_home: Path) -> None:
    many = [arg for i in range(model.MAX_ALIASES + 1) for arg in ("--alias", f"phrase {i}")]
    result = invoke("capture", "--scope", "personal", "some text", *many)
    assert result.exit_code == 2 and "at most 8" in result.stderr
    assert not (memex_home / "personal").exists()
    with pytest.raises(InvalidMemory, match="one non-empty line"):
        model.check_aliases(["two\nlines"])
    # a hand-edited file with a multi-line alias is quarantined, not read
    bad = memory(aliases=["fine"])
    text = frontmatter.emit(bad).replace('aliases: [fine]', 'aliases: ["a\\nb"]')
    with pytest.raises(InvalidMemory):
        frontmatter.load(text)


def test_aliases_count_in_max_bytes(repo: Path, memex_home: Path) -> None:
    subprocess.run(["git", "config", "memex.maxBytes", "100"], check=True)
    ok = invoke("capture", "--scope", "personal", "x" * 60, "--alias", "y" * 30)
    assert ok.exit_code == 0, ok.stderr
    over = invoke("capture", "--scope", "personal", "z" * 60, "--alias", "y" * 45)
    assert over.exit_code == 1 and "with its aliases" in over.stderr


def test_aliases_are_masked(repo: Path) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    out = invoke_json("capture", "--scope", "personal", "deploy notes",
                      "--alias", f"token {token} rejected", "--alias", "<private>me</private>")
    text = Path(str(out["path"])).read_text(encoding="utf-8")
    assert token not in text and "ghp_xxxx" in text and "me</private>" not in text
    assert "[REDACTED]" in text


def test_merge_unions_aliases_up_to_the_cap() -> None:
    base = memory(aliases=["a", "b"])
    ours = base.copy(aliases=["a", "b", "c"], revision=2)
    theirs = base.copy(aliases=["b", "d"], revision=2)  # removed "a"
    merged, conflicts = merge.merge_memories(base, ours, theirs, lambda b, o, t: (o, []))
    assert conflicts == [] and merged.aliases == ["b", "c", "d"]
    wide_o = base.copy(aliases=[f"o{i}" for i in range(6)])
    wide_t = base.copy(aliases=[f"t{i}" for i in range(6)])
    merged, _ = merge.merge_memories(base, wide_o, wide_t, lambda b, o, t: (o, []))
    assert len(merged.aliases) == model.MAX_ALIASES
    model.validate(merged)


def test_mcp_add_takes_aliases_and_asks_for_them() -> None:
    pytest.importorskip("mcp")
    from memex.adapters import mcp_server

    assert "aliases" in mcp_server.ADD and "questions" in mcp_server.Aliases.__metadata__[0]\
        .description


def test_agent_add_and_update_aliases(repo: Path) -> None:
    from memex.storage import homes
    from memex.workflows import agent

    ws = homes.workspace(repo)
    added = agent.add(ws, BODY, scope="personal", aliases=ALIASES)
    shown = agent.get(ws, added["id"])
    assert json.loads(json.dumps(shown, default=str))["aliases"] == ALIASES
    agent.update(ws, added["id"], aliases=["only this one"])
    assert agent.get(ws, added["id"])["aliases"] == ["only this one"]
