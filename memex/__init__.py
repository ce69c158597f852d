"""git-memex: a local-first, git-native memory layer for AI coding agents."""

from __future__ import annotations

__version__ = "0.1.0"
