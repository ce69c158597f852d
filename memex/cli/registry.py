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
}
