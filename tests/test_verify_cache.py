"""verify's cached verdicts: a warm run reads only files whose bytes it has not judged
under the same rules; a verdict is never taken for other bytes or other rules."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from memex.storage import homes
from memex.workflows import verify
from tests.helpers.memfiles import memory, write
from tests.helpers.spies import record_calls

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _run() -> dict[str, int]:
    report = verify.verify(homes.workspace())
    return {rule: len(items) for rule, items in report.by_rule().items()}


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The memory files verify judges from now on (their bytes read, parsed and
    scanned), by name."""
    seen: list[str] = []
    real = verify._verdict

    def counting(data: bytes) -> object:
        head = data.decode().split("id: ", 1)
        seen.append(f"{head[1].split(chr(10), 1)[0]}.md" if len(head) == 2 else "(no id)")
        return real(data)

    monkeypatch.setattr(verify, "_verdict", counting)
    return seen


def test_a_warm_run_reads_only_changed_files(repo: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    clean = write(repo, memory(body="a plain note"))
    leaky = write(repo, memory(body=f"the token is {TOKEN}"))
    personal = write(repo, memory(body="my own note", scope="personal", repo_id=None))
    assert _run() == {"secret": 1, "personal": 1}
    reads = _reads(monkeypatch)
    assert _run() == {"secret": 1, "personal": 1}  # the same verdicts...
    assert reads == []  # ...from the cache: no file read
    clean.write_text(clean.read_text().replace("a plain note", f"now {TOKEN} too"))
    personal.unlink()
    assert _run() == {"secret": 2}
    assert reads == [clean.name]  # only the changed file
    assert leaky.exists()


def test_a_verdict_of_other_rules_is_not_taken(repo: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(repo, memory(body=f"the token is {TOKEN}"))
    assert _run() == {"secret": 1}
    reads = _reads(monkeypatch)
    monkeypatch.setattr(verify, "rules_version", lambda: "another detector")
    assert _run() == {"secret": 1}
    assert reads == [path.name]  # judged again under the other rules
    monkeypatch.setattr(verify, "rules_version", lambda: None)  # unreadable sources
    assert _run() == {"secret": 1}
    assert reads == [path.name, path.name]  # no cache at all


@pytest.mark.parametrize("detector", ["secret_rules", "bare_secrets"])
def test_the_rules_version_follows_the_detector_source(
        detector: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    rules = importlib.import_module(f"memex.core.{detector}")

    before = verify.rules_version()
    copy = tmp_path / f"{detector}.py"
    copy.write_text(Path(str(rules.__file__)).read_text() + "\n# one more rule\n")
    monkeypatch.setattr(rules, "__file__", str(copy))
    after = verify.rules_version()
    assert before is not None and after is not None and before != after


def test_same_bytes_under_two_names_keep_their_own_file_rules(repo: Path) -> None:
    first = write(repo, memory(body="one text"))
    twin = first.with_name("01ARZ3NDEKTSV4RRFFQ69G5FAV.md")
    twin.write_bytes(first.read_bytes())
    for _ in range(2):  # cold, then from the cache
        report = verify.verify(homes.workspace())
        assert {(f.rule, f.file) for f in report.failures} == {
            ("file-name", f".memex/{twin.name}")}


def test_a_cold_index_is_built_from_verify_s_own_parse(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(3):
        write(repo, memory(body=f"note {n}"))
    parses: list[int] = []
    from memex.core import frontmatter

    real = frontmatter.parse
    monkeypatch.setattr(frontmatter, "parse", lambda text: parses.append(1) or real(text))
    assert _run() == {}
    assert len(parses) == 3  # each file parsed once: the index took verify's parse


def test_a_run_from_cached_verdicts_reports_what_a_run_without_them_does(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule a verdict feeds (parse, file-name, personal, private, secret, size,
    chain, link), plain and chained files mixed: the cached columns and details give
    the report that judging every file gives."""
    old = memory(body="the old way")
    new = memory(body="the new way", supersedes=old.id)  # half-written chain
    gone = memory(body="superseded, says by nobody", status="superseded")
    rival = memory(body="a rival", superseded_by=new.id, related=[old.id])
    kept = memory(body="kept over the rival", supersedes=rival.id)
    for m in (old, new, gone, rival, kept,
              memory(body="links nowhere", related=["01ARZ3NDEKTSV4RRFFQ69G5FAX"],
                     extends=["01ARZ3NDEKTSV4RRFFQ69G5FAY"]),
              memory(body="a private one", visibility="private"),
              memory(body="mine", scope="personal", repo_id=None),
              memory(body=f"leaks {TOKEN}", related=[old.id]),
              memory(body="x" * 70_000), memory(body="plain")):
        write(repo, m)
    misnamed = write(repo, memory(body="misnamed"))
    misnamed.rename(misnamed.with_name("01ARZ3NDEKTSV4RRFFQ69G5FAV.md"))
    (repo / ".memex" / "01ARZ3NDEKTSV4RRFFQ69G5FAW.md").write_text("not a memory\n")

    def failures() -> list[tuple[str, str, str, int | None]]:
        report = verify.verify(homes.workspace())
        return sorted((f.rule, f.file, f.message, f.line) for f in report.failures)

    cold, first = failures(), failures()
    reads = _reads(monkeypatch)
    assert failures() == first == cold and reads == []
    assert {rule for rule, *_ in cold} == {"parse", "file-name", "personal", "private",
                                           "secret", "size", "chain", "link"}
    monkeypatch.setattr(verify, "rules_version", lambda: None)  # no cache: judge all
    assert failures() == cold and len(reads) == 13


def test_a_warm_index_with_no_verdicts_keeps_no_parse(repo: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """After an upgrade (every verdict of other rules) with the index warm, each file is
    read and judged again, but its parse is not kept for an index build that does not
    happen: at 100,000 files those parses held 1.2 GB."""
    from memex.index import build

    for i in range(3):
        write(repo, memory(body=f"note {i}"))
    assert _run() == {}  # the index and the verdicts warm
    monkeypatch.setattr(verify, "rules_version", lambda: "another detector")
    made = record_calls(monkeypatch, build, "Known")
    reads = _reads(monkeypatch)
    assert _run() == {}
    assert len(reads) == 3 and made == []


def test_verify_lists_the_memory_folder_once_for_its_files_and_special_ones(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ids and the entries that are not regular files come from one listing (the
    index's walk lists it from a descriptor, apart): a second listing of a 100,000-file
    folder, sorted, cost ~0.3 s."""
    import os

    from memex.storage import store

    path = write(repo, memory(body="a plain note"))
    (path.parent / "01ARZ3NDEKTSV4RRFFQ69G5FAV.md").symlink_to(path)
    listed: list[str] = []
    real = os.scandir

    def counting(target: Any = ".") -> Any:
        if not isinstance(target, int):
            listed.append(os.fspath(target))
        return real(target)

    monkeypatch.setattr(store.os, "scandir", counting)
    assert _run() == {"parse": 1}
    assert listed.count(str(path.parent)) == 1
