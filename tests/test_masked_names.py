"""Audit14 review item 3: a secret in a file name is masked in `scan` and `verify`
reports, so two such files came out as the same path; each finding now names the
file's blob id too (what `git ls-files --stage` and `git hash-object` print)."""

from __future__ import annotations

import json
from pathlib import Path

from memex.core import redact
from tests.helpers import git_proc, invoke

TOKENS = ["ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
          "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"]


def _two_secret_names(repo: Path) -> list[tuple[str, str]]:
    """(path, blob id) of two staged files whose names hold secrets."""
    folder = repo / ".memex"
    folder.mkdir(exist_ok=True)
    out = []
    for n, token in enumerate(TOKENS):
        rel = f".memex/{token}.md"
        (repo / rel).write_text(f"stray file {n}\n")
        git_proc("add", rel, cwd=repo)
        out.append((rel, git_proc("rev-parse", f":{rel}", cwd=repo).stdout.strip()))
    shown = {redact.shown(rel) for rel, _ in out}
    assert len(shown) == 1 and not any(t in s for t in TOKENS for s in shown)
    return out


def test_scan_names_the_blob_of_a_file_whose_name_is_masked(repo: Path) -> None:
    files = _two_secret_names(repo)
    result = invoke("scan", "--staged", "--json")
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert {f["path"] for f in findings} == {redact.shown(files[0][0])}
    assert sorted({f["blob"] for f in findings}) == sorted(b for _, b in files)
    assert not any(t in result.stdout for t in TOKENS)
    text = invoke("scan", "--staged")
    assert all(blob[:12] in text.stderr for _, blob in files)
    assert not any(t in text.stderr for t in TOKENS)


def test_verify_names_the_blob_of_a_file_whose_name_is_masked(repo: Path) -> None:
    files = _two_secret_names(repo)
    result = invoke("verify", "--json")
    report = json.loads(result.stdout)
    named = [f for rule in report["rules"].values() for f in rule["first"]
             if f["file"] == redact.shown(files[0][0])]
    assert named and sorted({f["blob"] for f in named}) == sorted(b for _, b in files)
    assert not any(t in result.stdout for t in TOKENS)
    text = invoke("verify").stdout
    assert all(blob[:12] in text for _, blob in files)
