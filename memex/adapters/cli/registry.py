"""The steps `git memex` knows: name -> (module, one-line summary).

Summaries live here so `git-memex --help` lists every step without importing them.
Each module has `cli` (a click command) and `main()` (the `git-memex-<step>` script).
"""

from __future__ import annotations

_CLI = "memex.adapters.cli."

STEPS: dict[str, tuple[str, str]] = {
    "init": (_CLI + "init", "Set up git-memex in this repository"),
    "capture": (_CLI + "capture", "Save a memory from TEXT or stdin"),
    "show": (_CLI + "show", "Show one memory"),
    "list": (_CLI + "list_cmd", "List this project's and your personal memories"),
    "update": (_CLI + "update", "Edit a memory in place"),
    "supersede": (_CLI + "supersede", "Replace a memory with a newer one"),
    "forget": (_CLI + "forget", "Retract a memory (or delete it with --hard)"),
    "status": (_CLI + "status", "Deprecate, archive or restore a memory"),
    "demo": (_CLI + "demo", "Run the whole flow in a throwaway repo"),
    "merge-driver": (_CLI + "merge_driver", "Git merge driver for memory files"),
    "resolve": (_CLI + "resolve", "List or merge conflicted memory files"),
    "verify": (_CLI + "verify", "Check the repo's memory files (the CI and hook gate)"),
    "doctor": (_CLI + "doctor", "Check the git-memex setup of this machine and repo"),
    "scan": (_CLI + "scan", "Scan memory files for unmasked secrets"),
    "propose": (_CLI + "propose", "Copy personal memories into the outbox as drafts"),
    "submit": (_CLI + "submit", "Move drafts into the repo in one local commit"),
    "promote": (_CLI + "promote", "Approve, publish, reject or resubmit shared memories"),
    "sync-status": (_CLI + "sync_status", "Show the outbox and the repo's memories by "
                    "review state"),
    "pull": (_CLI + "pull", "Fetch and fast-forward; show the memories that came in"),
    "pr-status": (_CLI + "pr_status", "Map the branch's pull request onto its memories"),
    "mcp": (_CLI + "mcp", "Serve memory tools to an agent over MCP (stdio)"),
    "context": (_CLI + "context", "Print the session-start memory block for an agent"),
    "search": (_CLI + "search", "Search memories by their words"),
    "reindex": (_CLI + "reindex", "Bring the search index up to date, or rebuild it"),
    "link": (_CLI + "link", "Link two memories: extends, contradicts or related"),
    "conflicts": (_CLI + "conflicts", "List memories that may contradict each other"),
    "pin": (_CLI + "pin", "Keep a memory: pinned memories do not decay away"),
    "unpin": (_CLI + "unpin", "Clear a memory's keep mark"),
    "health": (_CLI + "health", "Counts, decay, conflicts and a health score"),
    "clean": (_CLI + "clean", "Review ROT candidates and retire the ones you choose"),
    "distill": (_CLI + "distill", "Propose AGENTS.md additions from approved instructions"),
    "export": (_CLI + "export", "Export memories to a portable JSON Lines archive"),
    "import": (_CLI + "import_cmd", "Import an export or an open-memex folder"),
    "migrate": (_CLI + "migrate", "Convert protocol v1 memory files to v2"),
    "rekey": (_CLI + "rekey", "Move outbox drafts left under an old repo_id (origin "
              "changed)"),
    "embed": (_CLI + "embed", "Compute vectors for the experimental semantic search lane"),
    "diff": (_CLI + "diff", "Show what a range or the working tree did to memories"),
    "review": (_CLI + "review", "Summarise a memory PR for its reviewers (and CI)"),
    "log": (_CLI + "log", "Show one memory's history across commits"),
    "completion": (_CLI + "completion", "Print the bash or zsh completion script"),
}
