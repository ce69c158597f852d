"""`list/search --as-of DATE --from-git`: the memory folder as git held it then."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers import invoke
from tests.helpers.farm import snapshot
from tests.helpers.memfiles import edit, memory, write


def commit_at(repo: Path, when: str, message: str) -> None:
    env = dict(os.environ, GIT_COMMITTER_DATE=when, GIT_AUTHOR_DATE=when)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=env)


def titles(*args: str) -> list[str]:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stderr
    return sorted(m["title"] for m in json.loads(result.stdout))


def test_as_of_from_git_reads_what_the_files_said_then(repo: Path) -> None:
    a = memory(title="Use yarn", body="Install with yarn.", created_at="2026-10-15T09:00:00Z",
               updated_at="2026-10-15T09:00:00Z")
    path = write(repo, a)
    commit_at(repo, "2026-10-15T09:00:00Z", "yarn")
    subprocess.run(["git", "switch", "-q", "-c", "side"], cwd=repo, check=True)
    write(repo, memory(title="Side idea", body="From a side branch.",
                       created_at="2026-10-20T09:00:00Z"))
    commit_at(repo, "2026-10-20T09:00:00Z", "side")
    subprocess.run(["git", "switch", "-q", "main"], cwd=repo, check=True)
    edit(path, title="Use pnpm", body="Install with pnpm.", updated_at="2026-11-01T20:00:00Z")
    commit_at(repo, "2026-11-01T20:00:00Z", "rewrite in place")
    env = dict(os.environ, GIT_COMMITTER_DATE="2026-11-05T09:00:00Z")
    subprocess.run(["git", "merge", "-q", "--no-ff", "-m", "merge side", "side"], cwd=repo,
                   check=True, env=env)

    assert titles("list") == ["Side idea", "Use pnpm"]
    cache_before = snapshot(repo / ".git" / "memex")
    tree_before = snapshot(repo / ".memex")
    # the day before the rewrite: the old words; the side branch's commit (dated
    # 2026-10-20, merged on 2026-11-05) is not on the main line yet
    assert titles("list", "--as-of", "2026-10-31", "--from-git") == ["Use yarn"]
    # a date alone is the end of that day: the 20:00 rewrite is in
    assert titles("list", "--as-of", "2026-11-01", "--from-git") == ["Use pnpm"]
    assert titles("list", "--as-of", "2026-11-06", "--from-git") == ["Side idea", "Use pnpm"]
    hits = invoke("search", "yarn", "--as-of", "2026-10-31", "--from-git", "--json")
    assert hits.exit_code == 0 and [h["id"] for h in json.loads(hits.stdout)] == [a.id]
    assert "at commit" in hits.stderr
    assert snapshot(repo / ".git" / "memex") == cache_before  # the cache is untouched
    assert snapshot(repo / ".memex") == tree_before
    assert json.loads(invoke("search", "yarn", "--json").stdout) == []
    # without --from-git today's files answer: the old title is gone, and the side
    # branch's memory counts from its created_at although main had not merged it
    assert titles("list", "--as-of", "2026-10-31T00:00:00Z") == ["Side idea", "Use pnpm"]



def test_from_git_errors(repo: Path) -> None:
    write(repo, memory(created_at="2026-10-15T09:00:00Z"))
    commit_at(repo, "2026-10-15T09:00:00Z", "one")
    early = invoke("list", "--as-of", "2000-01-01", "--from-git")
    assert early.exit_code == 1 and "no commit" in early.stderr
    assert invoke("list", "--from-git").exit_code == 2
    assert invoke("search", "pnpm", "--from-git").exit_code == 2
    bad = invoke("list", "--as-of", "someday", "--from-git")
    assert bad.exit_code == 2 and "Traceback" not in bad.stderr
