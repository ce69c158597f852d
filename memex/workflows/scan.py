"""Secret scan of memory files as git is about to commit them (the pre-commit hooks).

Reports file, line and kind of every unmasked secret or unredacted `<private>` block,
never the secret itself, and every personal or `visibility: private` memory about to
enter the repo (rule 2: personal never leaves the machine by any path). Staged content
is read from the index in one `git cat-file --batch` process, so 1,000 staged files
cost one subprocess, not 1,000.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memex.core import frontmatter, redact
from memex.core.errors import InvalidMemory, MemexError
from memex.storage import gitio, store
from memex.storage.homes import Workspace

# kinds that are not secrets: a memory that must not be in the repo at all
SHARING_KINDS: dict[str, str] = {
    "personal-memory": "a personal memory (scope: personal): rule 2, personal memories "
                       "never leave this machine",
    "private-memory": "a visibility: private memory: private memories never enter the repo",
}


@dataclass(frozen=True)
class SecretFinding:
    path: str
    line: int
    kind: str

    @property
    def is_secret(self) -> bool:
        return self.kind not in SHARING_KINDS

    @property
    def what(self) -> str:
        """What a secret finding is, for people (verify's secret rule says the same)."""
        return "unredacted <private> block" if self.kind == "private-block" else \
            f"unmasked {self.kind}"

    def describe(self) -> str:
        if self.kind in SHARING_KINDS:
            return (f"{self.path}:{self.line}: {SHARING_KINDS[self.kind]}; unstage it: "
                    f"git rm --cached {self.path}")
        return f"{self.path}:{self.line}: {self.what}"

    def as_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "kind": self.kind}


def scan_texts(items: Iterable[tuple[str, str]]) -> list[SecretFinding]:
    """(path, text) pairs -> findings, in input order."""
    return [finding for path, text in items for finding in _secrets(path, text)]


def _secrets(path: str, text: str) -> list[SecretFinding]:
    return [SecretFinding(path, f.line, f.kind) for f in redact.scan(text)]


def _key_line(text: str, key: str) -> int:
    """The 1-based line of a top-level front-matter key (1 when not found)."""
    for number, line in enumerate(text.splitlines()[1:], start=2):
        if line.startswith(f"{key}:"):
            return number
        if line.rstrip() == "---":
            break
    return 1


def sharing_findings(path: str, text: str) -> list[SecretFinding]:
    """A personal or private memory where only shared ones belong (the repo's folder).

    Read from the raw front matter, so a file that fails validation is still caught;
    a file without front matter is verify's business (parse rule), not this one's."""
    try:
        data = frontmatter.parse(text).data
    except InvalidMemory:
        return []
    out: list[SecretFinding] = []
    if str(data.get("scope", "")).strip().lower() == "personal":
        out.append(SecretFinding(path, _key_line(text, "scope"), "personal-memory"))
    if str(data.get("visibility", "")).strip().lower() == "private":
        out.append(SecretFinding(path, _key_line(text, "visibility"), "private-memory"))
    return out


def check_texts(items: Iterable[tuple[str, str]]) -> list[SecretFinding]:
    """What the pre-commit scan blocks: secrets, and personal or private memories."""
    return [finding for path, text in items
            for finding in sharing_findings(path, text) + _secrets(path, text)]


def summary(count: int, findings: list[SecretFinding]) -> str:
    """One line for people: what the scan found (or that it found nothing)."""
    files = f"{count} memory file{'' if count == 1 else 's'}"
    if not findings:
        return f"scanned {files}: no unmasked secret"
    secrets = sum(1 for f in findings if f.is_secret)
    parts = []
    if secrets:
        parts.append(f"{secrets} secret(s): mask or remove them (git memex update ID ...)")
    if len(findings) > secrets:
        parts.append(f"{len(findings) - secrets} memory file(s) that must not be in the "
                     "repo: unstage them")
    return f"git-memex: {'; '.join(parts)}; in {files}; then commit again"


def staged_memory_paths(ws: Workspace) -> list[str]:
    if ws.repo is None:
        return []
    proc = gitio.run(["diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR", "--",
                      ws.memory_dir_name], cwd=ws.repo.toplevel)
    return [p for p in proc.stdout.split("\0")
            if p and store.in_memory_folder(ws.memory_dir_name, p)]


def read_staged(toplevel: Path, paths: list[str]) -> list[tuple[str, str]]:
    """The index's version of each path, read in one `git cat-file --batch`. The paths
    are staged files, so one git cannot read fails the scan rather than skipping it."""
    texts = gitio.read_blobs(toplevel, [f":{p}" for p in paths]) if paths else {}
    out: list[tuple[str, str]] = []
    for path in paths:
        text = texts.get(f":{path}")
        if text is None:
            raise gitio.GitError(f"git cannot read the staged version of {path}")
        out.append((path, text))
    return out


def scan_staged(ws: Workspace) -> tuple[int, list[SecretFinding]]:
    """(files scanned, findings) over the staged memory files."""
    if ws.repo is None:
        return 0, []
    items = read_staged(ws.repo.toplevel, staged_memory_paths(ws))
    return len(items), check_texts(items)


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
        if not store.in_memory_folder(ws.memory_dir_name, rel):
            continue
        try:
            items.append((rel, full.read_bytes().decode("utf-8", "replace")))
        except OSError:
            continue
    return len(items), check_texts(items)


def scan_folder(ws: Workspace) -> tuple[int, list[SecretFinding]]:
    """Every memory file of the repo's memory folder, as on disk (`scan` with no FILE)."""
    if ws.repo is None or ws.memory_dir is None:
        raise MemexError("not inside a git repository: there is no memory folder to scan; "
                         "name the FILEs to scan")
    top = ws.repo.toplevel
    items: list[tuple[str, str]] = []
    for path in store.memory_files(ws.memory_dir):
        try:
            items.append((path.relative_to(top).as_posix(),
                          path.read_bytes().decode("utf-8", "replace")))
        except OSError:
            continue
    return len(items), check_texts(items)
