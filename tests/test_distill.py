"""distill: approved, trusted, stable project instructions into AGENTS.md, as a diff."""

from __future__ import annotations

from pathlib import Path

from memex.core import frontmatter, model
from memex.core.ulid import new_ulid
from memex.storage import homes
from memex.workflows import distill
from tests.helpers import invoke, invoke_json


def put(folder: Path, **kw: object) -> model.Memory:
    base: dict[str, object] = {
        "id": new_ulid(), "scope": "project", "type": "workflow", "role": "instruction",
        "instruction_state": "approved", "trust_level": "reviewed",
        "review_state": "published", "created_at": "2026-11-01T00:00:00Z",
        "updated_at": "2026-11-01T00:00:00Z", "repo_id": homes.workspace().repo_id,
    }
    base.update(kw)
    memory = model.Memory(**base)  # type: ignore[arg-type]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
    return memory


def test_diff_then_write_idempotent(repo: Path, memex_home: Path) -> None:
    shared = repo / ".memex"
    good = put(shared, title="Run tests", body="Run `pytest -q` before every push.")
    put(shared, title="Guess", body="Agents guessed this.", source="inference")
    put(shared, title="Unapproved", body="Not yet.", instruction_state="draft")
    put(shared, title="Untrusted", body="Nope.", trust_level="untrusted")
    put(shared, title="Retired", body="Old rule.", status="archived",
        retired_at="2026-11-02T00:00:00Z")
    put(memex_home / "personal", scope="personal", repo_id=None, review_state=None,
        title="Mine", body="I like tabs.")
    agents = repo / "AGENTS.md"
    agents.write_text("# AGENTS.md\n\nHand-written intro.\n", encoding="utf-8")
    result = invoke("distill")
    assert result.exit_code == 0
    assert result.stdout.startswith("--- a/AGENTS.md\n+++ b/AGENTS.md\n")
    assert "+- Run tests: Run `pytest -q` before every push." in result.stdout
    for never in ("Agents guessed", "Not yet", "Nope", "Old rule", "I like tabs"):
        assert never not in result.stdout
    assert "inferred" in result.stderr and "personal" in result.stderr
    assert agents.read_text() == "# AGENTS.md\n\nHand-written intro.\n"  # only a proposal
    assert invoke("distill", "--write").exit_code == 0
    text = agents.read_text()
    assert text.startswith("# AGENTS.md\n\nHand-written intro.\n\n" + distill.BEGIN)
    assert f"memex:{good.id}" in text and text.endswith(distill.END + "\n")
    again = invoke_json("distill", "--write")
    assert again["changed"] is False and agents.read_text() == text
    assert invoke("distill").stdout == ""


def test_revoked_instruction_leaves_the_section(repo: Path) -> None:
    shared = repo / ".memex"
    memory = put(shared, title="Use make", body="Build with make.")
    invoke("distill", "--write")
    path = shared / f"{memory.id}.md"
    path.write_text(path.read_text().replace("instruction_state: approved",
                                             "instruction_state: revoked"))
    out = invoke_json("distill", "--write")
    assert out["changed"] and out["instructions"] == []
    assert "Build with make" not in (repo / "AGENTS.md").read_text()


def test_outside_git(nogit_dir: Path) -> None:
    result = invoke("distill")
    assert result.exit_code == 1 and "git repository" in result.stderr


def test_nothing_to_distill(repo: Path) -> None:
    result = invoke("distill")
    assert result.exit_code == 0 and result.stdout == "" and "up to date" in result.stderr
    assert not (repo / "AGENTS.md").exists()


def test_distill_markers_match_init_and_old_spelling_is_replaced(repo: Path) -> None:
    from memex.workflows import clients

    put(repo / ".memex", title="Use make", body="Build with make.")
    invoke_json("init", "--client", "cursor")
    agents = repo / "AGENTS.md"
    invoke_json("distill", "--write")
    text = agents.read_text(encoding="utf-8")
    style = clients.BEGIN.split(" begin")[0] + " begin"  # "<!-- git-memex: begin"
    assert distill.BEGIN.startswith(style) and clients.BEGIN.startswith(style)
    assert distill.END.startswith(clients.END.removesuffix(" -->"))
    assert text.count("<!-- git-memex:") == 4 and "<!-- git-memex:begin" not in text
    invoke_json("init", "--client", "cursor")
    assert agents.read_text(encoding="utf-8") == text  # each command keeps the other's block
    old_begin, old_end = distill.LEGACY_MARKERS[0]
    legacy = ("# AGENTS.md\n\nintro\n\n" + old_begin + "\n- stale rule\n" + old_end
              + "\n\nafter\n")
    agents.write_text(legacy, encoding="utf-8")
    assert invoke_json("distill", "--write")["changed"]
    text = agents.read_text(encoding="utf-8")
    assert old_begin not in text and "stale rule" not in text and text.count(distill.BEGIN) == 1
    assert text.startswith("# AGENTS.md\n\nintro\n\n" + distill.BEGIN)
    assert text.endswith(distill.END + "\n\nafter\n")


def test_control_characters_from_git_are_escaped_in_the_diff_and_the_section(
        repo: Path) -> None:
    """audit30: an approved instruction's body and title that arrived by git went into
    AGENTS.md and the printed diff raw (a bidi override, ESC sequences, BEL, backspace,
    C1): hidden text in the file agents read, and a terminal the diff could clear. The
    section holds them escaped, as `show` prints them; the diff escapes the file's own
    lines too; --json is exact."""
    from tests.test_agent_gate import BODY_RAW, HOSTILE_BODY, _terminal

    put(repo / ".memex", title="Run \u202etests\x1b[2J", body=HOSTILE_BODY)
    agents = repo / "AGENTS.md"
    agents.write_text("# AGENTS.md\n\nIntro \x1b]0;owned\x07 here.\n", encoding="utf-8")
    shown = _terminal("distill")
    assert [c for c in BODY_RAW if c in shown] == []
    assert "+- Run \\u202etests\\x1b[2J: harmless searchable words kept second line " in shown
    assert " Intro \\x1b]0;owned\\x07 here." in shown
    assert "\x1b]0;owned" in invoke_json("distill")["diff"]  # machine output: the file as is
    assert invoke("distill", "--write").exit_code == 0
    section = agents.read_text(encoding="utf-8").split(distill.BEGIN)[1]
    assert [c for c in BODY_RAW if c in section] == []
    assert "\\u202eevil\\x1b[2J\\x07\\x9b" in section
    assert invoke("distill").stdout == ""  # written once, nothing more to change
