"""The SQLite FTS5 index: a disposable cache of the memory files (see build.py)."""

from __future__ import annotations

from memex.index.build import Index, Report, open_index, refresh

__all__ = ["Index", "Report", "open_index", "refresh"]
