"""Limits the gate enforces (issue 13, item 7): the body size against the team's
memex.maxBytes (.memexconfig, so a local verify and CI agree), and an id that is both
an outbox draft and a repo file (the repo copy is the one reads show)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from memex.storage import homes
from tests.helpers import invoke, invoke_json
from tests.helpers.memfiles import memory, write


def test_verify_fails_a_body_over_the_teams_limit(repo: Path) -> None:
    invoke("init")
    big = write(repo, memory(title="Huge", body="word " * 20_000))  # 100 KB
    result = invoke("verify")
    assert result.exit_code == 1 and "size" in result.stdout and big.name in result.stdout
    # A person's own git config does not loosen the gate: CI would not see it.
    subprocess.run(["git", "config", "memex.maxBytes", "1000000"], cwd=repo, check=True)
    assert invoke("verify").exit_code == 1
    # The team's value does.
    subprocess.run(["git", "config", "-f", ".memexconfig", "memex.maxBytes", "200000"],
                   cwd=repo, check=True)
    assert invoke("verify").exit_code == 0, invoke("verify").stdout


def test_an_id_in_the_outbox_and_the_repo_fails_verify_and_reads_show_the_repo_copy(
        repo: Path) -> None:
    invoke("init")
    repo_copy = write(repo, memory(title="Approved team rule", body="Use pnpm.",
                                   review_state="approved"))
    outbox = homes.workspace(repo).outbox_dir
    outbox.mkdir(parents=True)
    draft = outbox / repo_copy.name
    shutil.copy(repo_copy, draft)
    draft.write_text(draft.read_text().replace("Approved team rule", "Stale draft copy")
                     .replace("review_state: approved", "review_state: draft"))
    result = invoke("verify", "--json")
    assert result.exit_code == 1
    rules = json.loads(result.stdout)["rules"]
    message = rules["duplicate"]["first"][0]["message"]
    assert str(draft) in message and "rm" in message
    hits = invoke_json("search", "pnpm")
    assert [h["title"] for h in hits] == ["Approved team rule"]
    shown = invoke_json("show", repo_copy.stem)
    assert shown["title"] == "Approved team rule"
    doctor = next(c for c in invoke_json("doctor")["checks"] if c["name"] == "duplicates")
    assert doctor["level"] == "warn" and sorted(doctor["paths"]) == sorted(
        [str(repo_copy), str(draft)])
