"""The import of stop 26 (each entry's pure part prepared apart, in a forked helper or
not; validated once; a text scanned for secrets once) writes the same files, byte for
byte, and says the same things in the same order as the import before it (main's
code at a785f48, its results kept in tests/data/import_same_golden.json), over a varied archive:
personal and project entries, signed (one's own export) and not, hostile fields,
a secret in every field, refused entries of every kind, an entry that comes twice,
files that exist already (an earlier import, a conflict), and another tool's fields."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from memex.core import model, redact
from memex.index import ahead
from memex.storage import homes
from memex.workflows import portable

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "QYLPMN5HFIQR7XYA"
PASSWORD = "hunter2-Zq8#rT5!wX"
PEM_BEGIN = "-----BEGIN " + "RSA PRIVATE" + " KEY-----"
PEM_KEY = "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu"
PEM_END = "-----END " + "RSA PRIVATE" + " KEY-----"


def _ulid(n: int) -> str:
    return f"01J{n:023d}"


def _text(memory_id: str, scope: str, body: str = "a plain note about caches",
          lines: str = "", repo_id: str | None = None) -> str:
    repo = f"repo_id: {repo_id}\n" if repo_id else ""
    return (f"---\nid: {memory_id}\nschema_version: 2\nrevision: 1\n{repo}scope: {scope}\n"
            f"{lines}created_at: 2026-11-01T00:00:00Z\nupdated_at: 2026-11-01T00:00:00Z\n"
            f"---\n\n{body}\n")


def _archive(repo_id: str, key: bytes, foreign: bool) -> list[str]:
    """The archive's lines (manifest first)."""
    lines = [json.dumps({"format": "git-memex-export", "version": 1})]
    n = [0]

    def add(home: str, text: str, *, signed: bool = False, name: str | None = None,
            sha: object = "right", memory_id: str | None = None) -> None:
        mid = memory_id or text.split("\n")[1].removeprefix("id: ")
        item: dict[str, Any] = {"home": home, "name": name or f"{mid}.md", "text": text}
        if sha == "right":
            item["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        elif sha is not None:
            item["sha256"] = sha
        if signed:
            item["signature"] = portable.sign(key, home, item["name"], text)
        lines.append(json.dumps(item, ensure_ascii=False))

    def new() -> str:
        n[0] += 1
        return _ulid(n[0])

    states = ("review_state: published\ntrust_level: reviewed\napproved_by: local:bob\n"
              "proposed_by: local:ann\n")
    # personal entries, clean and with a secret in each place, signed and not
    for signed in (False, True):
        add("personal", _text(new(), "personal"), signed=signed)
        add("personal", _text(new(), "personal", lines="trust_level: reviewed\n"
                              "approved_by: local:bob\nlocal_approve: true\n"), signed=signed)
        add("personal", _text(new(), "personal", f"the token is {TOKEN} for ci"),
            signed=signed)
        add("personal", _text(new(), "personal", lines=f'title: "deploy {TOKEN}"\n'),
            signed=signed)
        add("personal", _text(new(), "personal", lines=f"aliases: [{TOKEN}, cache]\n"),
            signed=signed)
        add("personal", _text(new(), "personal", lines=f"x-deploy: {TOKEN}\n"),
            signed=signed)
        add("personal", _text(new(), "personal", lines=f"# {AWS} in a comment\n"),
            signed=signed)
        add("personal", _text(new(), "personal", lines=f"tags: [ops, {AWS}]\n"),
            signed=signed)
        add("personal", _text(new(), "personal", "before <private>my notes</private> after"),
            signed=signed)
        add("personal", _text(new(), "personal", f"password = {PASSWORD}\nand {AWS}"),
            signed=signed)
        add("personal", _text(new(), "personal", lines="review_history:\n"
                              f"  - {{at: 2026-11-01T00:00:00Z, by: local:{TOKEN}, "
                              "from: none, to: none, note: x}\n"), signed=signed)
        # hand-written: quoted times, a block list, another key order, a comment
        mid = new()
        add("personal", f"---\n# written by hand\nscope: personal\nid: {mid}\n"
            f"tags:\n  - alpha\n  - {TOKEN}\nschema_version: 2\nrevision: 1\n"
            'created_at: "2026-11-01T00:00:00Z"\nupdated_at: 2026-11-01T00:00:00Z\n'
            "x-kept: yes\n---\n\nhand written body\n", signed=signed)
    # masking a PEM key given as three aliases joins them into one alias over lines:
    # refused (invalid), and the masking still said (review fix 1)
    add("personal", _text(new(), "personal", lines=f"aliases: [{PEM_BEGIN}, {PEM_KEY}, "
                          f"{PEM_END}]\n"))
    # project entries: own (repo_id of this repo) and foreign, every landing
    for signed in (False, True):
        add("repo", _text(new(), "project", lines=states, repo_id=repo_id), signed=signed)
        add("repo", _text(new(), "project", lines="role: instruction\n"
                          "instruction_state: approved\nreview_state: approved\n"
                          "approved_by: local:bob\n", repo_id=repo_id), signed=signed)
        add("repo", _text(new(), "project", lines="review_state: draft\n", repo_id=repo_id),
            signed=signed)
        add("repo", _text(new(), "project", lines="visibility: private\n"
                          "review_state: approved\n", repo_id=repo_id), signed=signed)
        add("repo", _text(new(), "project", f"key {TOKEN}", lines=states,
                          repo_id="git-origin-sha256:other"), signed=signed)
        add("outbox", _text(new(), "project", lines=f'title: "x {AWS}"\nreview_state: draft\n',
                            repo_id=repo_id), signed=signed)
        add("repo", _text(new(), "project", lines=f"x-note: {TOKEN}\n" + states,
                          repo_id=repo_id), signed=signed)
    # a forged signature, a signature of another text
    add("repo", _text(new(), "project", lines=states, repo_id=repo_id))
    lines[-1] = lines[-1][:-1] + ', "signature": "' + "ab" * 32 + '"}'
    # refused: every check an archive entry passes
    mid = new()
    add("personal", _text(mid, "personal"), name="../../etc/evil.md")
    add("personal", _text(new(), "personal"), name="sub/x.md")
    add("elsewhere", _text(new(), "personal"))
    add("personal", _text(new(), "personal"), sha="0" * 64)
    add("personal", _text(new(), "personal"), sha=17)
    add("personal", _text(new(), "personal", "nul \0 here"))
    add("personal", _text(new(), "personal").replace("schema_version: 2\n", ""))
    add("personal", _text(new(), "personal"), name=f"{_ulid(999)}.md")
    add("repo", _text(new(), "personal"))
    add("personal", _text(new(), "personal", lines="review_state: bogus\n"))
    add("personal", _text(new(), "personal", lines='title: "two\\nlines"\n'))
    add("personal", _text(new(), "personal", "x" * (70 * 1024)))
    add("personal", "---\nid: [unclosed\n---\nbody\n", name=f"{new()}.md")
    add("personal", "no front matter at all\n", name=f"{new()}.md")
    add("personal", _text(new(), "personal", lines="revision: 0\n"))
    # twice: the same id again (clean, then with a secret)
    add("personal", _text(_ulid(1), "personal", "the same id again"))
    add("personal", _text(_ulid(3), "personal", f"again with {TOKEN}"))
    lines.append("{not json")
    lines.append("[1, 2]")
    lines.append(json.dumps({"home": "personal"}))
    if foreign:
        for data in (
                {"id": new(), "scope": "personal", "title": f"from another tool {TOKEN}",
                 "source": "cli", "created_by": "alice", "trust_level": "reviewed"},
                {"id": new().lower(), "scope": "project", "review_state": "published",
                 "approved_by": "bob", "source": "elsewhere", "scope_key": "k"},
                {"id": new(), "scope": "org"},
                {"id": new(), "scope": "user", "priority": 3, "tags": ["a", AWS]}):
            lines.append(json.dumps({"front_matter": data, "body": f"foreign {data['id']}"}))
    return lines


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.md"))
            if ".git" not in p.parts}


def _run(root: Path, archive: Path, key: bytes, importer: Any, nows: list[str],
         monkeypatch: pytest.MonkeyPatch, conflict: str) -> tuple[list[Any], dict[str, bytes]]:
    """Import ARCHIVE once per time in NOWS into ROOT's repo and home (a file for the
    id CONFLICT with other text placed first); the reports (paths relative) and files."""
    home = root / "home"
    home.mkdir()
    (home / portable.KEY_FILE).write_bytes(key)
    ws = homes.workspace(root / "repo", home=home)
    ws.personal_dir.mkdir(parents=True)
    (ws.personal_dir / f"{conflict}.md").write_text(_text(conflict, "personal", "mine"))
    reports = []
    for now in nows:
        monkeypatch.setenv("GIT_MEMEX_NOW", now)
        report = importer(homes.workspace(root / "repo", home=home), archive)
        reports.append(json.loads(json.dumps(report.as_json()).replace(str(root), "ROOT")))
    return reports, _tree(root)


# The expected files and reports of the varied archive's two imports (foreign: with
# and without another tool's fields), written once from main's import (a785f48's loop,
# kept till then as tests/helpers/import_before.py). When import's behaviour changes on
# purpose, write it again from the current code and read the diff before committing:
#   MEMEX_WRITE_GOLDEN=1 .venv/bin/python -m pytest -n 0 tests/test_import_same.py -k same_files
GOLDEN = Path(__file__).parent / "data" / "import_same_golden.json"


def _golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}


@pytest.mark.parametrize("foreign", [False, True])
@pytest.mark.parametrize("fork", [False, True])
def test_the_same_files_and_messages_as_before(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork: bool,
        foreign: bool) -> None:
    monkeypatch.setattr(ahead, "BLOCK", 3)  # a few entries a block: the helper does most
    fresh = iter(range(1, 1000))  # another tool's entry given a new id: the same each run
    monkeypatch.setattr(portable, "new_ulid", lambda: f"01K{next(fresh):023d}")
    key = b"k" * 32
    ws = homes.workspace(repo)
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join(_archive(ws.repo_id or "", key, foreign)) + "\n",
                       encoding="utf-8")
    nows = ["2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"]  # again: earlier imports
    here: list[int] = []  # entries prepared in this process (not by the helper)
    counts: list[int] = []  # len(here) after each import
    prepare = portable._prepare
    monkeypatch.setattr(portable, "_prepare", lambda *a: here.append(1) or prepare(*a))
    root = tmp_path / "now"
    shutil.copytree(repo, root / "repo", symlinks=True)
    reports, files = _run(root, archive, key, lambda w, a: (
        portable.import_path(w, a, fork=fork), counts.append(len(here)))[0],
        nows, monkeypatch, _ulid(2))
    now = {"reports": reports,
           "files": {name: data.decode("utf-8") for name, data in files.items()}}
    golden = _golden()
    if os.environ.get("MEMEX_WRITE_GOLDEN"):  # (not GIT_*: tests/conftest.py drops those)
        golden[str(foreign)] = now
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False)
                          + "\n", encoding="utf-8")
    before = golden[str(foreign)]
    entries = len(archive.read_text().splitlines()) - 1 - 3  # 3 lines are not entries
    if fork:  # the helper did most blocks (three in four)
        assert counts[0] < entries / 2
    else:
        assert counts == [entries, 2 * entries]
    assert now["reports"][0] == before["reports"][0]
    assert now["reports"][1] == before["reports"][1]
    assert now["files"] == before["files"]
    first, again = before["reports"]
    # the archive exercises what it should
    assert len(first["imported"]) >= 25 and len(first["rejected"]) >= 18
    assert first["conflicts"] and again["unchanged"] and not again["imported"]
    assert any("masked" in n for n in first["notices"])
    assert any("masked 1 secret (pem-private-key)" in n for n in first["notices"])
    assert any("untrusted draft" in n for n in first["notices"])
    assert not any(TOKEN in data or AWS in data for data in before["files"].values())
    assert any("review_state: published" in data for data in before["files"].values())


def test_each_entry_validated_once_and_scanned_once_when_clean(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry's memory is validated when read, not again before it is stored (the
    import changes state fields only, to valid values); a clean entry's text is scanned
    once, and one with a secret is not scanned again before it is masked."""
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-02T00:00:00Z")
    lines = [json.dumps({"format": "git-memex-export", "version": 1})]
    texts = [_text(_ulid(n), "personal", f"note {n}") for n in range(4)]
    texts.append(_text(_ulid(9), "personal", lines=f"x-deploy: {TOKEN}\n"))
    lines += [json.dumps({"home": "personal", "name": f"{_ulid(n)}.md", "text": t})
              for n, t in zip([0, 1, 2, 3, 9], texts, strict=True)]
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join(lines) + "\n", encoding="utf-8")
    calls: dict[str, int] = {"validate": 0, "detect": 0}
    validate, detect = model.validate, redact._detect

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any) -> Any:
            calls[name] += 1
            return real(*args)
        return call

    monkeypatch.setattr(model, "validate", counted("validate", validate))
    monkeypatch.setattr(redact, "_detect", counted("detect", detect))
    report = portable.import_path(homes.workspace(), archive, fork=False)
    assert len(report.imported) == 5 and not report.rejected
    assert calls["validate"] == 5
    # 4 clean: one pass each; the one with a secret outside title, body and aliases:
    # the text, its fields (none), the text masked (found, then none left)
    assert calls["detect"] == 4 + 1 + 1 + 2
    assert TOKEN not in (homes.workspace().personal_dir / f"{_ulid(9)}.md").read_text()


def _double(n: int) -> int:
    return 2 * n


@pytest.mark.parametrize("pattern", ["pccccccc", "pc", "cp", "p"])
def test_a_helper_pattern_and_queue_depth_keep_the_order(pattern: str,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """in_order with the import's pattern (or any other) and a queue of one block or
    many: every result, in order."""
    monkeypatch.setattr(ahead, "BLOCK", 5)
    items = list(range(203))
    for queued in (1, 32):
        assert list(ahead.in_order(items, _double, fork=True, pattern=pattern,
                                   queued=queued)) == [2 * n for n in items]


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_the_helper_holds_none_of_the_parents_files(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper closes every descriptor it inherits but its pipe: an import's write
    lock (an flock, shared by every copy of its descriptor) is free as soon as the
    import ends, even killed, while its helper may still be finishing a block."""
    monkeypatch.setattr(ahead, "BLOCK", 5)
    with (tmp_path / "held").open("wb") as held:
        seen = list(ahead.in_order([held.fileno()] * 40, _open, fork=True, pattern="pc"))
    assert True in seen and False in seen  # the parent's blocks see it; the helper's not


def _forked_import(home: Path, archive: Path, **extra: str) -> int:
    """`git-memex import ARCHIVE` in a forked copy of this process (its patches kept);
    the exit status, negative for the signal that ended it."""
    from memex.storage import iostep
    from tests.helpers import invoke

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child ends in os._exit or a SIGKILL
        code = 70
        try:
            os.environ.update(GIT_MEMEX_HOME=str(home), **extra)
            iostep.reset()
            code = invoke("import", str(archive)).exit_code
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def test_an_import_killed_with_its_helper_running_leaves_whole_files(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGKILL at the import's write steps while its helper prepares entries: every file
    on disk is whole (the bytes a finished import writes), the write lock is free at
    once (the next write, with no wait allowed, goes through) and its temp files go."""
    from memex.storage import store
    from tests.helpers import git, invoke

    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-02T00:00:00Z")
    monkeypatch.setattr(ahead, "forks", lambda count: True)
    monkeypatch.setattr(ahead, "BLOCK", 2)
    lines = [json.dumps({"format": "git-memex-export", "version": 1})]
    lines += [json.dumps({"home": "personal", "name": f"{_ulid(n)}.md",
                          "text": _text(_ulid(n), "personal", f"note {n} {TOKEN}")})
              for n in range(1, 25)]
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = tmp_path / "whole"
    log = tmp_path / "steps.log"
    assert _forked_import(whole, archive, GIT_MEMEX_FAULT_LOG=str(log)) == 0
    expected = {p.name: p.read_bytes() for p in (whole / "personal").glob("*.md")}
    assert len(expected) == 24
    steps = [line.split()[1] for line in log.read_text().splitlines()]
    firsts = {name: steps.index(name) + 1 for name in ("create-temp", "write", "fsync")}
    renames = [n for n, name in enumerate(steps, 1) if name == "rename"]
    git("config", "memex.lockTimeout", "0", cwd=repo)
    for n in sorted({*firsts.values(), renames[0], renames[11], renames[-1]}):
        home = tmp_path / f"kill{n}"
        assert _forked_import(home, archive, GIT_MEMEX_FAULT=f"kill@{n}") == -9, n
        on_disk = {p.name: p.read_bytes() for p in (home / "personal").glob("*.md")}
        assert all(expected[name] == data for name, data in on_disk.items()), n
        assert len(on_disk) == (renames.index(n) if n in renames else 0)
        monkeypatch.setenv("GIT_MEMEX_HOME", str(home))
        after = invoke("capture", "the next write after the kill", "--scope", "personal")
        assert after.exit_code == 0, after.stderr  # the lock is free: no wait allowed
        assert not [p for p in home.rglob("*") if p.name.endswith(store.TEMP_SUFFIX)]


def test_foreign_entries_prepared_by_the_helper_get_new_ids_in_input_order(
        repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another tool's entries go to the helper too; those without a ULID get their new
    id from the importing process, in the input's order: distinct and increasing
    (a ULID drawn in each process, as the blocks alternate, would be neither)."""
    monkeypatch.setattr(ahead, "BLOCK", 2)
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-02T00:00:00Z")
    here: list[int] = []
    prepare = portable._prepare
    monkeypatch.setattr(portable, "_prepare", lambda *a: here.append(1) or prepare(*a))
    count = 60
    archive = tmp_path / "foreign.jsonl"
    lines = (json.dumps({"front_matter": {"id": f"note-{n}", "title": f"t{n}"},
                         "body": f"foreign note {n}"}) for n in range(count))
    archive.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    report = portable.import_path(homes.workspace(repo), archive, fork=True)
    assert len(here) < count / 2  # the helper prepared most of them
    ids = [memory_id for memory_id, _ in report.imported]
    assert len(ids) == count and ids == sorted(set(ids))
    for n, (_, path) in enumerate(report.imported):
        assert f"imported_id: note-{n}\n" in Path(path).read_text(encoding="utf-8")
