"""The interfaces call the library and never each other (checked on the source)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "memex"
INTERFACES = {
    "memex.adapters.cli": ROOT / "adapters" / "cli",
    "memex.adapters.mcp_server": ROOT / "adapters" / "mcp_server.py",
}
# `python -m memex.cli`, the path configs written before the layer move still use: a
# forwarder to the adapters' dispatcher, nothing else.
LEGACY_ENTRY = ROOT / "cli"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def _files(target: Path) -> list[Path]:
    if target.is_dir():
        return sorted(target.rglob("*.py"))
    return [target] if target.exists() else []


def test_interfaces_do_not_import_each_other() -> None:
    checked = 0
    for name, target in INTERFACES.items():
        others = [other for other in INTERFACES if other != name]
        for path in _files(target):
            checked += 1
            for imported in _imports(path):
                for other in others:
                    assert not imported.startswith(other), f"{path} imports {imported}"
    assert checked > 0


def test_library_does_not_import_interfaces() -> None:
    for path in ROOT.rglob("*.py"):
        if path.is_relative_to(LEGACY_ENTRY):
            continue
        if any(path.is_relative_to(t) if t.is_dir() else path == t for t in INTERFACES.values()):
            continue
        for imported in _imports(path):
            for name in INTERFACES:
                assert not imported.startswith(name), f"{path} imports {imported}"


def test_the_legacy_entry_only_forwards() -> None:
    for path in _files(LEGACY_ENTRY):
        assert _imports(path) <= {"__future__", "memex.adapters.cli.main"}, path
