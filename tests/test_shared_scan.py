"""review35B item 4 (fix35B): what a commit's scan lets through as already shared
(scan.already_shared). Only a merge (GITHEAD_<id> / MERGE_HEAD) of a commit on the push
remote's main line (upstream or default branch) holding the same blob at the same path,
and only secret findings. The hole tests below (from review35B) FAILED on 7bf13a3."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers import git_proc
from tests.helpers.memfiles import memory, write
from tests.test_hooks import BIN
from tests.test_personal_boundary import _all_hooks

TOKEN = "gh" + "p_" + "Z8wErT9yUiOp3AsDfGh5JkLz1XcVbNm2QwEr"


def _team(repo: Path, tmp_path: Path, kind: str) -> tuple[dict[str, str], Path, Path]:
    env = _all_hooks(repo, tmp_path, kind)
    bare = tmp_path / "team.git"
    git_proc("init", "-q", "--bare", str(bare), cwd=tmp_path)
    git_proc("remote", "set-url", "origin", str(bare), cwd=repo)
    git_proc("push", "-q", "-u", "origin", "main", cwd=repo, env=env)
    mate = tmp_path / "mate"
    git_proc("clone", "-q", str(bare), str(mate), cwd=tmp_path)
    git_proc("config", "user.email", "m@example.com", cwd=mate)
    git_proc("config", "user.name", "m", cwd=mate)
    return env, bare, mate


def _mate_pushes_token_to(mate: Path, branch: str) -> Path:
    git_proc("checkout", "-q", "-b", branch, cwd=mate)
    leaked = write(mate, memory(title="deploy", body="the token is " + TOKEN))
    git_proc("add", "-A", cwd=mate)
    git_proc("commit", "-q", "--no-verify", "-m", "token", cwd=mate)
    git_proc("push", "-q", "origin", branch, cwd=mate)
    return leaked


def _assert_taking_is_refused(repo: Path, env: dict[str, str], rel: str) -> None:
    """`git checkout origin/wip -- REL` and a plain commit of it: refused."""
    git_proc("checkout", "origin/wip", "--", rel, cwd=repo, env=env)
    proc = git_proc("commit", "-q", "-m", "take it", cwd=repo, env=env, check=False)
    assert proc.returncode != 0, proc.stdout + proc.stderr


def _merge(repo: Path, env: dict[str, str], ref: str) -> subprocess.CompletedProcess[str]:
    return git_proc("merge", "--no-ff", "-m", "m", ref, cwd=repo, env=env, check=False)


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_a_branch_deleted_on_the_remote_still_counts_as_shared(repo: Path, tmp_path: Path,
                                                               kind: str) -> None:
    """A teammate pushed a token to 'wip' with --no-verify; the team deleted 'wip' on the
    remote (the cleanup). My clone keeps refs/remotes/origin/wip (git fetch does not prune
    by default). Merging it into main passes the commit scan ('the remote already holds
    it'), and the push puts the token on origin/main, where no branch held it."""
    env, bare, mate = _team(repo, tmp_path, kind)
    _mate_pushes_token_to(mate, "wip")
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    git_proc("push", "-q", "origin", "--delete", "wip", cwd=mate)   # the cleanup
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)             # no --prune
    assert "origin/wip" in git_proc("branch", "-r", cwd=repo).stdout
    proc = _merge(repo, env, "origin/wip")
    said = proc.stdout + proc.stderr
    # the merge brings a raw token to main that NO branch of the remote holds now
    assert proc.returncode != 0, said


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_an_unmerged_side_branch_on_the_remote_lets_the_token_into_main(
        repo: Path, tmp_path: Path, kind: str) -> None:
    """The token sits on origin/wip only (a branch nobody merges, deletable). Merging or
    checking the file out into main passes: main's history then holds it for good."""
    env, bare, mate = _team(repo, tmp_path, kind)
    leaked = _mate_pushes_token_to(mate, "wip")
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    rel = leaked.relative_to(mate).as_posix()
    git_proc("checkout", "origin/wip", "--", rel, cwd=repo, env=env)
    proc = git_proc("commit", "-q", "-m", "take the deploy note", cwd=repo, env=env,
                    check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said   # not a pull merge: nothing excuses it


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_a_forged_remote_tracking_ref_passes_the_scan(repo: Path, tmp_path: Path,
                                                      kind: str) -> None:
    """An agent writes a refs/remotes/origin/* ref itself (no --no-verify needed, so a
    harness that forbids --no-verify does not see a bypass): the token passes."""
    env, bare, mate = _team(repo, tmp_path, kind)
    f = write(repo, memory(title="deploy", body="the token is " + TOKEN))
    git_proc("add", "-A", cwd=repo)
    tree = git_proc("write-tree", cwd=repo).stdout.strip()
    commit = git_proc("commit-tree", tree, "-m", "x", cwd=repo).stdout.strip()
    git_proc("update-ref", "refs/remotes/origin/cache", commit, cwd=repo)
    proc = git_proc("commit", "-q", "-m", "deploy", cwd=repo, env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert f


@pytest.mark.parametrize("kind", ["plain"])
def test_a_commit_shared_by_the_private_remote_goes_to_the_public_fork(
        repo: Path, tmp_path: Path, kind: str) -> None:
    """origin (private) holds the token on a side branch; 'public' is the fork. The commit
    passes (its push remote origin holds it); nothing stops `git push public main` later:
    the commit scan is the only gate and 'shared' was judged for one remote."""
    env, bare, mate = _team(repo, tmp_path, kind)
    pub = tmp_path / "public.git"
    git_proc("init", "-q", "--bare", str(pub), cwd=tmp_path)
    git_proc("remote", "add", "public", str(pub), cwd=repo)
    leaked = _mate_pushes_token_to(mate, "wip")
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    proc = _merge(repo, env, "origin/wip")
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert leaked


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_a_personal_memory_on_a_remote_side_branch_passes_into_main(
        repo: Path, tmp_path: Path, kind: str) -> None:
    """Personal-boundary findings go through already_shared too: a `scope: personal`
    memory file someone pushed (--no-verify) to origin/wip is committed to main."""
    env, bare, mate = _team(repo, tmp_path, kind)
    git_proc("checkout", "-q", "-b", "wip", cwd=mate)
    leaked = write(mate, memory(title="my doctor", scope="personal",
                                body="my appointment with the cardiologist is on friday"))
    git_proc("add", "-A", cwd=mate)
    git_proc("commit", "-q", "--no-verify", "-m", "oops", cwd=mate)
    git_proc("push", "-q", "origin", "wip", cwd=mate)
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    rel = leaked.relative_to(mate).as_posix()
    _assert_taking_is_refused(repo, env, rel)


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_a_token_in_a_txt_of_the_memory_folder_from_a_side_branch_passes_the_framework(
        repo: Path, tmp_path: Path, kind: str) -> None:
    """memex-verify has `files: \\.md$`: with no .md staged it does not run, and
    memex-secret-scan lets through what already_shared holds. A raw token in
    .memex/deploy.txt pushed (--no-verify) to origin/wip only is taken into main."""
    env, bare, mate = _team(repo, tmp_path, kind)
    git_proc("checkout", "-q", "-b", "wip", cwd=mate)
    (mate / ".memex").mkdir(exist_ok=True)
    (mate / ".memex" / "deploy.txt").write_text(f"token {TOKEN}\n", encoding="utf-8")
    git_proc("add", "-A", cwd=mate)
    git_proc("commit", "-q", "--no-verify", "-m", "oops", cwd=mate)
    git_proc("push", "-q", "origin", "wip", cwd=mate)
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    _assert_taking_is_refused(repo, env, ".memex/deploy.txt")


@pytest.mark.parametrize("kind", ["plain"])
def test_refs_of_the_remote_before_set_url_count_as_shared_by_the_new_one(
        repo: Path, tmp_path: Path, kind: str) -> None:
    """Open-sourcing: the private server's history held a token (origin/wip); the project
    moves to a fresh public repository (`git remote set-url origin PUBLIC`). The clone keeps
    every old refs/remotes/origin/* ref; a commit taking the file passes as 'the remote
    already holds it', and the push publishes it."""
    env, bare, mate = _team(repo, tmp_path, kind)
    leaked = _mate_pushes_token_to(mate, "wip")
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    public = tmp_path / "public.git"
    git_proc("init", "-q", "--bare", str(public), cwd=tmp_path)
    git_proc("remote", "set-url", "origin", str(public), cwd=repo)
    git_proc("push", "-q", "origin", "main", cwd=repo, env=env)
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    rel = leaked.relative_to(mate).as_posix()
    _assert_taking_is_refused(repo, env, rel)


@pytest.mark.parametrize("kind", ["plain"])
def test_guard_the_same_blob_at_another_path_is_refused(repo: Path, tmp_path: Path,
                                                        kind: str) -> None:
    """Guard (PASSES on review35): origin/main holds the token file; a copy of the same
    blob at a new path is refused."""
    env, bare, mate = _team(repo, tmp_path, kind)
    leaked = _mate_pushes_token_to(mate, "main2")
    git_proc("push", "-q", "origin", "main2:main", "--force", cwd=mate)
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    rel = leaked.relative_to(mate).as_posix()
    blob = git_proc("show", f"origin/main:{rel}", cwd=repo).stdout
    new = write(repo, memory(title="x"))
    new.write_text(blob, encoding="utf-8")
    git_proc("add", "-A", cwd=repo)
    proc = git_proc("commit", "-q", "-m", "copy", cwd=repo, env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert "github-token" in said and "already holds" not in said, said


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_a_cherry_pick_of_a_side_branch_commit_takes_the_token(repo: Path, tmp_path: Path,
                                                               kind: str) -> None:
    """`git cherry-pick origin/wip` (the token commit of a side branch) onto main: the
    prepare-commit-msg scan (--at-rebase-stop) lets it through as 'already held'."""
    env, bare, mate = _team(repo, tmp_path, kind)
    _mate_pushes_token_to(mate, "wip")
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    proc = git_proc("cherry-pick", "origin/wip", cwd=repo, env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said


def _diverge(repo: Path, env: dict[str, str]) -> None:
    (repo / "z.txt").write_text("z\n", encoding="utf-8")
    git_proc("add", "z.txt", cwd=repo)
    git_proc("commit", "-q", "-m", "z", cwd=repo, env=env)


@pytest.mark.parametrize("kind", ["plain", "framework"])
def test_a_personal_memory_on_the_remote_main_is_refused_by_a_pull_merge(
        repo: Path, tmp_path: Path, kind: str) -> None:
    """fix35B: only secret findings pass a merge of the remote's main line; a personal
    memory someone pushed to origin/main with --no-verify is still refused (rule 2: it
    never leaves this machine, whoever pushed it first)."""
    env, bare, mate = _team(repo, tmp_path, kind)
    leaked = write(mate, memory(title="my doctor", scope="personal",
                                body="my appointment with the cardiologist is on friday"))
    git_proc("add", "-A", cwd=mate)
    git_proc("commit", "-q", "--no-verify", "-m", "oops", cwd=mate)
    git_proc("push", "-q", "origin", "main", cwd=mate)
    _diverge(repo, env)
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    proc = _merge(repo, env, "origin/main")
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert "already holds" not in said
    assert leaked.name not in git_proc("ls-tree", "-r", "--name-only", "HEAD",
                                       cwd=repo).stdout


def test_a_conflicted_pull_merge_finished_by_commit_passes_and_json_marks_it(
        repo: Path, tmp_path: Path) -> None:
    """fix35B: a conflicted `git pull` merge of origin/main (whose token a teammate pushed
    with --no-verify) finished by `git commit`: MERGE_HEAD names the merged commit, the
    token passes with the note, and `scan --staged --json` marks it "shared" (ok true).
    A staged token of my own in the same merge is still refused."""
    env, bare, mate = _team(repo, tmp_path, "plain")
    (mate / "c.txt").write_text("theirs\n", encoding="utf-8")
    _mate_pushes_token_to(mate, "t")
    git_proc("push", "-q", "origin", "t:main", cwd=mate)
    (repo / "c.txt").write_text("ours\n", encoding="utf-8")
    git_proc("add", "c.txt", cwd=repo)
    git_proc("commit", "-q", "-m", "ours", cwd=repo, env=env)
    git_proc("fetch", "-q", "origin", cwd=repo, env=env)
    proc = _merge(repo, env, "origin/main")
    assert proc.returncode != 0 and "CONFLICT" in proc.stdout + proc.stderr
    (repo / "c.txt").write_text("both\n", encoding="utf-8")
    git_proc("add", "c.txt", cwd=repo)
    scanned = subprocess.run([str(BIN / "git-memex"), "scan", "--staged", "--json"],
                             cwd=repo, env=env, capture_output=True, text=True)
    data = json.loads(scanned.stdout)
    assert scanned.returncode == 0 and data["ok"] is True, scanned
    assert [f["kind"] for f in data["findings"]] == ["github-token"]
    assert data["findings"][0]["shared"] is True
    assert TOKEN[4:] not in scanned.stdout + scanned.stderr
    mine = write(repo, memory(title="mine", body="my key is " + TOKEN.replace("Z8", "Y7")))
    git_proc("add", "-A", cwd=repo)
    proc = git_proc("commit", "-q", "--no-edit", cwd=repo, env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "already holds" in said, said
    git_proc("rm", "-q", "--cached", mine.relative_to(repo).as_posix(), cwd=repo)
    proc = git_proc("commit", "-q", "--no-edit", cwd=repo, env=env, check=False)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "already holds" in said, said
    assert TOKEN[4:] not in said
