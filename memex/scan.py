"""Secret scan of memory files as git is about to commit them (the pre-commit hooks).

Reports file, line and kind of every unmasked secret or unredacted `<private>` block,
never the secret itself. Staged content is read from the index in one
`git cat-file --batch` process, so 1,000 staged files cost one subprocess, not 1,000.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memex import gitio, redact, store
from memex.homes import Workspace


@dataclass(frozen=True)
class SecretFinding:
    path: str
    line: int
    kind: str

    def describe(self) -> str:
        what = "unredacted <private> block" if self.kind == "private-block" else \
            f"unmasked {self.kind}"
        return f"{self.path}:{self.line}: {what}"

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "kind": self.kind}


def scan_texts(items: Iterable[tuple[str, str]]) -> list[SecretFinding]:
    """(path, text) pairs -> findings, in input order."""
    out: list[SecretFinding] = []
    for path, text in items:
        out.extend(SecretFinding(path, f.line, f.kind) for f in redact.scan(text))
    return out


def in_memory_folder(ws: Workspace, path: str) -> bool:
    return store.in_memory_folder(ws.memory_dir_name, path)


def staged_memory_paths(ws: Workspace) -> list[str]:
    if ws.repo is None:
        return []
    proc = gitio.run(["diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR", "--",
                      ws.memory_dir_name], cwd=ws.repo.toplevel)
    return [p for p in proc.stdout.split("\0") if p and in_memory_folder(ws, p)]


def read_staged(toplevel: Path, paths: list[str]) -> list[tuple[str, str]]:
    """The index's version of each path, read in one `git cat-file --batch`."""
    if not paths:
        return []
    binary = gitio.git_binary()
    if binary is None:
        raise gitio.GitMissing("git is not installed (or not on PATH)")
    import subprocess

    request = "".join(f":{p}\n" for p in paths).encode("utf-8")
    proc = subprocess.run([binary, "cat-file", "--batch"], cwd=toplevel, input=request,
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise gitio.GitError(proc.stderr.decode("utf-8", "replace").strip())
    out: list[tuple[str, str]] = []
    data, pos = proc.stdout, 0
    for path in paths:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[-1] == b"missing":
            continue
        size = int(header[2])
        out.append((path, data[pos:pos + size].decode("utf-8", "replace")))
        pos += size + 1
    return out


def scan_staged(ws: Workspace) -> tuple[int, list[SecretFinding]]:
    """(files scanned, findings) over the staged memory files."""
    if ws.repo is None:
        return 0, []
    items = read_staged(ws.repo.toplevel, staged_memory_paths(ws))
    return len(items), scan_texts(items)


def scan_paths(ws: Workspace, paths: Iterable[str]) -> tuple[int, list[SecretFinding]]:
    """Scan files on disk (the pre-commit framework passes names; it stashed unstaged
    changes, so the working tree is what gets committed). Non-memory files are skipped."""
    items: list[tuple[str, str]] = []
    top = ws.repo.toplevel if ws.repo is not None else ws.cwd
    for name in paths:
        path = Path(name)
        full = path if path.is_absolute() else ws.cwd / path
        try:
            rel = full.resolve().relative_to(top).as_posix()
        except ValueError:
            continue
        if not in_memory_folder(ws, rel):
            continue
        try:
            items.append((rel, full.read_bytes().decode("utf-8", "replace")))
        except OSError:
            continue
    return len(items), scan_texts(items)
