"""`diff`, `review` and `log` over real repositories with a bare remote."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.index import build
from memex.storage import homes
from tests.helpers import invoke
from tests.helpers.farm import Dev, make_team
from tests.helpers.memfiles import edit, memory, write

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def commit(dev: Dev, message: str) -> None:
    dev.git("add", "-A")
    dev.git("commit", "-q", "-m", message)


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dev:
    """alice's clone: main holds two live memories (pushed); she is on branch `pr`."""
    _, (alice,) = make_team(tmp_path, monkeypatch, ("alice",))
    alice.use()
    write(alice.clone, memory(title="Package manager", body="Use pnpm for installs.",
                              tags=["tooling"], review_state="published"))
    write(alice.clone, memory(title="Deploys", tags=["ops"], review_state="published",
                              body="We deploy with the blue green script every Friday "
                                   "afternoon after the release notes are written."))
    commit(alice, "base memories")
    alice.git("push", "-q", "origin", "main")
    alice.git("switch", "-q", "-c", "pr")
    return alice


def review_json(dev: Dev, *args: str, code: int = 0) -> dict[str, object]:
    dev.use()
    result = invoke("review", "--format", "json", *args)
    assert result.exit_code == code, result.stderr + result.stdout
    data: dict[str, object] = json.loads(result.stdout)
    return data


def kinds(report: dict[str, object]) -> list[tuple[str, bool]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return [(f["kind"], f["blocking"]) for f in findings]


def test_clean_pr_exits_zero(team: Dev) -> None:
    write(team.clone, memory(title="Entry point", body="app.py prints the greeting.",
                             tags=["app"], paths=["app.py"]))
    commit(team, "a memory")
    report = review_json(team)
    assert report["blocking"] == 0 and kinds(report) == []
    assert [m["category"] for m in report["memories"]] == ["new"]  # type: ignore[index]
    out = invoke("review")
    assert out.exit_code == 0 and "nothing blocking" in out.stdout
    assert "added" in out.stdout and "Entry point" in out.stdout


def test_secret_personal_and_instruction_block(team: Dev) -> None:
    secret = memory(title="CI token", body=f"The CI token is {TOKEN} for now.", tags=["ci"])
    personal = memory(title="My editor", scope="personal", review_state=None)
    unreviewed = memory(title="Always run the linter", role="instruction",
                        instruction_state="approved", review_state="approved",
                        trust_level="reviewed", tags=["lint"])
    for m in (secret, personal, unreviewed):
        write(team.clone, m)
    commit(team, "three bad memories")
    report = review_json(team, code=1)
    found = {(f["kind"], f["id"]) for f in report["findings"]  # type: ignore[attr-defined]
             if f["blocking"]}
    assert ("secret", secret.id) in found
    assert ("personal-or-private", personal.id) in found
    assert ("instruction-approval", unreviewed.id) in found
    assert report["blocking"] == 3
    assert TOKEN not in json.dumps(report)  # never the secret itself
    text = invoke("review")
    assert text.exit_code == 1 and "BLOCKING secret" in text.stdout


def test_recorded_instruction_promote_is_listed_not_blocking(team: Dev) -> None:
    m = memory(title="Run make check before pushing", role="instruction",
               instruction_state="draft", review_state="approved", trust_level="reviewed",
               tags=["build"])
    path = write(team.clone, m)
    commit(team, "instruction draft")
    team.git("push", "-q", "origin", "pr:main")
    team.git("fetch", "-q")
    history = [{"at": "2026-11-02T00:00:00Z", "by": "local:carol@example.com",
                "from": "approved", "to": "approved",
                "note": "instruction draft -> approved"}]
    edit(path, instruction_state="approved", review_history=history)
    commit(team, "approve the instruction")
    report = review_json(team)
    assert kinds(report) == [("instruction-promote", False)]
    assert "local:carol@example.com" in report["findings"][0]["detail"]  # type: ignore[index]
    # the same move on an untrusted memory blocks
    edit(path, trust_level="untrusted")
    commit(team, "untrusted")
    report = review_json(team, code=1)
    assert ("instruction-approval", True) in kinds(report)


def _near_duplicate_and_contradiction(team: Dev) -> None:
    """Two memories BASE's pair with (the team fixture's): a near-copy of its deploy note
    and npm against its pnpm."""
    write(team.clone, memory(title="Deploys", tags=["ops"], body=(
        "We deploy with the blue green script every Friday afternoon after the release "
        "notes are written.")))
    write(team.clone, memory(title="Package manager", body="Use npm for installs.",
                             tags=["tooling"]))


def test_near_duplicate_contradiction_and_paths(team: Dev) -> None:
    _near_duplicate_and_contradiction(team)
    write(team.clone, memory(title="Old layout", body="Handlers live in src/gone.",
                             tags=["layout"], paths=["src/gone/**", "app.py"]))
    commit(team, "three memories to look at")
    report = review_json(team)  # none of these blocks
    found = kinds(report)
    assert ("near-duplicate", False) in found
    assert ("contradiction", False) in found
    assert ("paths", False) in found
    paths = [f for f in report["findings"] if f["kind"] == "paths"]  # type: ignore[attr-defined]
    assert "src/gone/**" in paths[0]["detail"] and "app.py" not in paths[0]["detail"]
    md = invoke("review", "--format", "markdown")
    assert md.stdout.startswith("<!-- git-memex review -->")
    assert "| added |" in md.stdout and "near-duplicate" in md.stdout


def test_fresh_clone_reads_the_folder_without_building_the_index(team: Dev) -> None:
    _near_duplicate_and_contradiction(team)
    commit(team, "a near-duplicate and a contradiction")
    team.use()
    index = build.db_path(homes.workspace(team.clone))
    if index.exists():
        index.unlink()
    fresh = review_json(team)
    assert not index.exists()  # nothing built: a CI clone never needs it
    assert ("near-duplicate", False) in kinds(fresh) and ("contradiction", False) in kinds(fresh)
    assert invoke("reindex").exit_code == 0 and index.exists()
    assert review_json(team) == fresh  # the warm index gives the same report


def test_base_from_git_when_the_working_tree_differs(team: Dev) -> None:
    write(team.clone, memory(title="Package manager", body="Use npm for installs.",
                             tags=["tooling"]))
    commit(team, "contradiction")
    (team.clone / "scratch.txt").write_text("x\n", encoding="utf-8")
    write(team.clone, memory(title="uncommitted", body="not part of the PR"))
    report = review_json(team)
    assert ("contradiction", False) in kinds(report)
    assert len(report["memories"]) == 1  # type: ignore[arg-type]


def test_review_without_a_base_is_a_usage_error(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "solo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a").write_text("a\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(repo), "add", "a"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "a"], check=True)
    monkeypatch.chdir(repo)
    result = invoke("review")
    assert result.exit_code == 2 and "name the base" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- diff


def test_diff_working_tree_staged_and_ranges(team: Dev) -> None:
    base = team.git("rev-parse", "HEAD").strip()
    assert invoke("diff", "--exit-code").exit_code == 0
    old = memory(title="Use yarn", body="Use yarn.", tags=["tooling"])
    old_path = write(team.clone, old)
    commit(team, "yarn")
    new = memory(title="Use pnpm now", body="Use pnpm.", tags=["tooling"], supersedes=old.id)
    write(team.clone, new)
    edit(old_path, status="superseded", superseded_by=new.id,
         retired_at="2026-11-02T00:00:00Z", title="Use yarn (old)",
         body="Use yarn.\nSecond line.")
    data = json.loads(invoke("diff", "--json").stdout)
    by_id = {c["id"]: c for c in data["changes"]}
    assert by_id[new.id]["category"] == "new"  # an untracked file counts as added
    retired = by_id[old.id]
    assert retired["category"] == "superseded"
    assert {"field": "title", "old": "Use yarn", "new": "Use yarn (old)"} in retired["fields"]
    assert any(f"superseded by {new.id}" in e for e in retired["events"])
    assert any("successor" in e and "Use pnpm now" in e for e in retired["events"])
    assert "+Second line." in retired["body_diff"]
    people = invoke("diff")
    assert "- " + old.id[:10] in people.stdout and "+ " + new.id[:10] in people.stdout
    assert invoke("diff", "--exit-code").exit_code == 1
    assert json.loads(invoke("diff", "--staged", "--json").stdout)["changes"] == []
    team.git("add", "-A")
    staged = json.loads(invoke("diff", "--staged", "--json").stdout)
    assert len(staged["changes"]) == 2
    commit(team, "supersede")
    ranged = json.loads(invoke("diff", f"{base}..HEAD", "--json").stdout)
    assert {c["category"] for c in ranged["changes"]} == {"new"}  # both new since base
    assert invoke("diff", "nope..HEAD").exit_code == 2


def test_textconv_makes_git_diff_readable(team: Dev) -> None:
    team.run("init")
    assert "diff=memex" in (team.clone / ".gitattributes").read_text(encoding="utf-8")
    conv = team.git("config", "diff.memex.textconv")
    assert "git-memex" in conv and "--textconv" in conv
    m = memory(title="Readable", body="Body text.", tags=["x"])
    path = write(team.clone, m)
    commit(team, "readable")
    edit(path, review_state="approved", title="Readable now")
    commit(team, "approve")
    shown = team.git("show", "HEAD", "--", str(path.relative_to(team.clone)))
    assert "-title: Readable" in shown and "+title: Readable now" in shown
    assert "+review_state: approved" in shown
    logged = team.git("log", "-p", "--", str(path.relative_to(team.clone)))
    assert "+memory " + m.id in logged
    odd = team.clone / "latin1.md"
    odd.write_bytes(b"caf\xe9\n")
    raw = invoke("diff", "--textconv", str(odd))
    assert raw.exit_code == 0 and raw.stdout_bytes == b"caf\xe9\n"


# ---------------------------------------------------------------- log


def test_log_follows_one_memory(team: Dev) -> None:
    m = memory(title="Retries", body="Retry three times.", tags=["net"])
    path = write(team.clone, m)
    commit(team, "retries: submit")
    history = [{"at": "2026-11-02T00:00:00Z", "by": "local:carol@example.com",
                "from": "proposed", "to": "approved"}]
    edit(path, review_state="approved", approved_by="local:carol@example.com",
         review_history=history)
    team.git("-c", "user.name=Dana", "-c", "user.email=dana@example.com", "add", "-A")
    team.git("-c", "user.name=Dana", "-c", "user.email=dana@example.com", "commit", "-q",
             "-m", "retries: approve")
    edit(path, body="Retry five times.", title="Retries (five)")
    commit(team, "retries: five")
    data = json.loads(invoke("log", m.id[:12], "--json").stdout)
    entries = data["entries"]
    assert [e["subject"] for e in entries] == ["retries: five", "retries: approve",
                                               "retries: submit"]
    assert entries[2]["kind"] == "added"
    approve = entries[1]
    assert approve["author"] == "Dana" and approve["history"][0]["by"] == \
        "local:carol@example.com"
    assert any("review proposed -> approved by local:carol@example.com" in e
               for e in approve["events"])
    assert {"field": "title", "old": "Retries", "new": "Retries (five)"} in \
        entries[0]["fields"] and entries[0]["body_changed"]
    out = invoke("log", m.id)
    assert out.exit_code == 0 and "Dana <dana@example.com>" in out.stdout
    assert invoke("log", "01ZZZZZZ").exit_code == 1


def test_readable_form_of_an_unparseable_file_is_the_file() -> None:
    from memex.workflows import memdiff

    assert memdiff.readable("no front matter\n") == "no front matter\n"
    text = frontmatter.emit(memory(title="T", body="B"))
    assert memdiff.readable(text).endswith("\nB\n")
