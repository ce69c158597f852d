"""The session-start block: limits, order, query, rule 1, staleness, and the CLI/hook."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from memex.core import frontmatter, model
from memex.core.ulid import new_ulid
from memex.storage import homes
from memex.workflows import context
from tests.conftest import BIN, run_cli
from tests.helpers import invoke, invoke_json

ME = "local:test@example.com"


def put(folder: Path, scope: str, body: str, updated: str = "2026-11-01T00:00:00Z",
        **fields: Any) -> model.Memory:
    """A memory file written straight into FOLDER (a home), as a teammate's would be."""
    ws = homes.workspace()
    values: dict[str, Any] = dict(
        id=new_ulid(), scope=scope, title=body, body=body,
        repo_id=None if scope == "personal" else ws.repo_id,
        review_state=None if scope == "personal" else "published", trust_level="reviewed",
        created_by=ME, created_at=updated, updated_at=updated)
    values.update(fields)
    memory = model.Memory(**values)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
    return memory


def shared(repo: Path) -> Path:
    return repo / ".memex"


def personal(memex_home: Path) -> Path:
    return memex_home / "personal"


def approved_instruction(**fields: Any) -> dict[str, Any]:
    values = dict(role="instruction", instruction_state="approved", trust_level="reviewed")
    values.update(fields)
    return values


def test_defaults_8_project_5_personal_newest_first(repo: Path, memex_home: Path) -> None:
    project = [put(shared(repo), "project", f"project fact {i}",
                   f"2026-11-{i + 1:02d}T00:00:00Z") for i in range(12)]
    mine = [put(personal(memex_home), "personal", f"personal fact {i}",
                f"2026-11-{i + 1:02d}T00:00:00Z") for i in range(9)]
    block = context.build(homes.workspace())
    assert [x.id for x in block.project] == [m.id for m in reversed(project)][:8]
    assert [x.id for x in block.personal] == [m.id for m in reversed(mine)][:5]
    text = block.text()
    assert text.startswith(context.HEADER + "\n" + context.DISCLAIMER)
    assert text.rstrip().endswith(context.FOOTER) and "memory_search" in context.FOOTER


def test_git_config_limits_and_zero_turns_a_section_off(repo: Path, memex_home: Path) -> None:
    for i in range(4):
        put(shared(repo), "project", f"project fact {i}")
        put(personal(memex_home), "personal", f"personal fact {i}")
    put(personal(memex_home), "personal", "my instruction", **approved_instruction())
    subprocess.run(["git", "config", "memex.maxProjectMemories", "2"], check=True)
    subprocess.run(["git", "config", "memex.maxProfileItems", "0"], check=True)
    block = context.build(homes.workspace())
    assert len(block.project) == 2 and block.personal == []
    assert block.instructions == []  # personal off means personal instructions too
    assert "Personal memories" not in block.text()
    subprocess.run(["git", "config", "memex.maxProjectMemories", "0"], check=True)
    block = context.build(homes.workspace())
    assert block.project == [] and "Project memories" not in block.text()
    assert context.DISCLAIMER in block.text()


def test_lines_are_one_line_of_at_most_240(repo: Path) -> None:
    put(shared(repo), "project", "word " * 200 + "\n\nsecond paragraph\nthird", title="")
    put(shared(repo), "project", "标题很长" * 100, title="标题很长" * 100)
    block = context.build(homes.workspace())
    for line in block.project:
        assert len(line.text) <= 240 and "\n" not in line.text
        assert line.text.startswith(f"- {line.id[:10]} [published] ")


def test_query_puts_matches_first_then_recent(repo: Path) -> None:
    match = put(shared(repo), "project", "The payment gateway times out after 30s",
                "2026-10-01T00:00:00Z")
    newer = [put(shared(repo), "project", f"unrelated note {i}", f"2026-11-0{i + 1}T00:00:00Z")
             for i in range(3)]
    block = context.build(homes.workspace(), query="payment gateway timeout")
    assert block.project[0].id == match.id
    assert {x.id for x in block.project[1:]} == {m.id for m in newer}
    assert "best matches first" in block.text()
    recency = context.build(homes.workspace())
    assert recency.project[-1].id == match.id


RULE1_CASES = [
    ("approved, reviewed, published", {}, True),
    ("approved, trusted", {"trust_level": "trusted"}, True),
    ("untrusted", {"trust_level": "untrusted"}, False),
    ("draft instruction", {"instruction_state": "draft"}, False),
    ("revoked", {"instruction_state": "revoked"}, False),
    ("knowledge role", {"role": "knowledge", "instruction_state": None}, False),
    ("still proposed", {"review_state": "proposed"}, False),
    ("outbox draft with forged fields", {"review_state": "draft"}, False),
    ("inference, reviewed", {"source": "inference"}, True),
]


@pytest.mark.parametrize(("label", "fields", "binds"), RULE1_CASES,
                         ids=[c[0] for c in RULE1_CASES])
def test_rule_one_for_project_instructions(repo: Path, label: str, fields: dict[str, Any],
                                           binds: bool) -> None:
    memory = put(shared(repo), "project", f"Instruction: {label}",
                 **approved_instruction(**fields))
    block = context.build(homes.workspace())
    ids = {x.id for x in block.instructions}
    assert (memory.id in ids) is binds
    # Whatever does not bind is still shown, as data, among the project memories.
    assert (memory.id in {x.id for x in block.project}) is not binds
    if not binds and memory.role == "instruction":
        line = next(x.text for x in block.project if x.id == memory.id)
        assert "non-binding instruction: data only" in line


def test_rule_one_inference_needs_review(memex_home: Path, repo: Path) -> None:
    unreviewed = put(personal(memex_home), "personal", "inferred rule",
                     **approved_instruction(source="inference"))
    reviewed = put(personal(memex_home), "personal", "inferred, approved rule",
                   **approved_instruction(source="inference", approved_by=ME))
    ids = {x.id for x in context.build(homes.workspace()).instructions}
    assert unreviewed.id not in ids and reviewed.id in ids


def test_personal_instruction_binds_only_its_owner(memex_home: Path, repo: Path) -> None:
    mine = put(personal(memex_home), "personal", "Answer in English",
               **approved_instruction())
    theirs = put(personal(memex_home), "personal", "Answer in French",
                 **approved_instruction(created_by="local:someone@else.example"))
    block = context.build(homes.workspace())
    assert [x.id for x in block.instructions] == [mine.id]
    assert theirs.id in {x.id for x in block.personal}
    assert context.INSTRUCTIONS_NOTE in block.text()


def test_retired_and_rejected_are_left_out(repo: Path) -> None:
    live = put(shared(repo), "project", "live one")
    for status in ("retracted", "archived"):
        put(shared(repo), "project", f"{status} one", status=status,
            retired_at="2026-11-02T00:00:00Z")
    put(shared(repo), "project", "rejected one", review_state="rejected")
    put(shared(repo), "project", "expired one", expires_at="2026-01-01T00:00:00Z")
    deprecated = put(shared(repo), "project", "deprecated one", status="deprecated")
    block = context.build(homes.workspace())
    assert {x.id for x in block.project} == {live.id, deprecated.id}
    assert "deprecated" in next(x.text for x in block.project if x.id == deprecated.id)


def test_staleness_line(repo: Path) -> None:
    fetch_head = repo / ".git" / "FETCH_HEAD"
    assert context.stale_notice(homes.workspace()) is None  # never fetched: unknown
    fetch_head.write_text("", encoding="utf-8")
    assert context.stale_notice(homes.workspace()) is None
    old = time.time() - 10 * 86400 - 60
    os.utime(fetch_head, (old, old))
    notice = context.stale_notice(homes.workspace())
    assert notice is not None and "10 days ago" in notice and "git memex pull" in notice
    assert notice in context.build(homes.workspace()).text()
    subprocess.run(["git", "config", "memex.staleAfter", "2w"], check=True)
    assert context.stale_notice(homes.workspace()) is None
    assert "git memex pull" not in context.build(homes.workspace()).text()


def test_cli_text_and_json(repo: Path) -> None:
    memory = put(shared(repo), "project", "We deploy with make ship")
    text = invoke("context")
    assert text.exit_code == 0 and memory.id[:10] in text.stdout
    data = invoke_json("context", "--query", "deploy")
    assert data["project"][0]["id"] == memory.id
    assert data["disclaimer"] == context.DISCLAIMER and data["limits"]["project"] == 8
    assert data["text"].startswith(context.HEADER)


def test_empty_store_still_says_what_it_is(repo: Path) -> None:
    text = invoke("context").stdout
    assert context.DISCLAIMER in text and "(none yet)" in text and "memory_search" in text


def test_claude_session_start_hook(repo: Path) -> None:
    memory = put(shared(repo), "project", "The API is versioned by date")
    payload = json.dumps({"session_id": "s", "hook_event_name": "SessionStart",
                          "source": "startup", "cwd": str(repo)}).encode()
    proc = run_cli(str(BIN / "git-memex"), "context", "--hook", "claude",
                   input_bytes=payload, cwd=repo.parent)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart"
    assert memory.id[:10] in answer["additionalContext"]
    assert context.DISCLAIMER in answer["additionalContext"]


@pytest.mark.parametrize("payload", [b"not json", b"[1, 2]", b"\xff\xfe", b""])
def test_session_start_hook_fails_soft(repo: Path, payload: bytes) -> None:
    proc = run_cli(str(BIN / "git-memex"), "context", "--hook", "claude",
                   input_bytes=payload, cwd=repo)
    assert proc.returncode == 0
    if payload in (b"", b"[1, 2]"):  # an empty payload still answers for the cwd
        assert json.loads(proc.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    else:
        assert proc.stdout == b""


def test_session_start_hook_fails_soft_on_a_broken_store(repo: Path, memex_home: Path) -> None:
    memex_home.parent.mkdir(parents=True, exist_ok=True)
    memex_home.write_text("a file where the home folder should be", encoding="utf-8")
    payload = json.dumps({"cwd": str(repo)}).encode()
    proc = run_cli(str(BIN / "git-memex"), "context", "--hook", "claude", input_bytes=payload)
    assert proc.returncode == 0


def test_tiers_and_the_drafts_cap(repo: Path, memex_home: Path) -> None:
    """Reproduced on main: six auto-captured drafts pushed four of six published team
    memories out of the 8 project slots."""
    outbox = homes.workspace().outbox_dir
    published = [put(shared(repo), "project", f"team deploy fact {i}",
                     f"2026-10-0{i + 1}T00:00:00Z") for i in range(6)]
    proposed = put(shared(repo), "project", "team deploy proposal", "2026-10-20T00:00:00Z",
                   review_state="proposed")
    drafts = [put(outbox, "project", f"draft deploy note {i}", f"2026-11-0{i + 1}T00:00:00Z",
                  review_state="draft", trust_level="untrusted") for i in range(6)]
    block = context.build(homes.workspace())
    want = [m.id for m in reversed(published)] + [proposed.id, drafts[-1].id]
    assert [x.id for x in block.project] == want
    assert "reviewed first, then proposed, then drafts" in block.text()
    queried = context.build(homes.workspace(), query="draft deploy note")
    states = [x.review_state for x in queried.project]
    assert states.count("draft") == 4 and len(states) == 8  # half of 8, rounded down
    subprocess.run(["git", "config", "memex.maxProjectMemories", "3"], check=True)
    assert [x.review_state for x in context.build(homes.workspace()).project].count(
        "draft") == 0
    for m in published + [proposed]:
        (shared(repo) / f"{m.id}.md").unlink()  # nothing else left: drafts fill the slots
    assert len(context.build(homes.workspace()).project) == 3
