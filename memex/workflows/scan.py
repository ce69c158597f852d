"""Secret scan of memory files as git is about to commit them (the pre-commit hooks).

Reports file, line and kind of every unmasked secret or unredacted `<private>` block,
never the secret itself, and every personal or `visibility: private` memory about to
enter the repo (rule 2: personal never leaves the machine by any path). Staged content
is read from the index in one `git cat-file --batch` process, so 1,000 staged files
cost one subprocess, not 1,000.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from memex.core import fingerprint, frontmatter, redact
from memex.core.errors import InvalidMemory, MemexError
from memex.core.ulid import is_ulid
from memex.storage import gitio, homes, store
from memex.storage.homes import Workspace
from memex.workflows import githooks, writes

# kinds that are not secrets: a file that must not be in the repo at all (as it is)
SHARING_KINDS: dict[str, str] = {
    "personal-memory": "a personal memory (scope: personal): rule 2, personal memories "
                       "never leave this machine",
    "private-memory": "a visibility: private memory: private memories never enter the repo",
    "personal-copy": "a copy of {detail}: rule 2, personal memories never leave this machine",
    "private-copy": "a copy of {detail}: private memories never enter the repo",
    "personal-archive": "a git-memex export holding {detail}: rule 2, personal and private "
                        "memories never leave this machine",
    "not-a-memory": "not a memory file ({detail}): the memory folder holds only <ULID>.md "
                    "memory files and a README.md without front matter; a stray file there "
                    "may be a hand-copied personal memory",
    "unreadable-memory": "cannot be read as a memory ({detail}): an unparseable file in the "
                         "memory folder may be a hand-copied personal memory; fix it "
                         "(git memex verify explains) or",
}


@dataclass(frozen=True)
class SecretFinding:
    """A secret found in a file: where, of which kind."""

    path: str
    line: int
    kind: str
    detail: str = ""
    blob: str = ""  # the file's blob id: names the file when its name is shown masked

    @property
    def is_secret(self) -> bool:
        return self.kind not in SHARING_KINDS

    @property
    def what(self) -> str:
        """What a secret finding is, for people (verify's secret rule says the same)."""
        return "unredacted <private> block" if self.kind == "private-block" else \
            f"unmasked {self.kind}"

    @property
    def shown_path(self) -> str:
        """The path as reports show it: a secret in a file name is masked there too."""
        return redact.shown(self.path)

    def describe(self) -> str:
        path = self.shown_path
        # a masked name may be shared by several files: the blob id tells them apart
        where = f"{path} (blob {self.blob[:12]})" if path != self.path and self.blob \
            else path
        if self.kind in SHARING_KINDS:
            reason = SHARING_KINDS[self.kind].format(detail=self.detail)
            joint = " " if reason.endswith(" or") else "; "
            what = _quoted(path) if path == self.path else \
                "(that file: its name holds a secret, shown masked" + \
                (f"; git ls-files --stage | grep {self.blob[:12]} names it)" if self.blob
                 else ")")
            return f"{where}:{self.line}: {reason}{joint}unstage it: git rm --cached {what}"
        return f"{where}:{self.line}: {self.what}"

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {"path": self.shown_path, "line": self.line,
                                   "kind": self.kind}
        if self.detail:
            data["detail"] = self.detail
        if self.blob:
            data["blob"] = self.blob
        return data


def with_blob(findings: list[SecretFinding], blob: str) -> list[SecretFinding]:
    """FINDINGS of one file, each naming the file's blob id."""
    return [dataclasses.replace(f, blob=blob) for f in findings]


def _quoted(path: str) -> str:
    return path if all(c.isalnum() or c in "._-/" for c in path) else f"'{path}'"


def scan_texts(items: Iterable[tuple[str, str]]) -> list[SecretFinding]:
    """(path, text) pairs -> findings, in input order."""
    return [finding for path, text in items for finding in _secrets(path, text)]


def _secrets(path: str, text: str) -> list[SecretFinding]:
    return [SecretFinding(path, f.line, f.kind) for f in redact.find_secrets(text)]


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


def folder_findings(dir_name: str, path: str, data: bytes) -> list[SecretFinding]:
    """Everything the scan blocks in one file under the memory folder (any name, any
    depth): a file that is not a memory file, one that cannot be read as one, a
    personal or private memory, an unmasked secret. The folder's top-level README.md
    without front matter is the one file there that is not a memory."""
    rel = PurePosixPath(path).relative_to(PurePosixPath(dir_name))
    text = fingerprint.decode_loose(data)
    secrets = _secrets(path, text) if text is not None else []
    name = rel.name
    if len(rel.parts) == 1 and name == "README.md" and text is not None \
            and not _has_front_matter(text):
        return secrets
    if len(rel.parts) > 1:
        why = f"in a subfolder of {dir_name}/"
    elif not (name.endswith(".md") and is_ulid(name[:-3])):
        why = "its name is not <ULID>.md" if name != "README.md" else \
            "a README.md with front matter"
    else:
        try:
            strict = store.decode(data)
        except InvalidMemory as exc:
            return [SecretFinding(path, 1, "unreadable-memory", str(exc)), *secrets]
        shared = sharing_findings(path, strict)
        if shared:
            return shared + secrets
        try:
            store.from_text(strict, Path(path), store.Home("repo", Path(dir_name)))
        except InvalidMemory as exc:
            return [SecretFinding(path, 1, "unreadable-memory", str(exc)), *secrets]
        return secrets
    return [SecretFinding(path, 1, "not-a-memory", why), *secrets]


def _has_front_matter(text: str) -> bool:
    first = next((line for line in text.lstrip("\ufeff").splitlines() if line.strip()), "")
    return first.strip() == "---"


def in_folder(dir_name: str, rel_path: str) -> bool:
    """Is a repo-relative path anywhere under the memory folder?"""
    folder = PurePosixPath(dir_name).as_posix().strip("/") + "/"
    return rel_path.startswith(folder)


def copy_findings(path: str, blob: str, data: bytes | None,
                  guards: dict[str, tuple[str, str]],
                  draft_in_folder: bool = False) -> list[SecretFinding]:
    """A personal or private memory copied to `path`: the same bytes (blob id) or the
    same body once line endings, trailing space and front matter are set aside. A
    `propose` draft of a personal memory in the memory folder (`draft_in_folder`; its
    derived_from names the memory) is the sanctioned way to share one, not a copy."""
    match = guards.get(blob)
    how = "same bytes"
    if match is None and data is not None:
        text = fingerprint.decode_loose(data)
        for digest in fingerprint.candidate_hashes(text) if text is not None else ():
            if digest in guards:
                match, how = guards[digest], "same body"
                break
    if match is None:
        return []
    mid, kind = match
    if kind == "personal" and draft_in_folder and data is not None and mid == proposed_from(data):
        return []  # parsed only here: a match is rare
    return [SecretFinding(path, 1, f"{kind}-copy", f"{kind} memory {mid}, {how}")]


_ARCHIVE_HEAD = b'{"format": '  # how an export's manifest line begins (json.dumps)
# A staged `.jsonl` file is read up to this size to tell whether it is an export archive
# (any other file only up to a memory file's limit).
ARCHIVE_MOST = 64 * 1024 * 1024


def archive_findings(path: str, data: bytes | None) -> list[SecretFinding]:
    """An export archive (`git memex export`, any name) at PATH: one finding per entry
    that is a personal or `visibility: private` memory (`--include-personal`), on its
    line. Anything else: none."""
    if data is None or not data.startswith(_ARCHIVE_HEAD):
        return []
    from memex.workflows import portable  # only for a staged file that may be one

    lines = data.split(b"\n")
    try:
        head = json.loads(lines[0])
    except (ValueError, RecursionError):
        return []
    if not isinstance(head, dict) or head.get("format") != portable.FORMAT:
        return []
    out: list[SecretFinding] = []
    for number, raw in enumerate(lines[1:], start=2):
        try:
            item = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        text = item.get("text") if isinstance(item, dict) else None
        if isinstance(text, str) and sharing_findings(path, text):
            mid = redact.shown(str(item.get("id") or item.get("name") or "?"))
            out.append(SecretFinding(path, number, "personal-archive",
                                     f"a personal or private memory ({mid})"))
    return out


def proposed_from(data: bytes) -> str | None:
    """The personal memory a memory file was proposed from (its derived_from), when the
    file reads as a memory; None otherwise."""
    try:
        origin = frontmatter.parse(store.decode(data)).data.get("derived_from")
    except InvalidMemory:
        return None
    return str(origin) if origin else None


def summary(count: int, findings: list[SecretFinding]) -> str:
    """One line for people: what the scan found (or that it found nothing)."""
    if not findings:
        return f"scanned {count} memory file{'' if count == 1 else 's'}: no unmasked secret"
    secrets = sum(1 for f in findings if f.is_secret)
    parts = []
    if secrets:
        parts.append(f"{secrets} secret(s): mask or remove them (git memex update ID ...)")
    if len(findings) > secrets:
        parts.append(f"{len(findings) - secrets} file(s) that must not be committed as "
                     "they are: unstage or fix them")
    blocked = len({f.path for f in findings})  # a copy outside the folder counts too
    return (f"git-memex: {'; '.join(parts)}; in {blocked} file{'' if blocked == 1 else 's'}; "
            "then commit again")


def shared_note(shared: list[SecretFinding]) -> str:
    """One line for the findings `already_shared` lets through."""
    return (f"git-memex: {len(shared)} secret finding(s) above are in files this merge "
            "takes as they are from a commit the remote's main line already holds: not "
            "refused (merging them un-shares nothing); mask or remove them in a commit "
            "of their own (git memex verify lists them)")


_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def already_shared(ws: Workspace, findings: list[SecretFinding]) -> list[SecretFinding]:
    """Those of FINDINGS (a scan of the staged change) the commit scan does not refuse.
    Only while a merge is committed (the merged commits: git's `GITHEAD_<id>` in the
    pre-merge-commit hook's environment, or MERGE_HEAD for a conflicted merge finished
    with `git commit`), only SECRET findings (never a personal or private memory, a copy
    or an archive), and only in a file whose staged blob a merged commit holds at the
    same path, that commit being on the main line of the remote this branch pushes to:
    reachable from the branch's upstream on that remote or from that remote's default
    branch. A teammate's raw token already on main otherwise stops everyone's `git pull`
    merge, un-sharing nothing; a side branch, a stale or forged remote-tracking ref, a
    checkout, a cherry-pick or another remote's branch is refused. docs/decisions.md."""
    secrets = [f for f in findings if f.is_secret]
    if not secrets or ws.repo is None:
        return []
    top = ws.repo.toplevel
    merged = _merged_commits(ws.repo.git_dir)
    remote = _push_remote(top) if merged else None
    if remote is None:
        return []
    tips = _main_lines(top, remote)
    paths = sorted({f.path for f in secrets})
    held: set[tuple[str, str]] = set()
    for commit in merged:
        if gitio.rev_parse(top, commit) and any(gitio.is_ancestor(top, commit, tip)
                                                for tip in tips):
            held |= set(gitio.blob_ids(top, commit, paths).items())
    return [f for f in secrets if (f.path, f.blob) in held]


def _merged_commits(git_dir: Path) -> list[str]:
    """The commits a merge being committed brings: git names each in the
    pre-merge-commit hook's environment (`GITHEAD_<id>`; MERGE_HEAD is written only
    after that hook), and in MERGE_HEAD for a conflicted merge finished by `git commit`.
    Empty outside a merge (a plain commit, a checkout of a file, a cherry-pick)."""
    named = [key[len("GITHEAD_"):] for key in os.environ if key.startswith("GITHEAD_")]
    with contextlib.suppress(OSError):
        named += (git_dir / "MERGE_HEAD").read_text(encoding="ascii").split()
    return sorted({oid for oid in named if _OBJECT_ID.fullmatch(oid)})


def _main_lines(top: Path, remote: str) -> list[str]:
    """The refs of REMOTE whose history counts as shared: the current branch's upstream
    when it is a branch of REMOTE, and REMOTE's default branch (refs/remotes/REMOTE/HEAD,
    else its main or master)."""
    tips: list[str] = []
    upstream = gitio.run(["rev-parse", "--symbolic-full-name", "@{upstream}"], cwd=top,
                         check=False).stdout.strip()
    if upstream.startswith(f"refs/remotes/{remote}/"):
        tips.append(upstream)
    default = gitio.remote_default_branch(top, remote)
    if default is not None:
        tips.append(f"refs/remotes/{default}")
    return tips


def _push_remote(top: Path) -> str | None:
    """The remote the current branch pushes to (`%(push:remotename)`), else the only
    remote of the repository, else None."""
    branch = gitio.current_branch(top)
    if branch:
        name = gitio.run(["for-each-ref", "--format=%(push:remotename)",
                          f"refs/heads/{branch}"], cwd=top, check=False).stdout.strip()
        if name:
            return name
    remotes = gitio.run(["remote"], cwd=top, check=False).stdout.split()
    return remotes[0] if len(remotes) == 1 else None


def _guards(ws: Workspace) -> dict[str, tuple[str, str]]:
    """The fingerprints of this machine's personal and private memories (the index) in
    every home the commit-time scan knows of (`hook_homes`)."""
    from memex.index import build

    guards: dict[str, tuple[str, str]] = {}
    for home in hook_homes(ws):
        with build.open_index(dataclasses.replace(ws, home=home)) as index:
            guards.update(build.guards(index.conn))
    return guards


HOOK_HOME = "memex.hookHome"


def recorded_hook_home(top: Path) -> str | None:
    """This clone's `memex.hookHome` as written (its own git config only: never the
    global one nor .memexconfig), or None."""
    proc = gitio.run(["config", "--local", "--get", HOOK_HOME], cwd=top, check=False)
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value else None


def usable_hook_home(value: str | None) -> Path | None:
    """The recorded hook home when it is an absolute folder that exists, else None (a
    relative or missing one is ignored here; doctor reports it)."""
    home = homes.expanded(value) if value else None
    return home if home is not None and home.is_absolute() and home.is_dir() else None


def hook_homes(ws: Workspace) -> list[Path]:
    """Every home whose personal and private memories the commit-time scan guards: the
    current one (GIT_MEMEX_HOME or the default), the default one, and the home recorded
    in this clone (`memex.hookHome`, for a GUI client's commit without GIT_MEMEX_HOME).
    A stale record adds a home; it never takes the current one's place."""
    found = [ws.home]
    candidates: list[Path | None] = []
    with contextlib.suppress(RuntimeError):  # no home folder to derive it from
        candidates.append(homes.default_home())
    if ws.repo is not None:
        candidates.append(usable_hook_home(recorded_hook_home(ws.repo.toplevel)))
    seen = {_same(ws.home)}
    for home in candidates:
        if home is not None and home.is_dir() and _same(home) not in seen:
            seen.add(_same(home))
            found.append(home)
    return found


def _same(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path


def scan_staged(ws: Workspace, listing: bytes | None = None
                ) -> tuple[int, list[SecretFinding]]:
    """(memory-folder files scanned, findings) over what the next commit adds or changes
    (gitio.staged_listing, or the LISTING read already): every staged file under the
    memory folder, whatever its name, depth or content, and every staged file anywhere
    that is a copy of a personal or private memory (of the homes the hook knows of:
    `hook_homes`)."""
    if ws.repo is None:
        return 0, []
    top = ws.repo.toplevel
    staged = gitio.staged_files(top, listing)
    folder = [(p, b) for p, b in staged if in_folder(ws.memory_dir_name, p)]
    guards = _guards(ws)
    others = [(p, b) for p, b in staged if (p, b) not in set(folder)] if guards else []
    limit = 4 * writes.max_bytes(ws) + 65536  # a memory file, even as UTF-32
    sizes = gitio.blob_sizes(top, [b for p, b in others if b not in guards])
    archives = {b for p, b in others if p.endswith(".jsonl")}  # read past the limit
    wanted = {b for _, b in folder} | {b for b, size in sizes.items() if size <= limit or (
        b in archives and size <= ARCHIVE_MOST)}
    contents = gitio.read_blob_bytes(top, sorted(wanted))
    findings: list[SecretFinding] = []
    for path, blob in staged:
        data = contents.get(blob)
        if (path, blob) in folder:
            if data is None:
                raise gitio.GitError(f"git cannot read the staged version of {path}")
            found = folder_findings(ws.memory_dir_name, path, data)
            if not any(f.kind in ("personal-memory", "private-memory") for f in found):
                found = copy_findings(path, blob, data, guards, draft_in_folder=True) + found
            findings += with_blob(found, blob)
        elif guards:
            findings += with_blob(copy_findings(path, blob, data, guards)
                                  + archive_findings(path, data), blob)
    return len(folder), findings


def scan_staged_for_hook(ws: Workspace, prepare: bool
                         ) -> tuple[int, list[SecretFinding]] | None:
    """scan_staged for a commit hook: when the commit is one prepare-commit-msg scans too
    (githooks.unhooked), a listing that passed is noted; at prepare-commit-msg (PREPARE),
    the listing noted passes without a scan (None). githooks.SCANNED says why."""
    if ws.repo is None:
        return 0, []
    git_dir = ws.repo.git_dir
    listing = gitio.staged_listing(ws.repo.toplevel)
    object_format = ws.config.get("extensions.objectformat", "sha1")
    if prepare and githooks.passed_before(git_dir, listing, object_format):
        return None
    if not prepare:
        githooks.forget_passed(git_dir)
    count, findings = scan_staged(ws, listing)
    if not findings and not prepare and githooks.unhooked(git_dir):
        githooks.note_passed(git_dir, listing, object_format)
    return count, findings


def scan_paths(ws: Workspace, paths: Iterable[str]) -> tuple[int, list[SecretFinding]]:
    """Scan files on disk (named on the command line). Files outside the memory folder
    are skipped; inside it every file counts, whatever its name."""
    top = ws.repo.toplevel if ws.repo is not None else ws.cwd
    items: list[tuple[str, bytes]] = []
    for name in paths:
        path = Path(name)
        full = path if path.is_absolute() else ws.cwd / path
        try:
            rel = full.resolve().relative_to(top).as_posix()
        except ValueError:
            continue
        if not in_folder(ws.memory_dir_name, rel):
            continue
        try:
            items.append((rel, store.read_bytes(full)))
        except (OSError, InvalidMemory):  # a link or FIFO is never followed or opened
            continue
    return _scan_items(ws, items)


def _scan_items(ws: Workspace, items: list[tuple[str, bytes]]
                ) -> tuple[int, list[SecretFinding]]:
    object_format = ws.config.get("extensions.objectformat", "sha1")
    findings: list[SecretFinding] = []
    for rel, data in items:
        found = folder_findings(ws.memory_dir_name, rel, data)
        if found:  # hashed only then: a clean file costs no hash
            findings += with_blob(found, fingerprint.blob_id(data, object_format))
    return len(items), findings


def scan_folder(ws: Workspace) -> tuple[int, list[SecretFinding]]:
    """Every file under the repo's memory folder, as on disk (`scan` with no FILE)."""
    if ws.repo is None or ws.memory_dir is None:
        raise MemexError("not inside a git repository: there is no memory folder to scan; "
                         "name the FILEs to scan")
    top = ws.repo.toplevel
    items: list[tuple[str, bytes]] = []
    files = sorted(p for p in ws.memory_dir.rglob("*") if p.is_file()) \
        if ws.memory_dir.is_dir() else []
    for path in files:
        try:
            items.append((path.relative_to(top).as_posix(), store.read_bytes(path)))
        except (OSError, InvalidMemory):  # a link or FIFO is never followed or opened
            continue
    return _scan_items(ws, items)
