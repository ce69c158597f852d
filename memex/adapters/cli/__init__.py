"""The command-line interface: one module per `git-memex-<step>`, plus the dispatcher."""

from memex.storage import codecache

# Before any step's module makes its dataclasses: their methods' code compiled once per
# Python, not once per process (~17 ms of every command).
codecache.install()
