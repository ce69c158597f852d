"""The command-line interface: one module per `git-memex-<step>`, plus the dispatcher."""
