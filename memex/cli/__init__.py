"""The pre-0.2 path of the CLI, kept so configs written by older `init`s still start.

`init` used to write `python -m memex.cli mcp` (and hook commands of that form) into agent
configs when `git-memex` was not on PATH; the CLI now lives in `memex.adapters.cli`.
"""
