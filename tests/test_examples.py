"""The EXAMPLES of every man page (memex/adapters/cli/examples.py): every step has some,
each line parses against its step's options, and they run, in one scratch repository
with a bare remote, with the placeholder ids standing for real memories."""

from __future__ import annotations

import importlib
import itertools
import json
import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from memex.adapters.cli import examples
from memex.adapters.cli.registry import STEPS
from memex.storage import homes
from memex.workflows import agent
from tests.conftest import BIN, run_cli
from tests.helpers import git, git_proc, invoke, invoke_json
from tests.test_portable import OPEN_MEMEX

A, B, P = examples.IDS
OPERATORS = {"|", "&&", ";", ">", "<"}

# Examples that need what a scratch repository cannot give; their shape is still checked.
NOT_RUN = {
    "git memex mcp": "serves on stdio until the host closes it (tests/test_mcp.py)",
    "git memex mcp --repo ~/src/app": "serves on stdio until the host closes it",
    "git memex pr-status": "asks the GitHub API (tests/test_pr_status.py fakes it)",
    "git memex pr-status --apply --commit": "asks the GitHub API",
    "git memex review --post --pr 42": "posts to the GitHub API (tests/test_review.py)",
    "git memex resolve 01KB7QX2": "needs a conflicted merge (tests/test_resolve_sides.py)",
    "git memex resolve --keep 01KB7R3M 01KB7QX2": "needs two successors from a merge "
                                                  "(tests/test_two_successors.py)",
    "git memex rekey --from 3f2a9c41d0e7 --yes": "needs drafts under an old repo_id "
                                                 "(tests/test_rekey.py)",
}
# Exit statuses other than 0 that an example means.
EXIT = {
    "git memex diff --exit-code origin/main...HEAD": 1,  # the branch changed memories
}


def argv_of(step: str, line: str) -> tuple[list[str], str | None, str | None]:
    """The git-memex arguments of an example line, what it pipes in (`echo X |`, `< F`)
    and where it sends stdout (`> F`)."""
    words = shlex.split(line, comments=False)
    at = next(i for i in range(len(words) - 2)
              if words[i:i + 3] == ["git", "memex", step])
    stdin = words[1] if words[0] == "echo" and words[2] == "|" else None
    rest = words[at + 3:]
    cut = next((i for i, w in enumerate(rest) if w in OPERATORS), len(rest))
    tail = rest[cut:]
    out = tail[1] if tail[:1] == [">"] else None
    if tail[:1] == ["<"]:
        stdin = "@" + tail[1]
    return rest[:cut], stdin, out


def every_example() -> list[tuple[str, examples.Example]]:
    return [(step, ex) for step, exs in examples.STEPS.items() for ex in exs]


def test_every_step_has_examples_and_no_other() -> None:
    assert list(examples.STEPS) == list(STEPS)
    for step, exs in examples.STEPS.items():
        assert exs, step
        for ex in exs:
            assert f"git memex {step}" in ex.line and ex.what.endswith("."), ex


@pytest.mark.parametrize("step", list(STEPS))
def test_every_example_parses_against_its_step(step: str) -> None:
    command: click.Command = importlib.import_module(STEPS[step][0]).cli
    for ex in examples.STEPS[step]:
        args, _, _ = argv_of(step, ex.line)
        ctx = command.make_context(step, list(args))  # raises on an unknown option
        assert ctx.params is not None, ex.line


def test_main_examples_name_real_steps() -> None:
    for ex in examples.MAIN:
        words = shlex.split(ex.line)
        if words[:2] == ["git", "memex"]:
            assert words[2] in STEPS, ex.line


def capture(text: str, *options: str) -> str:
    memory_id: str = invoke_json("capture", *options, text)["id"]
    return memory_id


@pytest.fixture
def world(repo: Path, tmp_path: Path) -> Path:
    """The scratch repository: origin is a bare remote holding main; the first commit
    is dated before 2026-06-01 so the --as-of examples have a past to read."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    git("remote", "set-url", "origin", str(bare), cwd=repo)
    past = "2026-05-01T12:00:00Z"
    git_proc("commit", "-q", "--amend", "--no-edit", "--date", past, cwd=repo,
             env={**os.environ, "GIT_COMMITTER_DATE": past})
    git("push", "-q", "-u", "origin", "main", cwd=repo)
    git("remote", "set-head", "origin", "main", cwd=repo)
    old = tmp_path / "old-app" / ".ai" / "open-memex"
    old.mkdir(parents=True)
    (old / "01K6AB3XZQ7WVD9J1M2N4P5Q6R7.md").write_text(OPEN_MEMEX, encoding="utf-8")
    (tmp_path / "src" / "app").mkdir(parents=True)
    return repo


def run_step(step: str, ids: dict[str, str] | Callable[[], dict[str, str]],
             home: Path) -> None:
    for ex in examples.STEPS[step]:
        if ex.line in NOT_RUN:
            continue
        args, stdin, out = argv_of(step, ex.line)
        mapping = ids() if callable(ids) else ids  # a callable: fresh ones each time
        args = [mapping.get(a, a) for a in args]
        feed: str | None = None
        if stdin is not None and stdin.startswith("@"):
            feed = Path(stdin[1:]).read_text(encoding="utf-8")
        elif stdin is not None:
            feed = stdin + "\n"
        result = invoke(step, *args, input=feed)
        assert result.exit_code == EXIT.get(ex.line, 0), \
            f"{ex.line}\n{result.stdout}{result.stderr}"
        if out is not None:
            Path(out.replace("~", str(home))).write_text(result.stdout, encoding="utf-8")


def test_the_examples_run(world: Path, isolated: Path, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    def step(name: str, ids: dict[str, str] | Callable[[], dict[str, str]] | None = None
             ) -> None:
        run_step(name, ids or {}, isolated)

    count = itertools.count()

    def drafts() -> dict[str, str]:  # new texts each time (an equal text dedupes)
        n = next(count)
        return {A: capture(f"Deploys go through staging first ({n})", "--tag", "deploy"),
                B: capture(f"Staging deploys need a green build ({n})", "--tag", "deploy"),
                P: capture(f"I prefer short commit subjects ({n})", "--scope", "personal")}

    step("init")
    for hook in ("pre-commit", "prepare-commit-msg", "pre-applypatch", "post-merge",
                 "post-checkout"):
        (world / ".git" / "hooks" / hook).unlink()  # each would start a process per commit
    git("add", "-A", cwd=world)
    git("commit", "-q", "-m", "git-memex set up", cwd=world)
    git("push", "-q", cwd=world)
    step("capture")
    step("completion")
    assert "_git_memex" in (isolated / ".git-memex-completion.bash").read_text()
    ids = drafts()
    (world / "new-text.md").write_text("Deploys go through staging and a canary.\n")
    for name in ("show", "list", "update", "link", "pin", "unpin", "search", "context",
                 "conflicts", "reindex", "health", "distill", "sync-status", "verify",
                 "doctor", "scan", "status", "forget"):
        step(name, ids)
    step("supersede", {**drafts(), B: pending_successor()})
    step("submit", drafts)  # --all, then --branch A B on a new branch, then -m
    step("propose", drafts())
    git("switch", "-q", "main", cwd=world)
    shared = {A: capture("Releases are tagged from main"), B: capture("Tags are signed")}
    invoke_json("submit", shared[A], shared[B])
    git("push", "-q", cwd=world)
    step("log", shared)
    git("switch", "-q", "-c", "memex/approvals", cwd=world)
    step("promote", shared)
    git("commit", "-q", "-am", "approve two memories", cwd=world)
    step("diff", shared)
    step("review", shared)
    git("switch", "-q", "main", cwd=world)
    step("pull")
    memory_file = next((world / ".memex").glob("*.md"))
    for side in ("base.md", "ours.md", "theirs.md"):
        (world / side).write_bytes(memory_file.read_bytes())
    step("merge-driver", {A: memory_file.stem})
    step("resolve")
    step("export")
    step("import")
    step("migrate")
    git("remote", "set-url", "origin", str(world.parent / "moved.git"), cwd=world)
    step("rekey")  # the drafts propose made move to the new origin's repo_id
    git("config", "memex.embeddings", "hashing", cwd=world)
    step("embed")
    step("clean", lambda: {P: capture(f"wip {next(count)}", "--scope", "personal")})
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where demo --keep keeps
    step("demo")
    assert list(tmp_path.glob("git-memex-demo-*"))


def pending_successor() -> str:
    """An agent's successor draft waiting for `supersede --accept`: it replaces a
    personal instruction its owner approved."""
    rule = capture("Answer in English", "--scope", "personal", "--role", "instruction")
    invoke_json("promote", "--instruction", rule)
    successor: str = agent.supersede(homes.workspace(), rule, "Answer in German")["id"]
    assert json.loads(invoke("show", successor, "--json").stdout)["pending_supersedes"] == rule
    return successor


def test_not_run_and_exit_name_real_examples() -> None:
    lines = {ex.line for _, ex in every_example()}
    assert set(NOT_RUN) <= lines and set(EXIT) <= lines
    ran: Callable[[str], bool] = lambda step: any(  # noqa: E731
        ex.line not in NOT_RUN for ex in examples.STEPS[step])
    assert [s for s in STEPS if not ran(s)] == ["pr-status", "mcp"]


def test_help_ends_with_the_examples(repo: Path) -> None:
    """`git-memex STEP --help` (click's help: git shows the man page instead) ends with
    the same examples, through the dispatcher and the standalone executable."""
    for step in ("capture", "pin"):
        text = invoke(step, "--help").stdout
        assert "Examples:\n" in text, step
        assert all(ex.line in text for ex in examples.STEPS[step]), step
    alone = run_cli(str(BIN / "git-memex-link"), "--help")
    assert alone.returncode == 0
    assert "git memex link --remove 01KB7QX2 contradicts 01KB7R3M" in alone.stdout.decode()
    assert alone.stdout.decode().rstrip().endswith(
        "01KB7QX2 and 01KB7R3M stand for memory ids (a unique prefix is enough).")
