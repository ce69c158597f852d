"""export / import: byte-identical round trips, and nothing lost or overwritten."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from memex.core import frontmatter
from memex.core.ulid import new_ulid
from tests.helpers import git, invoke, invoke_json


def to_repo(repo: Path, out: dict[str, str], review_state: str) -> Path:
    src = Path(out["path"])
    target = repo / ".memex" / src.name
    target.parent.mkdir(exist_ok=True)
    target.write_text(src.read_text().replace("review_state: draft",
                                              f"review_state: {review_state}"))
    src.unlink()
    return target


def memory_files(*roots: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*.md")):
            out[f"{root.name}/{path.relative_to(root)}"] = path.read_bytes()
    return out


def fresh_clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                key_from: Path | None = None) -> tuple[Path, Path]:
    """Another machine: a new home (with the old home's export key when given, as a
    person restoring their own export copies it) and a clone of the same project."""
    home = tmp_path / "fresh-home"
    if key_from is not None:
        home.mkdir()
        (home / "export.key").write_bytes((key_from / "export.key").read_bytes())
    monkeypatch.setenv("GIT_MEMEX_HOME", str(home))
    clone = tmp_path / "clone"
    clone.mkdir()
    git("init", "-q", "-b", "main", cwd=clone)
    git("remote", "add", "origin", "https://github.com/Acme/App", cwd=clone)  # same project
    monkeypatch.chdir(clone)
    return home, clone


def test_round_trip_is_byte_identical(repo: Path, memex_home: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-01T00:00:00Z")
    mine = invoke_json("capture", "--scope", "personal", "--tag", "me", "I review in the morning")
    hand = Path(mine["path"])
    hand.write_text(hand.read_text().replace("---\nid:", "---\n# my note\nid:", 1)
                    .replace("via: cli\n", "via: cli\nfuture_key: [1, 2]\n"))
    invoke_json("capture", "--scope", "personal", "Old personal fact")
    retired = invoke_json("capture", "--scope", "personal", "Retracted personal fact")
    invoke_json("forget", retired["id"])
    invoke_json("capture", "An outbox draft about caching")
    shared = invoke_json("capture", "--type", "decision", "We use pnpm")
    to_repo(repo, shared, "published")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-11-05T00:00:00Z")
    invoke_json("status", shared["id"], "deprecated", "--note", "moving to bun")
    approved = invoke_json("capture", "Releases are cut on Tuesdays")
    to_repo(repo, approved, "approved")
    archive = tmp_path / "memories.jsonl"
    assert invoke("export", "--include-personal", "--output", str(archive)).exit_code == 0
    outbox = memex_home / "outbox"
    before = memory_files(memex_home / "personal", outbox, repo / ".memex")
    assert len(before) == 6

    home, clone = fresh_clone(tmp_path, monkeypatch, key_from=memex_home)
    report = invoke_json("import", str(archive))
    assert report["ok"] and len(report["imported"]) == 6
    after = memory_files(home / "personal", home / "outbox", clone / ".memex")
    assert after == before  # every file, byte for byte
    again = invoke_json("import", str(archive))
    assert again["imported"] == [] and len(again["unchanged"]) == 6
    statuses = {m["id"]: m["status"] for m in invoke_json("list", "--include", "all")}
    assert statuses[retired["id"]] == "retracted" and statuses[shared["id"]] == "deprecated"


def test_personal_left_out_unless_asked(repo: Path) -> None:
    invoke_json("capture", "--scope", "personal", "private thought")
    invoke_json("capture", "project draft")
    lines = invoke("export").stdout.splitlines()
    manifest = json.loads(lines[0])
    assert manifest["format"] == "git-memex-export" and manifest["count"] == 1
    assert [json.loads(x)["home"] for x in lines[1:]] == ["outbox"]
    assert "private thought" not in "".join(lines)
    full = invoke("export", "--include-personal").stdout.splitlines()
    assert {json.loads(x)["home"] for x in full[1:]} == {"outbox", "personal"}


def entry(text: str, name: str, home: str = "personal") -> str:
    return json.dumps({"home": home, "name": name, "text": text})


def make_text(body: str = "hello", memory_id: str | None = None) -> tuple[str, str]:
    mid = memory_id or new_ulid()
    return mid, (f"---\nid: {mid}\nschema_version: 2\nrevision: 1\nscope: personal\n"
                 f"created_at: 2026-11-01T00:00:00Z\nupdated_at: 2026-11-01T00:00:00Z\n---\n"
                 f"\n{body}\n")


def test_bad_entries_are_refused_and_the_rest_imported(repo: Path, memex_home: Path,
                                                       tmp_path: Path) -> None:
    good_id, good = make_text("a good one")
    _, evil = make_text("traversal")
    huge_id, huge = make_text("x" * (70 * 1024))
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    secret_id, secret = make_text(f"the token is {token}")
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join([
        json.dumps({"format": "git-memex-export", "version": 1}),
        entry(good, f"{good_id}.md"),
        "{not json",
        entry(evil, "../../etc/evil.md"),
        entry(evil, "sub/dir.md"),
        entry(huge, f"{huge_id}.md"),
        entry(secret, f"{secret_id}.md"),
        json.dumps([1, 2]),
        entry(good, f"{good_id}.md", home="nowhere"),
        json.dumps({"home": "personal", "name": "x.md"}),
    ]) + "\n")
    result = invoke("import", str(archive), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert {i["id"] for i in report["imported"]} == {good_id, secret_id}
    reasons = " | ".join(r["reason"] for r in report["rejected"])
    assert "not a JSON line" in reasons and "refused file name" in reasons
    assert "over the" in reasons and "unknown home" in reasons
    assert len(report["rejected"]) == 7
    assert not (tmp_path / "etc").exists() and not list(memex_home.rglob("evil*"))
    saved = (memex_home / "personal" / f"{secret_id}.md").read_text()
    assert token not in saved and "ghp_" in saved  # redaction ran


def test_differing_memory_is_a_conflict_never_overwritten(repo: Path, memex_home: Path,
                                                          tmp_path: Path) -> None:
    mid, text = make_text("version one")
    folder = memex_home / "personal"
    folder.mkdir(parents=True)
    (folder / f"{mid}.md").write_text(text)
    _, other = make_text("version two", mid)
    archive = tmp_path / "in.jsonl"
    archive.write_text(entry(other, f"{mid}.md") + "\n")
    result = invoke("import", str(archive))
    assert result.exit_code == 1 and "conflict" in result.stderr
    assert (folder / f"{mid}.md").read_text() == text


def test_not_an_export_and_missing_file(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"format": "something-else"}) + "\n")
    assert invoke("import", str(other)).exit_code == 2
    assert invoke("import", str(tmp_path / "nope.jsonl")).exit_code == 2


OPEN_MEMEX = """---
id: 01K6AB3XZQ7WVD9J1M2N4P5Q6R7
schema_version: 2
revision: 1
scope: project
visibility: internal
type: decision
role: knowledge
importance: normal
instruction_state: null
trust_level: reviewed
status: active
review_state: approved
source: user
confidence: high
created_by: github:stoneskin
promoted_by: null
approved_by: null
via: cli
created_at: "2026-09-26T12:00:00Z"
updated_at: "2026-09-26T12:00:00Z"
superseded_by: null
expires_at: null
repo_id: git-origin-sha256:9f2c
language: en
tags: [auth, oauth]
paths: ["src/auth/**"]
---
We use OAuth device flow for the CLI.
"""


def test_open_memex_folder(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "other-project" / ".ai" / "open-memex"
    folder.mkdir(parents=True)
    (folder / "01K6AB3XZQ7WVD9J1M2N4P5Q6R7.md").write_text(OPEN_MEMEX)
    (folder / "README.md").write_text("# not a memory\n")
    (folder / "broken.md").write_text("no front matter\n")
    result = invoke("import", str(tmp_path / "other-project"), "--json")
    assert result.exit_code == 1  # the broken file is reported
    report = json.loads(result.stdout)
    assert len(report["imported"]) == 1 and len(report["rejected"]) == 1
    path = Path(report["imported"][0]["path"])
    assert path.parent.parent.name == "outbox"  # reviewed elsewhere: a draft here (14.7)
    assert not (repo / ".memex").exists()
    memory, _ = frontmatter.load(path.read_text())
    assert memory.source == "user" and memory.via == "cli"
    assert memory.extra["imported_id"] == "01K6AB3XZQ7WVD9J1M2N4P5Q6R7"  # not a ULID
    assert memory.review_state == "draft" and memory.tags == ["auth", "oauth"]
    assert memory.trust_level == "untrusted"
    assert memory.review_history[-1]["note"] == (
        "imported from folder other-project; was approved, trust reviewed")
    assert memory.extra["imported_repo_id"] == "git-origin-sha256:9f2c"
    assert memory.body == "We use OAuth device flow for the CLI."


def test_import_dry_run_writes_nothing(repo: Path, memex_home: Path, tmp_path: Path) -> None:
    mid, text = make_text("dry run me")
    archive = tmp_path / "in.jsonl"
    archive.write_text(entry(text, f"{mid}.md") + "\n")
    report = invoke_json("import", str(archive), "--dry-run")
    assert report["dry_run"] and [i["id"] for i in report["imported"]] == [mid]
    assert not (memex_home / "personal" / f"{mid}.md").exists()


def project_text(review_state: str, visibility: str = "internal",
                 repo_id: str = "git-origin-sha256:none") -> tuple[str, str]:
    mid = new_ulid()
    return mid, (f"---\nid: {mid}\nschema_version: 2\nrevision: 1\nrepo_id: {repo_id}\n"
                 "scope: project\n"
                 f"visibility: {visibility}\nreview_state: {review_state}\n"
                 f"created_at: 2026-11-01T00:00:00Z\nupdated_at: 2026-11-01T00:00:00Z\n---\n"
                 f"\nproject memory {mid}\n")


def signed_entry(text: str, name: str, home: str = "personal") -> str:
    """An archive line as this machine's own export writes it."""
    from memex.storage import homes
    from memex.workflows import portable

    key = portable.export_key(homes.workspace(), create=True)
    assert key is not None
    data = json.loads(entry(text, name, home=home))
    data["signature"] = portable.sign(key, home, name, text)
    return json.dumps(data)


def test_import_keeps_private_and_drafts_out_of_the_repo(repo: Path, memex_home: Path,
                                                         tmp_path: Path) -> None:
    from memex.storage import homes

    rid = homes.workspace().repo_id
    private_id, private = project_text("approved", visibility="private", repo_id=rid)
    draft_id, draft = project_text("draft", repo_id=rid)
    private_draft_id, private_draft = project_text("draft", visibility="private", repo_id=rid)
    shared_id, shared = project_text("approved", repo_id=rid)
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join(signed_entry(text, f"{mid}.md", home="repo") for mid, text in [
        (private_id, private), (draft_id, draft), (private_draft_id, private_draft),
        (shared_id, shared)]) + "\n")
    result = invoke("import", str(archive), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    landed = {i["id"]: Path(i["path"]).parent for i in report["imported"]}
    outbox = next((memex_home / "outbox").iterdir())
    assert landed == {draft_id: outbox, private_draft_id: outbox, shared_id: repo / ".memex"}
    assert [r["reason"] for r in report["rejected"]] == [
        f"{private_id} is visibility: private with review_state approved: private memories "
        "never enter the shared (repo) folder; not imported"]
    assert sorted(p.name for p in (repo / ".memex").iterdir()) == [f"{shared_id}.md"]
    assert (outbox / f"{draft_id}.md").read_text() == draft  # bytes kept
    assert any("outbox" in n for n in report["notices"])


def test_import_refuses_an_entry_whose_sha256_does_not_match(repo: Path, memex_home: Path,
                                                             tmp_path: Path) -> None:
    good_id, good = make_text("checksum fine")
    bad_id, bad = make_text("checksum wrong")
    lines = [json.dumps({"home": "personal", "name": f"{good_id}.md", "text": good,
                         "sha256": hashlib.sha256(good.encode()).hexdigest()}),
             json.dumps({"home": "personal", "name": f"{bad_id}.md", "text": bad,
                         "sha256": hashlib.sha256(b"something else").hexdigest()})]
    archive = tmp_path / "in.jsonl"
    archive.write_text("\n".join(lines) + "\n")
    result = invoke("import", str(archive))
    assert result.exit_code == 1
    assert "refused line 2: sha256" in result.stderr and "does not match" in result.stderr
    assert (memex_home / "personal" / f"{good_id}.md").is_file()
    assert not (memex_home / "personal" / f"{bad_id}.md").exists()


def test_export_leaves_private_project_drafts_out(repo: Path) -> None:
    secret = invoke_json("capture", "--private", "my private project note")
    open_one = invoke_json("capture", "a normal project draft")
    ids = [json.loads(x)["id"] for x in invoke("export").stdout.splitlines()[1:]]
    assert ids == [open_one["id"]]
    for flag in ("--include-personal", "--include-private"):
        lines = invoke("export", flag).stdout.splitlines()[1:]
        assert secret["id"] in {json.loads(x)["id"] for x in lines}


def test_foreign_private_reviewed_memory_lands_as_an_outbox_draft(repo: Path, memex_home: Path,
                                                                  tmp_path: Path) -> None:
    folder = tmp_path / "other" / ".ai" / "open-memex"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text(OPEN_MEMEX.replace("visibility: internal",
                                                    "visibility: private"))
    report = invoke_json("import", str(tmp_path / "other"))
    path = Path(report["imported"][0]["path"])
    assert path.parent.parent == memex_home / "outbox" and not (repo / ".memex").exists()
    memory, _ = frontmatter.load(path.read_text())
    assert memory.review_state == "draft" and memory.visibility == "private"
    assert "was approved" in memory.review_history[-1]["note"]
