"""The EXAMPLES of every man page: one source, rendered by manpages.py.

Each example is a shell line as a person types it and one sentence on what it does.
Memory ids in them (01KB7QX2, 01KB7R3M, 01KB7P5D) stand for real ids (a unique prefix
is enough). tests/test_examples.py parses every line against its step's options and
runs them in a scratch repository, so an example cannot drift from the command.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

import click


class Example(NamedTuple):
    line: str
    what: str


E = Example

# Placeholder ids the examples use: two project memories and one personal memory.
IDS = ("01KB7QX2", "01KB7R3M", "01KB7P5D")

MAIN: tuple[Example, ...] = (
    E("git memex init --client claude --hooks",
      "Set up this repository and Claude Code (MCP server, session hooks, AGENTS.md)."),
    E('git memex capture "Deploys go through staging first"',
      "Save a project memory (a draft in your outbox until submitted)."),
    E("git memex search staging deploy",
      "Find memories of this project and your personal ones."),
    E("git memex submit --all && git push",
      "Commit the drafts into .memex/ for review in a pull request."),
    E("git config --global memex.maxBytes 128k", "Accept memory bodies up to 128 KiB."),
)

STEPS: dict[str, tuple[Example, ...]] = {
    "init": (
        E("git memex init --yes",
          "Set up this repository with the defaults: .memex/, .memexconfig, "
          ".gitattributes and this clone's merge driver."),
        E("git memex init --client claude --hooks",
          "Also configure Claude Code: .mcp.json, its session hooks, AGENTS.md."),
        E("git memex init --client codex --print-config",
          "Show what Codex's config.toml would get; write nothing."),
        E("git memex init --git-hooks",
          "Install the pre-commit secret scan and the index-refresh hooks."),
    ),
    "capture": (
        E('git memex capture --type decision --tag deploy "Deploys go through staging first"',
          "Save a project decision (a draft in your outbox until submitted)."),
        E('git memex capture --scope personal "I prefer short commit subjects"',
          "Save a personal memory: it never leaves this machine."),
        E('echo "Run make lint before pushing" | git memex capture --type workflow -',
          "Save what stdin holds."),
        E('git memex capture --from-message "remember: the staging database resets nightly"',
          "Save what a typed message marks with a trigger word."),
    ),
    "show": (
        E("git memex show 01KB7QX2", "Show a memory by a unique prefix of its id."),
        E("git memex show --json 01KB7QX2", "Every field, the body and the path, as JSON."),
    ),
    "list": (
        E("git memex list --limit 20", "The 20 newest memories visible here."),
        E("git memex list --scope personal", "Only your personal memories."),
        E("git memex list --include all --json",
          "Also retired and expired memories, as JSON for a script."),
        E("git memex list --as-of 2026-06-01 --from-git",
          "What the repository's memory folder held at the end of 1 June 2026."),
    ),
    "update": (
        E('git memex update --title "Deploys go through staging" --tag release 01KB7QX2',
          "Retitle a memory and add a tag (revision + 1)."),
        E("git memex update --body - 01KB7QX2 < new-text.md",
          "Replace the body with a file's text."),
    ),
    "supersede": (
        E('git memex supersede 01KB7QX2 "Deploys go through staging, then a canary"',
          "Write the successor and retire the old memory."),
        E("git memex supersede --accept 01KB7R3M",
          "Accept an agent's successor draft: retire the memory it replaces."),
    ),
    "forget": (
        E('git memex forget --note "staging was removed" 01KB7QX2',
          "Retract a memory; `git memex status 01KB7QX2 active` brings it back."),
        E("git memex forget --hard --yes 01KB7P5D", "Delete the file for good."),
    ),
    "status": (
        E('git memex status --note "replaced by the canary flow" 01KB7QX2 deprecated',
          "Keep finding it, flagged and ranked low."),
        E("git memex status 01KB7QX2 active", "Restore a retired memory."),
    ),
    "demo": (
        E("git memex demo", "Watch the whole flow in a throwaway repository."),
        E("git memex demo --keep", "Keep the throwaway repository to look around."),
    ),
    "merge-driver": (
        E("git memex merge-driver base.md ours.md theirs.md 7 .memex/01KB7QX2.md",
          "Merge three versions of a memory file by hand, as git does (ours.md gets "
          "the result)."),
    ),
    "resolve": (
        E("git memex resolve", "During a merge: list the conflicted memory files."),
        E("git memex resolve 01KB7QX2",
          "Merge one memory field by field and stage it, or say what to decide."),
        E("git memex resolve --keep 01KB7R3M 01KB7QX2",
          "Two successors of 01KB7QX2: keep 01KB7R3M."),
    ),
    "verify": (
        E("git memex verify", "Check every memory file (what CI and the hooks run)."),
        E("git memex verify --fix", "Complete half-written supersede chains, then check."),
        E("git memex verify --since 1d --require-recall",
          "Fail unless an agent read a memory of this repository today."),
    ),
    "doctor": (
        E("git memex doctor", "Check this machine's and this clone's setup."),
        E("git memex doctor --fix",
          "After a reinstall: re-point the merge driver and hook scanner, then check."),
    ),
    "scan": (
        E("git memex scan", "Scan every memory file of the repository for secrets."),
        E("git memex scan --staged", "Scan what the next commit holds (the pre-commit hook)."),
    ),
    "propose": (
        E("git memex propose 01KB7P5D", "Copy a personal memory into the outbox as a draft."),
        E("git memex propose --local-approve 01KB7P5D",
          "Working alone: the draft lands approved when you submit it."),
    ),
    "submit": (
        E("git memex submit --all", "Commit every draft into .memex/ as proposed."),
        E("git memex submit --branch 01KB7QX2 01KB7R3M",
          "Commit two drafts on a new branch for a pull request."),
        E('git memex submit --all -m "Memories from the deploy review"',
          "With your own commit message."),
    ),
    "promote": (
        E("git memex promote 01KB7QX2", "Approve a proposed memory (the next state)."),
        E("git memex promote --to published 01KB7QX2", "Publish an approved memory."),
        E('git memex promote --reject --note "duplicate of 01KB7R3M" 01KB7R3M',
          "Reject a proposed memory, with the reason."),
    ),
    "sync-status": (
        E("git memex sync-status", "Drafts waiting, the repository's memories by review "
          "state, and how far the branch is from its upstream."),
        E("git memex sync-status --json", "The same for a script."),
    ),
    "pull": (
        E("git memex pull", "Fetch, fast-forward, and list the memories that came in."),
        E("git memex pull --quiet origin", "Only warnings and errors."),
        E("git memex pull --drop-merged",
          "After a squash merge of your memory PR: move the branch to upstream."),
    ),
    "pr-status": (
        E("git memex pr-status", "What the branch's pull request means for its memories."),
        E("git memex pr-status --apply --commit",
          "Make the moves (approved, published) and commit them."),
    ),
    "mcp": (
        E("git memex mcp", "Serve memory tools on stdin and stdout (hosts start this)."),
        E("git memex mcp --repo ~/src/app", "Serve another checkout's memories."),
    ),
    "context": (
        E("git memex context", "The block an agent reads at session start."),
        E('git memex context --query "deploy to staging"', "With the matching memories first."),
    ),
    "search": (
        E("git memex search staging deploy", "Memories about staging deploys, best first."),
        E('git memex search -n 3 --type decision "how do we deploy"',
          "The three best decisions."),
        E("git memex search --explain staging", "Why each hit ranked where it did."),
        E("git memex search --as-of 2026-06-01 --from-git staging",
          "What the team's memories said at the end of 1 June 2026."),
    ),
    "reindex": (
        E("git memex reindex", "Bring the search index up to date and show its counts."),
        E("git memex reindex --full", "Rebuild the index from scratch."),
    ),
    "link": (
        E("git memex link 01KB7QX2 extends 01KB7R3M", "Record that one builds on the other."),
        E("git memex link 01KB7QX2 contradicts 01KB7R3M",
          "Acknowledge a contradiction: both stay active."),
        E("git memex link --remove 01KB7QX2 contradicts 01KB7R3M", "Drop that link again."),
    ),
    "conflicts": (
        E("git memex conflicts", "Pairs of memories that may contradict each other."),
        E("git memex conflicts --check",
          "Exit 1 when an open contradiction exists (for hooks and CI)."),
    ),
    "pin": (
        E("git memex pin 01KB7QX2", "Keep a memory: it decays slowly and is never cleaned."),
        E("git memex pin --json 01KB7QX2", "The same, with the result as JSON."),
    ),
    "unpin": (
        E("git memex unpin 01KB7QX2", "Let a memory decay like any other again."),
        E("git memex unpin --json 01KB7QX2", "The same, with the result as JSON."),
    ),
    "health": (
        E("git memex health", "Counts, decay, ROT candidates, conflicts and a score."),
        E("git memex health --json", "The same for a script or a dashboard."),
    ),
    "clean": (
        E("git memex clean", "List ROT candidates (asked per item on a terminal)."),
        E("git memex clean --yes", "Retire every candidate listed."),
        E("git memex clean --delete 01KB7P5D", "Delete one personal candidate."),
    ),
    "distill": (
        E("git memex distill", "The diff AGENTS.md would get from approved instructions."),
        E("git memex distill --write", "Apply it, for you to commit."),
    ),
    "export": (
        E("git memex export -o memex.jsonl", "This project's memories, signed, to a file."),
        E("git memex export --include-personal -o all.jsonl",
          "Also your personal and private ones (for your own backup)."),
    ),
    "import": (
        E("git memex import memex.jsonl", "Restore or take in an export."),
        E("git memex import --dry-run ../old-app",
          "What an open-memex repository would bring; write nothing."),
    ),
    "migrate": (
        E("git memex migrate --dry-run", "What converting v1 memory files would change."),
        E("git memex migrate --yes", "Convert them (the originals are backed up)."),
        E("git memex migrate --drop-backups", "Delete the backups once you have checked."),
    ),
    "rekey": (
        E("git memex rekey --yes",
          "After changing origin: move the drafts left under the old repo_id."),
        E("git memex rekey --from 3f2a9c41d0e7 --yes",
          "Move the drafts of the old id `git memex doctor` printed."),
    ),
    "embed": (
        E("git memex embed", "Compute the vectors that are missing (semantic lane)."),
        E("git memex embed --quiet", "The same, printing nothing but errors."),
    ),
    "diff": (
        E("git memex diff", "What the working tree did to memories since HEAD."),
        E("git memex diff --staged", "What the next commit does to memories."),
        E("git memex diff --exit-code origin/main...HEAD",
          "What the branch changed; exit 1 when a memory differs."),
    ),
    "review": (
        E("git memex review", "Summarise the memories this branch changes, for reviewers."),
        E("git memex review --format markdown main...HEAD",
          "The same summary as Markdown, against main."),
        E("git memex review --post --pr 42",
          "Post the summary as the pull request's comment (in CI)."),
    ),
    "log": (
        E("git memex log 01KB7QX2", "Who changed a memory, when, and what."),
        E("git memex log --rev origin/main 01KB7QX2", "Its history on origin/main."),
    ),
    "completion": (
        E("git memex completion bash > ~/.git-memex-completion.bash",
          "Write the bash script; load it from ~/.bashrc after git's completion."),
        E("git memex completion zsh > ~/.git-memex-completion.zsh",
          "The zsh script; source it from ~/.zshrc after compinit."),
    ),
}



def placeholders(items: tuple[Example, ...]) -> str:
    """The sentence saying what the placeholder ids stand for ('' when none is used)."""
    used = [p for p in IDS if any(p in item.line for item in items)]
    if not used:
        return ""
    stand = "stands for a memory id" if len(used) == 1 else "stand for memory ids"
    return f"{' and '.join(used)} {stand} (a unique prefix is enough)."


def epilog(step: str) -> str:
    """A step's examples as its `--help` ends (click keeps a `\\b` paragraph as it is)."""
    items = STEPS.get(step, ())
    lines = ["\b", "Examples:"]
    for item in items:
        lines.append(f"  {item.line}")
        lines += textwrap.wrap(item.what, 76, initial_indent="      ",
                               subsequent_indent="      ")
    note = placeholders(items)
    return "\n".join(lines) + (f"\n\n{note}" if note else "")


def attach(command: click.Command, step: str) -> click.Command:
    """The step's click command, its `--help` ending with its examples."""
    if not command.epilog:
        command.epilog = epilog(step)
    return command
