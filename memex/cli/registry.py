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
    "search": ("memex.cli.search", "Search memories by their words"),
    "reindex": ("memex.cli.reindex", "Bring the search index up to date, or rebuild it"),
}
