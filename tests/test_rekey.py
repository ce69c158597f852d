"""Origin changes: doctor finds drafts under the old repo_id, `rekey` moves them."""

from __future__ import annotations

import json
from pathlib import Path

from memex.storage import homes
from tests.helpers import git_proc, invoke, invoke_json


def _draft(text: str) -> str:
    return str(invoke_json("capture", "--scope", "project", text)["id"])



def test_changed_origin_is_reported_and_rekey_moves_the_drafts(repo: Path) -> None:
    first = _draft("Run make check before pushing")
    second = _draft("The staging database is reset nightly")
    old_id = invoke_json("show", first)["repo_id"]
    git_proc("remote", "set-url", "origin", "git@github.com:Acme/Renamed.git", cwd=repo)
    assert invoke("show", first).exit_code == 1  # vanished from every command
    assert invoke("list").exit_code == 0  # a read first: the old id must still be known
    doctor = invoke("doctor")
    assert doctor.exit_code == 0  # a warning, not a failure
    line = next(x for x in doctor.stdout.splitlines() if " outbox:" in x)
    assert line.startswith("warn") and "2 draft(s)" in line and old_id in line
    assert "origin github.com/Acme/App" in line and "fix: git memex rekey" in line
    refused = invoke("rekey")  # no terminal, no --yes: never prompts
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1 and "Usage:" not in refused.stderr
    assert refused.stderr.startswith("git-memex: error: move ")
    moved = json.loads(invoke("rekey", "--yes", "--json").stdout)
    assert sorted(moved["moved"]) == sorted([first, second])
    ws = homes.workspace(repo)
    for mid in (first, second):
        shown = invoke_json("show", mid)
        assert shown["repo_id"] == ws.repo_id and shown["home"] == "outbox"
    assert not (ws.home / "outbox" / homes.outbox_name(old_id)).exists()
    assert invoke("doctor").stdout.count("ok   outbox") == 1
    assert "nothing to re-key" in invoke("rekey", "--yes").stderr


def test_a_first_origin_strands_path_keyed_drafts(repo: Path) -> None:
    git_proc("remote", "remove", "origin", cwd=repo)
    draft = _draft("Written before the repo had a remote")
    path_id = homes.repo_id_for(None, repo)
    assert invoke_json("show", draft)["repo_id"] == path_id
    homes.seen_ids_path(homes.workspace(repo).repo).unlink()  # type: ignore[arg-type]
    git_proc("remote", "add", "origin", "https://github.com/Acme/App", cwd=repo)
    line = next(x for x in invoke("doctor").stdout.splitlines() if " outbox:" in x)
    assert line.startswith("warn") and path_id in line
    result = invoke("rekey", "--from", homes.outbox_name(path_id), "--yes")
    assert result.exit_code == 0, result.stderr
    assert invoke_json("show", draft)["repo_id"].startswith("git-origin-sha256:")


def test_rekey_refuses_bad_ids_and_conflicting_copies(repo: Path) -> None:
    assert invoke("rekey", "--from", "nonsense", "--yes").exit_code == 2
    draft = _draft("Same id, two contents")
    ws = homes.workspace(repo)
    old_file = ws.outbox_dir / f"{draft}.md"
    old_id = ws.repo_id
    git_proc("remote", "set-url", "origin", "git@github.com:Acme/Other.git", cwd=repo)
    new_ws = homes.workspace(repo)
    clash = new_ws.outbox_dir / f"{draft}.md"
    clash.parent.mkdir(parents=True)
    clash.write_text(old_file.read_text().replace("Same id", "Other id"))
    before = old_file.read_bytes()
    result = invoke("rekey", "--from", old_id, "--yes")
    assert result.exit_code == 1 and "different content" in result.stderr
    assert old_file.read_bytes() == before and "Other id" in clash.read_text()
