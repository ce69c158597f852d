"""docs/architecture.md is the map of memex/: every module of the library layers and
every adapter but the CLI's one-module-per-subcommand folder is named on it, so a
module added without a place on the map fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def unnamed_modules(package: Path, page: str) -> list[str]:
    named = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", page))
    return sorted(
        str(path.relative_to(package.parent)) for path in package.rglob("*.py")
        if path.stem not in ("__init__", "__main__") and "cli" not in path.parts
        and path.stem not in named)


def test_every_module_is_on_the_map() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert unnamed_modules(ROOT / "memex", page) == []


def test_a_module_missing_from_the_map_is_named(tmp_path: Path) -> None:
    package = tmp_path / "memex"
    (package / "core").mkdir(parents=True)
    (package / "core" / "model.py").write_text("")
    (package / "core" / "newcomer.py").write_text("")
    (package / "adapters" / "cli").mkdir(parents=True)
    (package / "adapters" / "cli" / "status.py").write_text("")
    assert unnamed_modules(package, "core: model (the record)") == ["memex/core/newcomer.py"]
