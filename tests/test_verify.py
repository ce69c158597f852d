"""verify: one planted violation per rule, each beside a clean control."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.index import bodies, build
from memex.storage import homes, usage
from tests.helpers import invoke
from tests.helpers.memfiles import edit, memory, read, write
from tests.helpers.spies import record_calls

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _verify(*args: str) -> tuple[int, dict[str, object]]:
    result = invoke("verify", "--json", *args)
    return result.exit_code, json.loads(result.stdout)


def _rules(data: dict[str, object]) -> dict[str, int]:
    rules = data["rules"]
    assert isinstance(rules, dict)
    return {name: info["count"] for name, info in rules.items()}


def test_clean_control(repo: Path) -> None:
    a = memory()
    b = memory(supersedes=a.id, related=[a.id])
    write(repo, a.copy(status="superseded", superseded_by=b.id,
                       retired_at="2026-01-02T00:00:00Z"))
    write(repo, b)
    (repo / ".memex" / "README.md").write_text("# not a memory\n")
    code, data = _verify()
    assert (code, data["ok"], data["checked"]) == (0, True, 2)
    text = invoke("verify")
    assert text.exit_code == 0 and "ok: 2 memory file(s)" in text.stdout


def test_parse_rule(repo: Path) -> None:
    write(repo, memory())
    bad = repo / ".memex" / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md"
    bad.write_text("---\nid: 01ARZ3NDEKTSV4RRFFQ69G5FAV\nscope: project\nstatus: alive\n---\n")
    code, data = _verify()
    assert code == 1 and _rules(data) == {"parse": 1}
    first = data["rules"]["parse"]["first"][0]  # type: ignore[index]
    assert first["file"] == ".memex/01ARZ3NDEKTSV4RRFFQ69G5FAV.md"
    assert "status" in first["message"]
    assert bad.read_text().endswith("status: alive\n---\n")  # reported, never rewritten


def test_file_name_rule(repo: Path) -> None:
    mem = memory()
    write(repo, mem)
    path = write(repo, memory())
    path.rename(path.with_name("01ARZ3NDEKTSV4RRFFQ69G5FAV.md"))
    code, data = _verify()
    assert code == 1 and _rules(data) == {"file-name": 1}


def test_chain_rule_and_fix(repo: Path) -> None:
    old = memory()
    new = memory(supersedes=old.id)
    old_path = write(repo, old)  # half-written: old still active, says nothing
    write(repo, new)
    code, data = _verify()
    assert code == 1 and _rules(data) == {"chain": 1}
    result = invoke("verify", "--fix")
    assert result.exit_code == 0, result.stdout
    assert "fixed .memex/" in result.stdout
    fixed = read(old_path)
    assert (fixed.status, fixed.superseded_by, fixed.revision) == ("superseded", new.id, 2)
    assert fixed.status_history[-1]["to"] == "superseded"


def test_chain_rule_two_successors_is_not_fixed(repo: Path) -> None:
    old = memory()
    one, two = memory(supersedes=old.id), memory(supersedes=old.id)
    old_path = write(repo, old.copy(status="superseded", superseded_by=one.id,
                                    retired_at="2026-01-02T00:00:00Z"))
    write(repo, one)
    write(repo, two)
    before = old_path.read_text()
    code, data = _verify("--fix")
    assert code == 1 and _rules(data) == {"chain": 1} and data["fixed"] == []
    assert old_path.read_text() == before


def test_link_rule(repo: Path) -> None:
    write(repo, memory(related=[memory().id]))
    write(repo, memory(contradicts=[], extends=[]))
    code, data = _verify()
    assert code == 1 and _rules(data) == {"link": 1}
    assert "related points at" in data["rules"]["link"]["first"][0]["message"]  # type: ignore


def test_link_to_itself(repo: Path) -> None:
    m = memory()
    write(repo, m.copy(related=[m.id]))
    code, data = _verify()
    assert code == 1 and _rules(data) == {"link": 1}
    assert "itself" in data["rules"]["link"]["first"][0]["message"]  # type: ignore


def test_personal_rule(repo: Path) -> None:
    write(repo, memory())
    write(repo, memory(scope="personal", review_state=None, repo_id=None))
    code, data = _verify()
    assert code == 1 and _rules(data) == {"personal": 1}


def test_private_rule(repo: Path) -> None:
    write(repo, memory(visibility="shared"))
    write(repo, memory(visibility="private"))
    code, data = _verify()
    assert code == 1 and _rules(data) == {"private": 1}


def test_secret_rule_names_file_and_line_never_the_secret(repo: Path) -> None:
    write(repo, memory(body="token ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx is masked"))
    path = write(repo, memory(body=f"first line\n\nthe token is {TOKEN}"))
    line = path.read_text().splitlines().index(f"the token is {TOKEN}") + 1
    result = invoke("verify")
    assert result.exit_code == 1
    assert TOKEN not in result.output
    code, data = _verify()
    assert _rules(data) == {"secret": 1}
    first = data["rules"]["secret"]["first"][0]  # type: ignore[index]
    assert first["line"] == line and "github-token" in first["message"]


@pytest.mark.parametrize(("flag", "op", "rule"), [
    ("--require-recall", "read", "recall"),
    ("--require-write", "write", "write"),
])
def test_usage_rules(repo: Path, memex_home: Path, flag: str, op: str, rule: str) -> None:
    ws = homes.workspace(repo)
    write(repo, memory())
    usage.record(memex_home, "git-origin-sha256:someone-else", op, ["X"], 0)
    code, data = _verify("--since", "2020-01-01T00:00:00Z", flag)
    assert code == 1 and _rules(data) == {rule: 1}
    usage.record(memex_home, ws.repo_id, op, ["X"], 0)
    assert _verify("--since", "2020-01-01T00:00:00Z", flag)[0] == 0
    assert _verify("--since", "2999-01-01T00:00:00Z", flag)[0] == 1


def test_usage_flags_need_since_and_a_valid_time(repo: Path) -> None:
    assert invoke("verify", "--require-recall").exit_code == 2
    assert invoke("verify", "--since", "yesterday-ish", "--require-write").exit_code == 2


def test_output_is_bounded(repo: Path) -> None:
    for _ in range(30):
        write(repo, memory(visibility="private"))
    result = invoke("verify")
    assert result.exit_code == 1
    assert "FAIL private (30)" in result.stdout and "... and 25 more" in result.stdout
    assert len(result.stdout.splitlines()) < 10


def test_outside_git_is_an_error(nogit_dir: Path) -> None:
    result = invoke("verify")
    assert result.exit_code == 1 and "not inside a git repository" in result.stderr


def test_fresh_index_reuses_verify_parse(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no index yet, verify parses each file once: the refresh takes its parse."""
    for _ in range(3):
        write(repo, memory())
    calls = record_calls(monkeypatch, frontmatter, "parse")
    code, data = _verify()
    assert (code, data["checked"]) == (0, 3)
    assert len(calls) == 3
    ws = homes.workspace(repo)
    with build.open_index(ws, refresh=False) as index:
        assert len(build.memory_paths(index.conn, "repo")) == 3


def test_index_parses_a_file_changed_after_verify_read_it(repo: Path) -> None:
    """A known parse is used only for the very bytes the refresh reads."""
    path = write(repo, memory(body="old words"))
    stale, parsed = frontmatter.load(path.read_text(encoding="utf-8"))
    data = path.read_bytes()
    edit(path, body="new words")
    ws = homes.workspace(repo)
    known = {str(path): build.Known(data, stale, parsed)}
    with build.open_index(ws, known=known) as index:
        (body,) = index.conn.execute("SELECT zbody FROM memories").fetchone()
    assert bodies.body_text(body) == "new words"
