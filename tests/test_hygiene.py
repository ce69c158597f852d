"""Retention decay, access statistics from the usage log, near-duplicates, health."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memex.core import model
from memex.core.ulid import new_ulid
from memex.storage import homes, usage
from memex.workflows import hygiene, pairs
from tests.helpers import git, invoke, invoke_json

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def mem(**kw: object) -> model.Memory:
    base: dict[str, object] = {"id": new_ulid(), "scope": "personal",
                               "created_at": "2026-06-01T00:00:00Z",
                               "updated_at": "2026-06-01T00:00:00Z"}
    base.update(kw)
    return model.Memory(**base)  # type: ignore[arg-type]


def test_retention_decays_and_is_strengthened() -> None:
    plain = hygiene.retention(mem(), 0, "", NOW)
    assert plain.days_unused == pytest.approx(183, abs=1)
    assert plain.value == pytest.approx(2.718281828 ** (-183 / 30), rel=0.01)
    assert plain.state == "cleanup"
    recent = hygiene.retention(mem(), 0, "2026-11-30T00:00:00Z", NOW)
    assert recent.state == "active" and recent.value > 0.95
    used = hygiene.retention(mem(), 12, "", NOW)
    assert used.value > plain.value
    important = hygiene.retention(mem(importance="high"), 0, "", NOW)
    assert important.value > plain.value and important.value >= 0.3
    pinned = hygiene.retention(mem(pinned=True), 0, "", NOW)
    assert pinned.value >= 0.5 and pinned.state == "aging"


def test_access_stats_from_usage_log(repo: Path, memex_home: Path) -> None:
    ws = homes.workspace()
    usage.record(ws.home, ws.repo_id, "read", ["A1", "A2"], usage.DEFAULT_MAX_BYTES)
    usage.record(ws.home, ws.repo_id, "search", ["A1"], usage.DEFAULT_MAX_BYTES)
    usage.record(ws.home, ws.repo_id, "write", ["A1"], usage.DEFAULT_MAX_BYTES)  # not an access
    usage.record(ws.home, ws.repo_id, "list", ["A1"], usage.DEFAULT_MAX_BYTES)  # nor a listing
    usage.record(ws.home, "git-origin-sha256:other", "read", ["A3", "P1"],
                 usage.DEFAULT_MAX_BYTES)
    (ws.personal_dir).mkdir(parents=True)
    (ws.personal_dir / "P1.md").write_text("x")
    with usage.log_path(ws.home).open("a") as f:
        f.write("not json\n")
    stats = hygiene.access_stats(ws)
    assert stats["A1"][0] == 2 and stats["A2"][0] == 1
    assert "A3" not in stats  # another project's memory
    assert stats["P1"][0] == 1  # personal follows its owner
    assert isinstance(stats["A1"][1], str) and stats["A1"][1].endswith("Z")


def test_near_duplicates_exact_join() -> None:
    texts = ["use pnpm for installs in this repo always",
             "use pnpm for installs in this repo always please",
             "something else entirely about docker",
             "use pnpm for installs in this repo"]
    pairs = {(a, b) for a, b, _ in hygiene.near_duplicates(texts)}
    assert pairs == {(0, 1), (0, 3)}


def test_near_duplicates_words_any_script() -> None:
    # the ASCII shortcut (lower, then split) and the general path agree on the words
    texts = ["İstanbul Straße café NOTE one two three", "istanbul straße CAFÉ note one two three",
             "USE pnpm FOR installs", "use pnpm for installs"]
    assert pairs.word_set(texts[2]) == pairs.word_set(texts[3])
    assert "i̇stanbul" in pairs.word_set(texts[0])  # per word, as before: one token
    found = {(a, b) for a, b, _ in hygiene.near_duplicates(texts)}
    assert (2, 3) in found


def test_gc_pause_restores_the_collector() -> None:
    import gc

    from memex.core import gcpause

    assert gc.isenabled()
    with gcpause.paused():
        assert not gc.isenabled()
        with gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still holds it
    assert gc.isenabled()
    gc.disable()
    try:
        with gcpause.paused():
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_rot_candidates_given_retentions_match(tmp_path: Path) -> None:
    from memex.storage import store

    home = store.Home("personal", tmp_path)
    old = "2026-01-01T00:00:00Z"
    items = [store.Loaded(mem(body=b, created_at=old, updated_at=old, pinned=p), tmp_path / "x.md",
                          home)
             for b, p in (("unused for a long time now", False), ("ok", False),
                          ("pinned and unused for long", True))]
    live = hygiene.offerable(items)
    marks = hygiene.retentions((i.memory for i in live), {}, NOW)
    given = hygiene.rot_candidates(items, {}, NOW, [], marks)
    computed = hygiene.rot_candidates(items, {}, NOW, [])
    assert [c.as_json() for c in given] == [c.as_json() for c in computed]
    assert {c.group for c in computed} == {"obsolete", "trivial"}


def test_health_counts_the_rot_clean_offers_with_pinned_kept(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-01-01T00:00:00Z")
    invoke_json("capture", "unused for a long time now, and then some more words")
    pinned = invoke_json("capture", "pinned and unused for a long time, kept on purpose")
    invoke_json("capture", "ok")
    invoke_json("pin", pinned["id"])
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T00:00:00Z")
    report = invoke_json("health")
    offered = {c["id"] for c in invoke_json("clean")["candidates"]}
    assert len(offered) >= 2  # the unused one and the trivial "ok"
    assert pinned["id"] not in offered
    assert report["rot_candidates"] == len(offered)  # health counts what clean offers


def test_health_json(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-06-01T00:00:00Z")
    invoke_json("capture", "--tag", "flags", "--confidence", "high",
                "Enable the checkout flag in staging")
    invoke_json("capture", "--tag", "flags", "Disable the checkout flag in staging")
    invoke_json("capture", "--scope", "personal", "ok")
    monkeypatch.setenv("GIT_MEMEX_NOW", "2026-12-01T00:00:00Z")
    report = invoke_json("health")
    assert report["total"] == 3
    assert report["by_scope"] == {"project": 2, "personal": 1}
    assert report["by_status"] == {"active": 3}
    assert report["outbox"] == 2 and report["open_conflicts"] == 1
    assert report["rot_candidates"] >= 1
    parts = report["parts"]
    assert parts["active_ratio"] == 1.0
    assert parts["conflict_ratio"] == pytest.approx(2 / 3, abs=0.01)
    assert 0 <= report["score"] <= 100 and report["grade"]
    steps = " ".join(report["next_steps"])
    assert "git memex conflicts" in steps and "git memex clean" in steps
    assert "git memex submit" in steps
    assert "git memex pull" not in steps  # never fetched is not stale (freshness's one rule)
    text = invoke("health")
    assert text.exit_code == 0 and "health " in text.stdout and "next:" in text.stdout


def test_pull_staleness_from_fetch_head(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fetch_head = repo / ".git" / "FETCH_HEAD"
    fetch_head.write_text("")
    old = time.time() - 10 * 86400
    os.utime(fetch_head, (old, old))
    report = invoke_json("health")
    assert report["pull"]["stale"] is True and report["pull"]["age_days"] >= 9.9
    git("config", "memex.staleAfter", "2w", cwd=repo)
    assert invoke_json("health")["pull"]["stale"] is False


def test_health_empty_and_outside_git(nogit_dir: Path) -> None:
    report = invoke_json("health")
    assert report["total"] == 0 and report["score"] == 100
    assert report["pull"]["has_remote"] is False


def test_health_reports_v1_files(repo: Path, memex_home: Path) -> None:
    folder = memex_home / "personal"
    folder.mkdir(parents=True)
    (folder / f"{new_ulid()}.md").write_text("---\nid: x\nscope: user\n---\nold\n")
    report = invoke_json("health")
    assert report["v1_files"] == 1
    assert any("git memex migrate" in s for s in report["next_steps"])
    assert json.dumps(report)


def test_health_cache_follows_the_files(repo: Path) -> None:
    a = invoke_json("capture", "--tag", "flags", "Enable the search flag")
    first = invoke_json("health")
    cache = repo / ".git" / "memex" / "hygiene-cache.json"
    assert cache.is_file() and first["open_conflicts"] == 0
    invoke_json("capture", "--tag", "flags", "Disable the search flag")
    assert invoke_json("health")["open_conflicts"] == 1  # a new file: pairs redone
    invoke_json("status", a["id"], "archived")
    second = invoke_json("health")
    assert second["by_status"] == {"active": 1, "archived": 1}
    assert second["open_conflicts"] == 0
    cache.write_text("{broken")
    assert invoke_json("health")["by_status"] == {"active": 1, "archived": 1}
    Path(a["path"]).write_text("---\nid: [broken\n---\n")
    assert invoke_json("health")["quarantined"] == 1


def test_incremental_pairs_match_a_full_recompute(repo: Path) -> None:
    from memex.storage import store
    from memex.workflows import conflicts

    invoke_json("capture", "--tag", "ci", "CI runs on Node 18")
    b = invoke_json("capture", "--tag", "ci", "Run the linter with ruff check before commits")
    invoke_json("health")  # fills the cache
    invoke_json("capture", "--tag", "ci", "CI runs on Node 20")
    invoke_json("capture", "--tag", "ci", "Run the linter with ruff check before commits now")
    invoke_json("status", b["id"], "deprecated")
    incremental = invoke_json("health")
    (repo / ".git" / "memex" / "hygiene-cache.json").unlink()
    full = invoke_json("health")
    assert incremental == full and full["open_conflicts"] == 1 and full["rot_candidates"] == 1
    items, _ = store.read_all(homes.workspace())
    memories = [i.memory for i in items]
    touched = {m.id for m in memories[:2]}
    earlier = [c for c in conflicts.find(memories) if not touched & {c.a, c.b}]
    assert [(c.a, c.b) for c in conflicts.update(earlier, memories, touched)] == \
        [(c.a, c.b) for c in conflicts.find(memories)]


def test_health_counts_private_drafts_apart(repo: Path) -> None:
    invoke_json("capture", "A draft to share")
    invoke_json("capture", "--private", "My own note about this repo")
    invoke_json("capture", "--private", "Another private note")
    report = invoke_json("health")
    assert report["outbox"] == 3 and report["outbox_private"] == 2
    assert "git memex submit: 1 draft(s) in the outbox" in report["next_steps"]
    text = invoke("health").stdout
    assert "outbox drafts 3 (2 private, never submitted)" in text
    assert "git memex submit: 1 draft(s)" in text
    shareable = [m for m in invoke_json("list", "--scope", "project")
                    if m["title"] == "A draft to share"]
    assert invoke("forget", shareable[0]["id"], "--hard", "--yes").exit_code == 0
    assert not any("submit" in s for s in invoke_json("health")["next_steps"])


def test_update_duplicate_pairs_matches_a_full_pass(tmp_path: Path) -> None:
    from memex.storage import store

    texts = ["use pnpm for installs in this repo always", "use pnpm for installs in this repo",
             "use pnpm for installs in this repo always please", "docker compose for local dev",
             "docker compose for the local dev setup", "short"]
    items = [store.Loaded(mem(body=t, scope="project" if n < 3 else "personal"),
                          tmp_path / f"{n}.md", store.Home("personal", tmp_path))
             for n, t in enumerate(texts)]
    full = hygiene.duplicate_pairs(items)
    assert full  # the case is not empty
    for changed in items:
        earlier = [p for p in full if changed.id not in p[:2]]
        again = hygiene.update_duplicate_pairs(earlier, items, {changed.id})
        assert {frozenset(p[:2]) for p in again} == {frozenset(p[:2]) for p in full}


def _trivial_by_the_full_check(memory: model.Memory) -> str | None:
    """trivial_reason as it was before its prefilter: the reference."""
    text = " ".join(memory.body.split())
    if len(text) < hygiene.TINY_CHARS and hygiene.text_size(text) < hygiene.TINY_CHARS:
        return f"tiny: {len(text)} characters"
    if hygiene._TRIVIAL.match(text) or (hygiene._TRIVIAL.match(memory.title.strip())
                                        and len(text) < 40):
        return "test or placeholder content"
    return None


def test_trivial_reason_equals_the_full_check() -> None:
    """The prefilter (ten non-space characters, _TRIVIAL's first letters) answers as
    the whole-text check does: spaces of every kind, case folding, CJK, every choice."""
    import itertools
    import random

    rng = random.Random(5)
    heads = ["test", "Testing 3", "this is a test", "TMP", "temp", "asdfff", "qwerty", "foo",
             "foobar", "Bar", "baz", "hello world", "hello  world", "OK", "okay", "oK",
             "done", "works", "it works", "fixed", "wip", "todo", "lorem ipsum dolor",
             "测试一下", "好的", "我喜欢用 vim", "ſtop", "ab", "x", "", "deploy with care",
             "test memory", "test note!!", "te", "t e s t"]
    spaces = ["", " ", "\n", "\t", "\u00a0", "\u3000", "\u2028", "   \n  ", "\x1c", "\x85"]
    tails = ["", "!", " 42", ".", " and more words follow here", "   ", "\n\n", "a b c d e",
             "1 2 3 4 5 6 7 8 9", " !!! ???"]
    titles = ["", "test", "note", "  wip  ", "hello", "Deploy"]
    cases = [(t, s1 + h + s2 + tail) for t, h, s1, s2, tail in itertools.product(
        titles, heads, spaces[:4], spaces, tails)]
    alphabet = "ab tT\n\u00a0\u3000x1!测试eos"
    cases += [(rng.choice(titles), "".join(rng.choice(alphabet)
                                          for _ in range(rng.randint(0, 16))))
              for _ in range(3000)]
    for title, body in cases:
        m = mem(title=title, body=body)
        assert hygiene.trivial_reason(m) == _trivial_by_the_full_check(m), (title, body)
