"""storage/rollback: a multi-file write is all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex.storage import rollback


def test_a_failure_puts_every_kept_file_back(tmp_path: Path) -> None:
    changed, created = tmp_path / "a.md", tmp_path / "b.md"
    changed.write_bytes(b"before\n")
    with pytest.raises(KeyboardInterrupt), rollback.restoring() as keep:
        keep(changed)
        changed.write_bytes(b"after\n")
        keep(created)
        created.write_bytes(b"new\n")
        keep(changed)  # kept twice: the first bytes win
        raise KeyboardInterrupt
    assert changed.read_bytes() == b"before\n"
    assert not created.exists()


def test_success_keeps_the_writes(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes(b"before\n")
    with rollback.restoring() as keep:
        keep(path)
        path.write_bytes(b"after\n")
    assert path.read_bytes() == b"after\n"
