"""Real merge and rebase conflicts over memory files, with and without the driver."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from memex.core import frontmatter
from tests.helpers import git_proc, invoke
from tests.helpers.memfiles import commit_all, edit, memory, read, write


def _setup(repo: Path, driver: bool = True, **fields: object) -> Path:
    assert invoke("init", "--yes").exit_code == 0
    if not driver:
        git_proc("config", "--remove-section", "merge.memex", cwd=repo)
    path = write(repo, memory(**fields))
    commit_all(repo, "add memory")
    return path


def _branches(repo: Path, path: Path, theirs: dict[str, object], ours: dict[str, object]
              ) -> None:
    """Branch `topic` applies `theirs`; main applies `ours` (each stamps its own time,
    as every real write does: that is what makes git's text merge collide)."""
    theirs = {"updated_at": "2026-02-01T00:00:00Z", **theirs}
    ours = {"updated_at": "2026-02-02T00:00:00Z", **ours}
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    edit(path, **theirs)
    commit_all(repo, "topic edit")
    git_proc("checkout", "-q", "main", cwd=repo)
    edit(path, **ours)
    commit_all(repo, "main edit")


def test_different_fields_merge_clean_with_the_driver(repo: Path) -> None:
    path = _setup(repo)
    _branches(repo, path, {"importance": "high", "updated_at": "2026-02-01T00:00:00Z"},
              {"tags": ["tooling", "build"], "updated_at": "2026-03-01T00:00:00Z",
               "body": "We use pnpm.\n\nLine two.\n\nLine 3."})
    proc = git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = read(path)
    assert (merged.importance, merged.tags, merged.revision) == ("high", ["tooling", "build"], 3)
    assert merged.updated_at == "2026-03-01T00:00:00Z"
    assert merged.body.endswith("Line 3.")
    assert invoke("verify").exit_code == 0


def test_without_the_driver_it_conflicts_and_resolve_finishes(repo: Path) -> None:
    path = _setup(repo, driver=False)
    _branches(repo, path, {"importance": "high"}, {"tags": ["tooling", "build"]})
    proc = git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo)
    assert proc.returncode == 1
    assert "<<<<<<<" in path.read_text()  # git's text merge: revision lines collide
    doctor = invoke("doctor")
    assert "silently falls back" in doctor.stdout
    listed = invoke("resolve", "--json")
    data = json.loads(listed.stdout)
    assert [m["clean"] for m in data["memories"]] == [True]
    mem_id = path.stem
    result = invoke("resolve", mem_id[:8])
    assert result.exit_code == 0, result.output
    assert git_proc("ls-files", "-u", cwd=repo).stdout == ""
    merged = read(path)
    assert (merged.importance, merged.tags) == ("high", ["tooling", "build"])
    git_proc("commit", "-q", "--no-edit", cwd=repo)


def test_body_conflict_resolve_explains(repo: Path) -> None:
    path = _setup(repo)
    _branches(repo, path, {"body": "We use yarn.\n\nLine two.\n\nLine three."},
              {"body": "We use npm.\n\nLine two.\n\nLine three."})
    proc = git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo)
    assert proc.returncode == 1
    text = path.read_text()
    assert "<<<<<<< ours\nWe use npm.\n=======\nWe use yarn.\n>>>>>>> theirs" in text
    listed = invoke("resolve")
    assert "needs a decision" in listed.stdout and "body" in listed.stdout
    result = invoke("resolve", path.stem)
    assert result.exit_code == 1
    assert "a human must decide" in result.stdout and "body" in result.stdout
    assert git_proc("ls-files", "-u", cwd=repo).stdout  # still unmerged: nothing decided for you
    failed = invoke("verify")
    assert failed.exit_code == 1 and "conflict markers" in failed.stdout
    # the human edits the body, then resolve stages their decision as it is
    fixed = text.replace("<<<<<<< ours\nWe use npm.\n=======\nWe use yarn.\n>>>>>>> theirs\n",
                         "We use npm and yarn.\n")
    path.write_text(fixed)
    again = invoke("resolve", path.stem)
    assert again.exit_code == 0, again.output
    assert "staged it as your decision" in again.stdout
    assert "a human must decide" not in again.stdout
    assert path.read_text() == fixed
    assert git_proc("ls-files", "-u", cwd=repo).stdout == ""


def test_lifecycle_conflict(repo: Path) -> None:
    path = _setup(repo)
    one, two = memory(supersedes=path.stem), memory(supersedes=path.stem)
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    write(repo, two)
    edit(path, status="superseded", superseded_by=two.id, retired_at="2026-02-01T00:00:00Z")
    commit_all(repo, "supersede by two")
    git_proc("checkout", "-q", "main", cwd=repo)
    write(repo, one)
    edit(path, status="superseded", superseded_by=one.id, retired_at="2026-02-02T00:00:00Z")
    commit_all(repo, "supersede by one")
    proc = git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo)
    assert proc.returncode == 1
    data = json.loads(invoke("resolve", "--json").stdout)
    [item] = data["memories"]
    assert [(c["field"], c["kind"]) for c in item["conflicts"]] == [
        ("superseded_by", "lifecycle")]
    assert item["conflicts"][0]["ours"] == one.id and item["conflicts"][0]["theirs"] == two.id


def test_rebase_conflict_resolved_field_by_field(repo: Path) -> None:
    path = _setup(repo, driver=False)
    _branches(repo, path, {"importance": "high"}, {"confidence": "high"})
    git_proc("checkout", "-q", "topic", cwd=repo)
    proc = git_proc("rebase", "main", check=False, cwd=repo)
    assert proc.returncode != 0
    data = json.loads(invoke("resolve", "--json").stdout)
    assert data["state"] == "rebase" and data["memories"][0]["clean"]
    assert invoke("resolve", path.stem).exit_code == 0
    done = git_proc("-c", "core.editor=true", "rebase", "--continue", check=False, cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    merged = read(path)
    assert (merged.importance, merged.confidence) == ("high", "high")


def test_non_memory_conflicts_are_left_alone(repo: Path) -> None:
    path = _setup(repo, driver=False)
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    (repo / "README.md").write_text("topic\n")
    edit(path, importance="high", updated_at="2026-02-01T00:00:00Z")
    commit_all(repo, "topic")
    git_proc("checkout", "-q", "main", cwd=repo)
    (repo / "README.md").write_text("main\n")
    edit(path, tags=["x"], updated_at="2026-02-02T00:00:00Z")
    commit_all(repo, "main")
    assert git_proc("merge", "topic", "-m", "m", check=False, cwd=repo).returncode == 1
    readme_before = (repo / "README.md").read_text()
    data = json.loads(invoke("resolve", "--json").stdout)
    assert data["other_conflicted_paths"] == ["README.md"]
    assert [m["path"] for m in data["memories"]] == [f".memex/{path.name}"]
    assert invoke("resolve", path.stem).exit_code == 0
    assert (repo / "README.md").read_text() == readme_before
    assert git_proc("ls-files", "-u", "--", "README.md", cwd=repo).stdout  # still git's to settle
    assert invoke("resolve", "README.md").exit_code == 2  # not a memory id
    missing = invoke("resolve", "README")  # looks like an id prefix, matches no memory
    assert missing.exit_code == 1 and "no conflicted memory file" in missing.stderr


def test_driver_falls_back_to_text_merge_on_unparseable_input(repo: Path) -> None:
    path = _setup(repo)
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    path.write_text(path.read_text().replace("---\n", "", 1) + "\ntopic line\n")
    commit_all(repo, "break it")
    git_proc("checkout", "-q", "main", cwd=repo)
    edit(path, importance="high")
    commit_all(repo, "main")
    proc = git_proc("merge", "topic", "-m", "m", check=False, cwd=repo)
    assert proc.returncode == 1
    text = path.read_text()
    assert "importance: high" in text and "topic line" in text
    data = json.loads(invoke("resolve", "--json").stdout)
    assert data["memories"][0]["conflicts"][0]["kind"] == "parse"


def test_merge_driver_contract_on_plain_files(tmp_path: Path) -> None:
    base = memory()
    files = {}
    for name, mem in (("O", base), ("A", base.copy(importance="high")),
                      ("B", base.copy(tags=["a"]))):
        files[name] = tmp_path / name
        files[name].write_text(frontmatter.emit(mem))
    result = invoke("merge-driver", str(files["O"]), str(files["A"]), str(files["B"]), "7",
                    f".memex/{base.id}.md")
    assert result.exit_code == 0
    merged = frontmatter.load(files["A"].read_text())[0]
    assert (merged.importance, merged.tags) == ("high", ["a"])
    files["B"].write_text(frontmatter.emit(base.copy(importance="low")))
    conflicted = invoke("merge-driver", str(files["O"]), str(files["A"]), str(files["B"]))
    assert conflicted.exit_code == 1
    assert "importance" in conflicted.stderr
    # a missing input is never a crash
    gone = invoke("merge-driver", str(tmp_path / "nope"), str(files["A"]), str(files["B"]))
    assert gone.exit_code == 1


def test_resolve_reports_contradictions_without_deciding(repo: Path) -> None:
    other = memory()
    path = _setup(repo, driver=False)
    write(repo, other)
    commit_all(repo, "other")
    _branches(repo, path, {"contradicts": [other.id]}, {"importance": "high"})
    assert git_proc("merge", "topic", "-m", "m", check=False, cwd=repo).returncode == 1
    data = json.loads(invoke("resolve", "--json").stdout)
    [item] = data["memories"]
    assert item["clean"] and any("contradicts" in n for n in item["notices"])
    assert invoke("resolve", path.stem).exit_code == 0
    assert read(path).contradicts == [other.id] and read(repo / ".memex" / f"{other.id}.md")


def test_verify_without_a_memory_folder_is_ok(repo: Path) -> None:
    result = invoke("verify")
    assert result.exit_code == 0 and "0 memory file(s)" in result.stdout


def _git_env(repo: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **env})


def test_driver_runs_without_git_memex_on_path(repo: Path) -> None:
    """Reproduced on main: `env PATH=/usr/bin:/bin git merge` printed "git-memex: not
    found", reported CONFLICT and kept only our side (the other branch's tags lost)."""
    path = _setup(repo)
    _branches(repo, path, {"tags": ["tooling", "ci"]}, {"importance": "high"})
    proc = _git_env(repo, "merge", "topic", "-m", "merge", PATH="/usr/bin:/bin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    merged = read(path)
    assert merged.tags == ["tooling", "ci"] and merged.importance == "high"


def test_readme_is_not_a_memory_even_under_the_old_wide_pattern(repo: Path) -> None:
    """Reproduced on main: edits to .memex/README.md on two branches printed "run `git
    memex resolve`", and resolve answered "No conflicted memory files"."""
    _setup(repo)
    (repo / ".gitattributes").write_text(".memex/*.md merge=memex\n")  # an older clone
    readme = repo / ".memex" / "README.md"
    readme.write_text("# Memories\n\nintro\n\nmiddle\n\nend\n")
    commit_all(repo, "readme")
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    readme.write_text("# Memories\n\nintro, edited on topic\n\nmiddle\n\nend\n")
    commit_all(repo, "topic readme")
    git_proc("checkout", "-q", "main", cwd=repo)
    readme.write_text("# Memories\n\nintro\n\nmiddle\n\nend, edited on main\n")
    commit_all(repo, "main readme")
    proc = _git_env(repo, "merge", "topic", "-m", "merge", PATH="/usr/bin:/bin")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "resolve" not in proc.stderr
    assert readme.read_text() == ("# Memories\n\nintro, edited on topic\n\nmiddle\n\n"
                                  "end, edited on main\n")
    # a real conflict in it is git's plain one, not a memory conflict
    git_proc("checkout", "-q", "-b", "topic2", cwd=repo)
    readme.write_text("A\n")
    commit_all(repo, "a")
    git_proc("checkout", "-q", "main", cwd=repo)
    readme.write_text("B\n")
    commit_all(repo, "b")
    proc = _git_env(repo, "merge", "topic2", "-m", "merge")
    assert proc.returncode == 1 and "git memex resolve" not in proc.stderr
    assert "<<<<<<<" in readme.read_text()
