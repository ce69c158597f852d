"""Issue 14, item 2: every string a write stores goes through one masking step.

The same made-up secret goes into every field each write path accepts (body, title, tags,
paths, canonical_ref, review and status notes, unknown keys); afterwards no stored file, in the
memory home or the repo, holds it.  The secret is assembled at run time so that this file holds
nothing a scanner would flag.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memex.core import frontmatter, masking, model, redact
from memex.core.ulid import new_ulid
from memex.storage import homes, store
from memex.workflows import agent, file_merge, keywords
from tests.helpers import git_proc, invoke, invoke_json
from tests.helpers.farm import Dev, make_team

SECRET = "gh" + "p_" + "Q7wErT9yUiOp3AsDfGh5JkLz1XcVbNm2QwEr"
TAIL = SECRET[4:]  # what must be gone: everything after the four characters kept


def stored_files(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
            and not p.name.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm", ".db"))]


def assert_nowhere(*roots: Path) -> None:
    leaked = [str(p) for p in stored_files(*roots)
              if TAIL in p.read_bytes().decode("utf-8", "replace")]
    assert leaked == []


def test_mask_memory_masks_every_free_text_field() -> None:
    memory = model.Memory(
        id=new_ulid(), scope="personal", title="key " + SECRET, body="use " + SECRET,
        tags=[SECRET], paths=["src/" + SECRET], language=None, canonical_ref=SECRET,
        created_by=SECRET, proposed_by=SECRET, approved_by=SECRET,
        review_history=[{"at": "2026-01-01T00:00:00Z", "by": "a", "from": "draft",
                         "to": "proposed", "note": "token " + SECRET}],
        status_history=[{"at": "2026-01-01T00:00:00Z", "by": "a", "from": "active",
                         "to": "deprecated", "note": SECRET}],
        extra={"x_note": SECRET, "x_list": [SECRET]})
    masked = masking.mask_memory(memory)
    text = frontmatter.rewrite(masked, None)
    assert TAIL not in text
    assert masked.id == memory.id and masked.scope == "personal"
    assert masked.tags == [SECRET[:4] + "x" * (len(SECRET) - 4)]
    assert TAIL in memory.body  # the input is not changed in place


def test_private_block_in_a_tag_stays_a_valid_tag() -> None:
    memory = model.Memory(id=new_ulid(), scope="personal", body="b",
                          tags=["<private>secret</private>"])
    masked = masking.mask_memory(memory)
    assert masked.tags == ["REDACTED"]
    model.validate(masked)


def test_private_block_in_a_path_is_no_glob_class(repo: Path, memex_home: Path) -> None:
    """A path is a glob: `[REDACTED]` in it matched any one of R, E, D, A, C, T
    (audit29's left item), so `src/<private>x</private>/a.py` scoped the memory to
    `src/R/a.py`. A private block in a path is stored as in a tag: REDACTED."""
    memory = model.Memory(id=new_ulid(), scope="personal", body="b",
                          paths=["src/<private>billing</private>/a.py", "docs/*.md"])
    assert masking.mask_memory(memory).paths == ["src/REDACTED/a.py", "docs/*.md"]
    out = invoke_json("capture", "--scope", "personal", "--paths",
                      "src/<private>billing</private>/a.py", "a note on the module")
    assert invoke_json("show", out["id"])["paths"] == ["src/REDACTED/a.py"]


def test_cli_mcp_and_hook_writes(repo: Path, memex_home: Path) -> None:
    out = invoke_json("capture", "--scope", "personal", "--title", "key " + SECRET,
                      "--tag", SECRET, "--paths", "src/" + SECRET, "body " + SECRET)
    mid = out["id"]
    invoke_json("update", mid, "--title", "t " + SECRET, "--tag", SECRET + "2",
                "--body", "new " + SECRET)
    invoke_json("status", mid, "deprecated", "--note", "rotated " + SECRET)
    invoke_json("supersede", mid, "--title", "s " + SECRET, "--tag", SECRET,
                "successor " + SECRET)
    ws = homes.workspace()
    added = agent.add(ws, "mcp " + SECRET, scope="personal", title="m " + SECRET,
                      tags=[SECRET], paths=["p/" + SECRET])
    agent.update(ws, added["id"], text="u " + SECRET, title="u " + SECRET,
                 add_tags=[SECRET + "3"], paths=["q/" + SECRET])
    agent.supersede(ws, added["id"], text="ms " + SECRET, title="ms " + SECRET,
                    tags=[SECRET])
    results, errors = keywords.capture_message(ws, "remember: the token is " + SECRET)
    assert results and not errors
    rule = invoke_json("capture", "--scope", "personal", "--role", "instruction", "lint")
    agent.forget(ws, rule["id"], note="mcp note " + SECRET)
    invoke_json("status", rule["id"], "active")
    invoke_json("forget", rule["id"], "--note", "forget note " + SECRET)
    invoke_json("status", rule["id"], "active")
    invoke_json("promote", rule["id"], "--instruction", "--note", "why " + SECRET)
    notes = [e.get("note", "") for e in invoke_json("show", rule["id"])["review_history"]]
    assert any(SECRET[:4] in n for n in notes)  # the note was stored, masked
    assert_nowhere(memex_home, repo)


def _foreign_file(folder: Path) -> str:
    mid = new_ulid()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{mid}.md").write_text(
        "---\n"
        f"id: {mid}\nschema_version: 2\nscope: personal\ntype: fact\n"
        f"title: imported {SECRET}\ntags: [{SECRET}]\npaths: [src/{SECRET}]\n"
        f"canonical_ref: {SECRET}\n"
        "status_history:\n"
        f"  - {{at: '2026-01-01T00:00:00Z', by: x, from: active, to: active, note: {SECRET}}}\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n"
        f"x_extra: {SECRET}\n"
        "---\n\n"
        f"body {SECRET}\n", encoding="utf-8")
    return mid


def test_import_masks_every_field(repo: Path, memex_home: Path, tmp_path: Path) -> None:
    _foreign_file(tmp_path / "foreign")
    result = invoke("import", str(tmp_path / "foreign"))
    assert result.exit_code == 0, result.stderr
    assert_nowhere(memex_home, repo)


def test_merge_driver_masks_what_it_writes(tmp_path: Path) -> None:
    mid = new_ulid()
    base = model.Memory(id=mid, scope="project", body="b", title="t",
                        created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
    ours = base.copy(tags=[SECRET], updated_at="2026-01-02T00:00:00Z")
    theirs = base.copy(paths=["src/" + SECRET], canonical_ref=SECRET,
                       updated_at="2026-01-03T00:00:00Z")
    files = {}
    for name, memory in (("base", base), ("ours", ours), ("theirs", theirs)):
        files[name] = tmp_path / f"{name}.md"
        files[name].write_text(frontmatter.rewrite(memory, None), encoding="utf-8")
    proc = subprocess.run(["git-memex-merge-driver", str(files["base"]), str(files["ours"]),
                           str(files["theirs"]), "7", f".memex/{mid}.md"],
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    assert TAIL not in files["ours"].read_text(encoding="utf-8")
    assert TAIL not in proc.stderr
    result = file_merge.merge_texts_or_text(*(f.read_text(encoding="utf-8") for f in
                                         (files["base"], files["base"], files["theirs"])))
    assert TAIL not in store.mask_text(result.text)


def test_the_merge_masks_every_field_a_write_masks(tmp_path: Path) -> None:
    """audit30: the merge masked title, body, aliases and tags itself (core cannot call
    the store), a second field list beside the store's: the merged memory it returns and
    reports kept a secret in paths, canonical_ref or an unknown key, with no notice.
    One list now (`core.masking`), and a notice per field."""
    base = model.Memory(id=new_ulid(), scope="project", body="b", title="t",
                        created_at="2026-01-01T00:00:00Z", updated_at="2026-01-01T00:00:00Z")
    ours = base.copy(paths=["src/" + SECRET], canonical_ref=SECRET,
                     extra={"x_note": SECRET}, updated_at="2026-01-02T00:00:00Z")
    theirs = base.copy(importance="high", tags=["<private>mine</private>"],
                       updated_at="2026-01-03T00:00:00Z")
    result = file_merge.merge_texts(*(frontmatter.emit(m) for m in (base, ours, theirs)))
    assert result.clean and result.memory is not None
    merged = frontmatter.emit(result.memory)
    assert TAIL not in merged and "mine" not in merged
    assert result.memory.tags == ["REDACTED"] and result.memory.importance == "high"
    assert {n.split(":")[0] for n in result.notices} == {"paths", "canonical_ref", "extra",
                                                         "tags"}
    assert all(TAIL not in n for n in result.notices)


@pytest.fixture
def alice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Dev:
    _, devs = make_team(tmp_path, monkeypatch, ("alice",))
    return devs[0].use()


def test_team_flow_notes_are_masked(alice: Dev) -> None:
    draft = alice.draft("deploy key " + SECRET)
    alice.run("submit", draft)
    alice.run("promote", draft, "--reject", "--note", "leaked " + SECRET)
    alice.run("promote", draft, "--resubmit", "--note", "again " + SECRET)
    assert_nowhere(alice.clone, alice.home)


def test_scan_and_hook_report_rule_and_line_never_the_secret(repo: Path) -> None:
    from tests.helpers.memfiles import memory, write
    from tests.test_secret_families import FAMILIES, PW

    picked = [s for k, s in FAMILIES if k in ("huggingface-token", "sendgrid-api-key",
                                              "digitalocean-token", "dynatrace-token")]
    lines = [f"line {i} holds {s}" for i, s in enumerate(picked)]
    lines.append(f"postgres://app:{PW}@db/app")
    path = write(repo, memory(body="\n".join(lines), tags=[SECRET]))
    text = path.read_text(encoding="utf-8")
    numbers = [text.splitlines().index(line) + 1 for line in lines]
    tag_line = next(i for i, line in enumerate(text.splitlines(), 1) if TAIL in line
                    and "line" not in line)
    result = invoke("scan")
    assert result.exit_code == 1
    for number in [tag_line, *numbers]:
        assert f".memex/{path.name}:{number}: unmasked " in result.stderr
    for secret in [*picked, PW, SECRET]:
        assert secret[4:] not in result.stderr + result.stdout
    assert invoke("init", "--yes", "--git-hooks").exit_code == 0
    git_proc("add", "-A", cwd=repo)
    proc = git_proc("commit", "-m", "leak", check=False, cwd=repo)
    assert proc.returncode == 1
    for secret in [*picked, PW, SECRET]:
        assert secret[4:] not in proc.stderr + proc.stdout
    for number in numbers:
        assert f".memex/{path.name}:{number}: unmasked " in proc.stderr


def test_dry_run_and_json_show_what_is_stored(repo: Path, memex_home: Path) -> None:
    shown = invoke("capture", "--scope", "personal", "--dry-run", "--tag", SECRET, "body")
    assert shown.exit_code == 0 and TAIL not in shown.stdout + shown.stderr
    out = invoke("capture", "--scope", "personal", "--tag", SECRET, "body", "--json")
    assert out.exit_code == 0 and TAIL not in out.stdout + out.stderr
    mid = invoke_json("list")[0]["id"]
    updated = invoke("update", mid, "--tag", SECRET + "9", "--json")
    assert updated.exit_code == 0 and TAIL not in updated.stdout + updated.stderr


def _foreign_memory(tmp_path: Path, line: str) -> tuple[str, Path]:
    """A folder of one memory file written by another tool, with LINE in its front
    matter: its id and the folder."""
    mid = new_ulid()
    folder = tmp_path / "foreign"
    folder.mkdir()
    (folder / f"{mid}.md").write_text(
        "---\n"
        f"id: {mid}\nschema_version: 2\nscope: personal\ntype: fact\ntitle: imported\n"
        f"{line}\n"
        "created_at: '2026-01-01T00:00:00Z'\nupdated_at: '2026-01-01T00:00:00Z'\n"
        "---\n\nbody\n", encoding="utf-8")
    return mid, folder


def test_import_masks_tags_as_a_write_does(repo: Path, memex_home: Path,
                                           tmp_path: Path) -> None:
    """Item 2 (audit14): import masked title, body and aliases itself and the rest as
    whole text, so a `<private>` tag was stored as `[REDACTED]`, a tag the model refuses:
    the memory could then not be tagged or untagged. One masking step: the store's."""
    mid, folder = _foreign_memory(tmp_path, f"tags: ['<private>mine</private>', {SECRET}, ok]")
    result = invoke("import", str(folder))
    assert result.exit_code == 0, result.stderr
    shown = invoke_json("show", mid)
    assert shown["tags"] == ["REDACTED", SECRET[:4] + "x" * (len(SECRET) - 4), "ok"]
    assert model.normalise_tags(shown["tags"]) == shown["tags"]
    assert invoke("update", mid, "--tag", "more").exit_code == 0
    assert "private block in its tags" in result.stderr  # the notice says so
    assert_nowhere(memex_home, repo)


def test_scan_and_verify_never_echo_a_secret_in_a_file_name(repo: Path) -> None:
    """Item 3 (audit14): a file in the memory folder named with a token (a careless
    `cp` of a key file) was reported by its name, the token whole, by `scan` and
    `verify`, in text and --json: in a CI log."""
    folder = repo / ".memex"
    folder.mkdir(exist_ok=True)
    (folder / f"{SECRET}.md").write_text("hello\n", encoding="utf-8")
    git_proc("add", "-A", cwd=repo)
    for args in (("scan", "--staged"), ("scan", "--staged", "--json"), ("scan",),
                 ("verify",), ("verify", "--json")):
        result = invoke(*args)
        assert result.exit_code == 1, args
        assert TAIL not in result.stdout + result.stderr, args
        assert SECRET[:4] in result.stdout + result.stderr, args  # the file is still named


# ---------------------------------------------------------------- a private tag, every path

PRIVATE = "<private>mine</private>"


def _stored_tags(path: Path) -> list[str]:
    """The tags of a memory file as stored: each a tag the model accepts (a bracketed
    placeholder is none: `update --tag/--untag` then fail on the memory)."""
    text = path.read_text(encoding="utf-8")
    assert "[REDACTED]" not in text and "mine" not in text
    tags = frontmatter.load(text)[0].tags
    assert model.normalise_tags(tags) == tags
    return tags


def _tagged_on_a_branch(repo: Path, driver: bool) -> Path:
    """A shared memory; branch `topic` adds a `<private>` tag (committed --no-verify
    upstream: the scan would block it), main raises the importance."""
    from tests.helpers.memfiles import commit_all, edit, memory, write

    assert invoke("init", "--yes").exit_code == 0
    if not driver:
        git_proc("config", "--remove-section", "merge.memex", cwd=repo)
    path = write(repo, memory())
    commit_all(repo, "add")
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    edit(path, tags=[PRIVATE, "ok"], updated_at="2026-02-01T00:00:00Z")
    commit_all(repo, "topic")
    git_proc("checkout", "-q", "main", cwd=repo)
    edit(path, importance="high", updated_at="2026-02-02T00:00:00Z")
    commit_all(repo, "main")
    return path


def test_a_private_tag_through_the_merge_driver_is_masked_as_a_write_does(repo: Path) -> None:
    """Item 2 (audit29): the merge driver masked the merged file as whole text, so a
    `<private>` tag became `[REDACTED]` (no tag) where a write stores REDACTED."""
    path = _tagged_on_a_branch(repo, driver=True)
    proc = git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _stored_tags(path) == ["REDACTED", "ok"]


def test_a_private_tag_through_resolve_is_masked_as_a_write_does(repo: Path) -> None:
    path = _tagged_on_a_branch(repo, driver=False)
    assert git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo).returncode == 1
    assert invoke("resolve", path.stem[:10]).exit_code == 0
    assert _stored_tags(path) == ["REDACTED", "ok"]


def test_a_private_tag_in_a_conflicted_file_is_masked_as_a_write_does(tmp_path: Path) -> None:
    """A conflicted merge (importance) is written with markers, the merged tags as they
    are: the file a person then fixes by deleting lines must hold tags the model accepts."""
    from tests.helpers.memfiles import memory

    base = memory()
    ours = base.copy(importance="high", updated_at="2026-02-02T00:00:00Z", revision=2)
    theirs = base.copy(importance="low", tags=[PRIVATE, "ok"],
                       updated_at="2026-02-01T00:00:00Z", revision=2)
    result = file_merge.merge_texts(*(frontmatter.emit(m) for m in (base, ours, theirs)))
    assert not result.clean
    written = tmp_path / "m.md"
    store.write_memory_text(written, result.text)
    stored = written.read_text(encoding="utf-8")
    assert "[REDACTED]" not in stored and "mine</" not in stored and "REDACTED" in stored


@pytest.mark.parametrize("broken", ["ours", "theirs"])
def test_a_private_tag_through_the_plain_text_fallback_is_masked_as_a_write_does(
        repo: Path, broken: str) -> None:
    """audit30: a side that does not parse (here a line before the front matter) makes
    the merge driver merge the whole file as text; its `<private>` tag was written
    `[REDACTED]` (no tag, and unquoted a YAML list): once a person deletes the stray line,
    the memory must hold the tag a write stores."""
    from tests.helpers.memfiles import commit_all, memory, write

    assert invoke("init", "--yes").exit_code == 0
    path = write(repo, memory())
    commit_all(repo, "add")
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    text = path.read_text(encoding="utf-8")
    tagged = text.replace("tags: [tooling]", "tags: [<private>mine</private>, ok]")
    path.write_text("# a note\n" + tagged if broken == "theirs" else tagged, encoding="utf-8")
    commit_all(repo, "topic")
    git_proc("checkout", "-q", "main", cwd=repo)
    changed = text.replace("Line three.", "Line three, changed.")
    path.write_text("# a note\n" + changed if broken == "ours" else changed, encoding="utf-8")
    commit_all(repo, "main")
    proc = git_proc("merge", "topic", "-m", "merge", check=False, cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # a fallback is a conflict
    merged = path.read_text(encoding="utf-8")
    assert "mine" not in merged and "Line three, changed." in merged
    path.write_text(merged.replace("# a note\n", ""), encoding="utf-8")  # the person's fix
    assert _stored_tags(path) == ["REDACTED", "ok"]


def test_a_private_tag_through_migrate_is_masked_as_a_write_does(
        repo: Path, memex_home: Path) -> None:
    from tests.test_migrate import write_v1

    path = write_v1(memex_home / "personal", **{"tags: [git]": f"tags: ['{PRIVATE}', git]"})
    assert invoke_json("migrate", "--yes")["migrated"] is True
    assert _stored_tags(path) == ["REDACTED", "git"]
    assert invoke("update", path.stem, "--tag", "more").exit_code == 0


def test_import_stores_a_private_block_in_a_path_as_a_write_does(
        repo: Path, memex_home: Path, tmp_path: Path) -> None:
    """Final read of stop 30: import masked title, body, aliases and tags by a field list
    of its own, and the rest as whole text, so `src/<private>x</private>/a.py` was stored
    `src/[REDACTED]/a.py`, a glob class (the store's rule stores REDACTED)."""
    mid, folder = _foreign_memory(tmp_path,
                                  "paths: ['src/<private>billing</private>/a.py', docs/x.md]")
    result = invoke("import", str(folder))
    assert result.exit_code == 0, result.stderr
    assert invoke_json("show", mid)["paths"] == ["src/REDACTED/a.py", "docs/x.md"]
    assert "private block in its paths" in result.stderr


def test_the_masking_of_a_memory_has_one_name() -> None:
    """`masking.mask_memory` is the one masking step of a memory; storage kept a second
    name that only passed it on (stop 31)."""
    assert not hasattr(store, "mask_memory")


@pytest.mark.parametrize("ours_note", ["", "# a note\n"])
def test_the_plain_text_fallback_scans_its_text_once(
        monkeypatch: pytest.MonkeyPatch, ours_note: str) -> None:
    """The merge driver's plain-text fallback redacted the merged text for its notice,
    then masked it again (a search for secrets, then a second redaction): three scans
    where one gives the same text. One redaction now: its detection pass, and the pass
    that finds nothing left."""
    from tests.helpers.memfiles import memory

    base = frontmatter.emit(memory())
    ours = ours_note + base.replace("Line three.", "Line three, key " + SECRET + ".")
    theirs = "# a note\n" + base.replace("tags: [tooling]", "tags: [<private>m</private>]")
    expected = file_merge.merge_texts_or_text(base, ours, theirs)
    calls: list[str] = []
    detect = redact._detect

    def counted(text: str) -> list[redact._Hit]:
        calls.append(text)
        return detect(text)

    monkeypatch.setattr(redact, "_detect", counted)
    result = file_merge.merge_texts_or_text(base, ours, theirs)
    assert result.fallback and result.text == expected.text
    assert result.notices == expected.notices and TAIL not in result.text
    assert len(calls) == 2


# ---------------------------------------------------------------- what a write puts in git

def _git_texts(repo: Path) -> str:
    """Every commit message and ref name of the repo (what a push sends beside files)."""
    log = git_proc("log", "--all", "--format=%B", cwd=repo).stdout
    refs = git_proc("for-each-ref", "--format=%(refname)", cwd=repo).stdout
    return log + refs


def test_submit_masks_the_commit_message_and_the_branch_name(repo: Path,
                                                              memex_home: Path) -> None:
    """redteam34: `submit --message` went into the commit raw and `--branch-name` became
    a ref raw (and was printed in the push hints): a token typed there left the machine
    with the next push, though the memory itself was masked. Both are masked as a write
    masks, with a notice."""
    mid = invoke_json("capture", "--scope", "project", "deploy note")["id"]
    result = invoke("submit", mid, "--message", "add the key " + SECRET,
                    "--branch-name", "k-" + SECRET)
    assert result.exit_code == 0, result.output + result.stderr
    assert TAIL not in result.stdout + result.stderr
    assert "masked" in result.stderr
    texts = _git_texts(repo)
    assert TAIL not in texts
    assert "add the key " + SECRET[:4] in texts and "refs/heads/k-" + SECRET[:4] in texts


def _teammates_instruction(repo: Path) -> str:
    """An approved project instruction holding a raw token, as a teammate's commit
    (made without the hook) brings it: files that arrive by git are not rewritten."""
    from tests.helpers.memfiles import commit_all, memory, write

    path = write(repo, memory(
        title="deploy with " + SECRET, body="the token is " + SECRET,
        role="instruction", instruction_state="approved", trust_level="reviewed",
        review_state="published", approved_by="local:lead"))
    commit_all(repo, "teammate")
    return path.stem


def test_distill_writes_no_secret_into_agents_md(repo: Path) -> None:
    """redteam34: `distill --write` copied an approved instruction's title and body into
    AGENTS.md as the file holds them: a token in a teammate's memory (scanned and
    reported by verify, never rewritten) was written raw into a Markdown file git-memex
    writes and the team commits. Rule 5: every write git-memex makes to Markdown masks."""
    mid = _teammates_instruction(repo)
    shown = invoke("distill")
    assert shown.exit_code == 0, shown.output
    assert TAIL not in shown.stdout + shown.stderr
    assert invoke("distill", "--write").exit_code == 0
    agents = (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert mid in agents and "the token is " + SECRET[:4] in agents
    assert TAIL not in agents


def test_export_writes_no_secret(repo: Path, tmp_path: Path) -> None:
    """redteam34: `export` wrote each file's text as it is on disk, so a token in a
    teammate's memory went raw into the archive (a file git-memex writes, made to be
    carried elsewhere). The archive holds the text masked as a write stores it, signed
    as written."""
    mid = _teammates_instruction(repo)
    out = tmp_path / "out.jsonl"
    result = invoke("export", "-o", str(out))
    assert result.exit_code == 0, result.output
    archive = out.read_text(encoding="utf-8")
    assert mid in archive and TAIL not in archive and SECRET[:4] in archive
    assert TAIL not in result.stdout + result.stderr


def test_review_reports_a_teammates_token_without_echoing_it(repo: Path) -> None:
    """redteam34 (item 3's sibling): `git memex review` (run in CI, posted as the PR's
    comment) printed a teammate's title holding a token whole beside its "unmasked
    github-token at line N" finding: the CI log and the comment carried the secret the
    finding was about. Text, markdown, JSON and the posted body are masked."""
    git_proc("checkout", "-q", "-b", "topic", cwd=repo)
    mid = _teammates_instruction(repo)
    for fmt in ("text", "markdown", "json"):
        result = invoke("review", "main...HEAD", "--format", fmt)
        assert result.exit_code == 1, result.output  # the secret blocks
        shown = result.stdout + result.stderr
        assert mid[:10] in shown and "github-token" in shown, fmt
        assert TAIL not in shown and f"deploy with {SECRET[:4]}" in shown, fmt


def test_init_refuses_a_folder_name_holding_a_secret(repo: Path) -> None:
    """redteam35 (left by redteam34): `init --dir TOKEN` wrote `memex.dir = TOKEN` into
    .memexconfig and the attributes line, made the folder (all committed, every memory
    file's path then holds it) and printed it; `--dir ../TOKEN`'s refusal quoted it raw.
    A folder name is not masked (the team's clones would read another folder): refused,
    quoted masked, nothing written."""
    before = {p: p.read_bytes() for p in stored_files(repo)}
    for name in (SECRET, "notes/" + SECRET, "../" + SECRET):
        result = invoke("init", "--dir", name, "--yes")
        assert result.exit_code == 2, (name, result.output)
        assert TAIL not in result.stdout + result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in stored_files(repo)} == before
    assert not [p for p in repo.iterdir() if TAIL in p.name]


def test_init_dir_with_a_leading_slash_makes_the_folder_in_the_repo(repo: Path,
                                                                    tmp_path: Path) -> None:
    """redteam35: `init --dir /notes` passed the check (it strips slashes) but used the
    raw name: the folder (and README.md) was made at the filesystem's root, and
    .memexconfig said `/notes`, which every reader takes as `notes`."""
    name = str(tmp_path / "made")  # where it lands if the slash is kept: in tmp_path
    result = invoke("init", "--dir", name, "--yes")
    assert result.exit_code == 0, result.output
    assert not Path(name).exists()
    assert (repo / name.strip("/") / "README.md").is_file()
    config = git_proc("config", "--file", str(repo / ".memexconfig"), "memex.dir", cwd=repo)
    assert config.stdout.strip() == name.strip("/")


def test_submit_masks_a_branch_name_made_from_the_pattern(repo: Path,
                                                           memex_home: Path) -> None:
    """redteam35: a token in memex.branchPattern (a setting, possibly from the committed
    .memexconfig) became `submit --branch`'s ref raw, pushed with it; a typed
    --branch-name was masked."""
    git_proc("config", "memex.branchPattern", "memex/" + SECRET + "/{date}", cwd=repo)
    mid = invoke_json("capture", "--scope", "project", "deploy note")["id"]
    result = invoke("submit", mid, "--branch")
    assert result.exit_code == 0, result.output + result.stderr
    assert TAIL not in result.stdout + result.stderr
    texts = _git_texts(repo)
    assert TAIL not in texts and "refs/heads/memex/" + SECRET[:4] in texts


def test_import_and_export_paths_holding_a_secret_are_not_echoed(repo: Path,
                                                                 tmp_path: Path) -> None:
    """redteam35 (left by redteam34): `export -o PATH` printed PATH and `import PATH` of
    a missing one quoted it, raw; an imported entry's history names its archive."""
    import json

    folder = tmp_path / SECRET
    folder.mkdir()
    archive = folder / (SECRET + ".jsonl")
    line = {"front_matter": {"id": new_ulid(), "scope": "project"}, "body": "body text"}
    archive.write_text(json.dumps(line) + "\n")
    for args in (("import", str(archive)), ("import", str(folder / "missing")),
                 ("export", "-o", str(folder / "out.jsonl"))):
        result = invoke(*args)
        assert result.exit_code in (0, 2), (args, result.output)
        assert TAIL not in result.stdout + result.stderr, args
    assert not [p for p in stored_files(repo, homes.workspace().outbox_dir)
                if TAIL in p.read_text(encoding="utf-8", errors="replace")]
