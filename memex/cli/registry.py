"""The steps `git memex` knows: name -> (module, one-line summary).

Summaries live here so `git-memex --help` lists every step without importing them.
Each module has `cli` (a click command) and `main()` (the `git-memex-<step>` script).
"""

from __future__ import annotations

STEPS: dict[str, tuple[str, str]] = {
    "init": ("memex.cli.init", "Set up git-memex in this repository"),
    "capture": ("memex.cli.capture", "Save a memory from TEXT or stdin"),
    "show": ("memex.cli.show", "Show one memory"),
    "list": ("memex.cli.list_cmd", "List this project's and your personal memories"),
    "update": ("memex.cli.update", "Edit a memory in place"),
    "supersede": ("memex.cli.supersede", "Replace a memory with a newer one"),
    "forget": ("memex.cli.forget", "Retract a memory (or delete it with --hard)"),
    "status": ("memex.cli.status", "Deprecate, archive or restore a memory"),
    "demo": ("memex.cli.demo", "Run the whole flow in a throwaway repo"),
    "merge-driver": ("memex.cli.merge_driver", "Git merge driver for memory files"),
    "resolve": ("memex.cli.resolve", "List or merge conflicted memory files"),
    "verify": ("memex.cli.verify", "Check the repo's memory files (the CI and hook gate)"),
    "doctor": ("memex.cli.doctor", "Check the git-memex setup of this machine and repo"),
    "scan": ("memex.cli.scan", "Scan memory files for unmasked secrets"),
    "propose": ("memex.cli.propose", "Copy personal memories into the outbox as drafts"),
    "submit": ("memex.cli.submit", "Move drafts into the repo in one local commit"),
    "promote": ("memex.cli.promote", "Approve, publish, reject or resubmit shared memories"),
    "sync-status": ("memex.cli.sync_status", "Show the outbox and the repo's memories by "
                    "review state"),
    "pull": ("memex.cli.pull", "Fetch and fast-forward; show the memories that came in"),
    "pr-status": ("memex.cli.pr_status", "Map the branch's pull request onto its memories"),
    "mcp": ("memex.cli.mcp", "Serve memory tools to an agent over MCP (stdio)"),
    "context": ("memex.cli.context", "Print the session-start memory block for an agent"),
    "search": ("memex.cli.search", "Search memories by their words"),
    "reindex": ("memex.cli.reindex", "Bring the search index up to date, or rebuild it"),
    "link": ("memex.cli.link", "Link two memories: extends, contradicts or related"),
    "conflicts": ("memex.cli.conflicts", "List memories that may contradict each other"),
    "pin": ("memex.cli.pin", "Keep a memory: pinned memories do not decay away"),
    "unpin": ("memex.cli.unpin", "Clear a memory's keep mark"),
    "health": ("memex.cli.health", "Counts, decay, conflicts and a health score"),
    "clean": ("memex.cli.clean", "Review ROT candidates and retire the ones you choose"),
    "distill": ("memex.cli.distill", "Propose AGENTS.md additions from approved instructions"),
    "export": ("memex.cli.export", "Export memories to a portable JSON Lines archive"),
    "import": ("memex.cli.import_cmd", "Import an export or an open-memex folder"),
    "migrate": ("memex.cli.migrate", "Convert protocol v1 memory files to v2"),
    "rekey": ("memex.cli.rekey", "Move outbox drafts left under an old repo_id (origin "
              "changed)"),
    "embed": ("memex.cli.embed", "Compute vectors for the experimental semantic search lane"),
}
