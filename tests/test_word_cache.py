"""health keeps each live memory's word set beside the index (word_cache, issue 18): a
report whose paired results are gone (hygiene-cache.json deleted, or more than 200
files changed) reads the kept sets back instead of splitting every text again, splits
only the files that changed, and finds exactly what a report with nothing kept finds."""

from __future__ import annotations

import contextlib
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from memex.storage import homes
from memex.workflows import pairs, word_cache
from tests.helpers import invoke_json
from tests.helpers.spies import record_calls

TEXTS = [
    ("ci", "CI runs on Node 18 with the pnpm store cached"),
    ("ci", "CI runs on Node 20 with the pnpm store cached"),
    ("style", "Format the Python code with ruff before each commit"),
    ("style", "Format the Python code with ruff before each commit, always"),
    ("db", "Störe the dätes in UTC: naïve İstanbul times break the 依赖管理 job"),
    ("db", "Never run migrations on a friday"),
]


def _cold_health(repo: Path) -> dict[str, object]:
    (repo / ".git" / "memex" / "hygiene-cache.json").unlink(missing_ok=True)
    return dict(invoke_json("health"))


def _nothing_kept(repo: Path) -> dict[str, object]:
    (repo / ".git" / "memex" / word_cache.NAME).unlink(missing_ok=True)
    return _cold_health(repo)


def test_a_cold_health_reads_the_kept_word_sets(repo: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    made = [invoke_json("capture", "--tag", tag, text) for tag, text in TEXTS]
    first = _cold_health(repo)  # makes and keeps every set
    assert (repo / ".git" / "memex" / word_cache.NAME).is_file()
    assert first["open_conflicts"] == 1 and first["rot_candidates"] >= 1
    split = record_calls(monkeypatch, pairs, "distinct_words")
    again = _cold_health(repo)
    assert split == [] and again == first  # nothing split again, the same report
    edited = Path(str(made[5]["path"]))
    edited.write_text(edited.read_text().replace("on a friday", "on a friday or a monday"))
    changed = _cold_health(repo)
    assert len(split) == 1 and "monday" in split[0].args[0]  # only the changed file
    assert changed == _nothing_kept(repo)


def test_the_kept_sets_are_those_of_the_files_read(repo: Path) -> None:
    made = [invoke_json("capture", "--tag", tag, text) for tag, text in TEXTS]
    _cold_health(repo)
    Path(str(made[0]["path"])).unlink()
    invoke_json("status", made[1]["id"], "archived")
    _cold_health(repo)
    ws = homes.workspace()
    with sqlite3.connect(ws.index_dir / word_cache.NAME) as conn:
        vocab = dict(conn.execute("SELECT id, word FROM vocab"))
        kept = [frozenset(vocab[n] for n in word_cache.array(word_cache._CODE, ids))
                for (ids,) in conn.execute("SELECT ids FROM word_sets")]
    live = [f"{title}\n{body}" for title, body in
            ((m["title"], m["body"]) for m in invoke_json("list")
             if m["status"] == "active")]
    assert sorted(map(sorted, kept)) == sorted(sorted(pairs.word_set(t)) for t in live)
    assert len(kept) == len(TEXTS) - 2  # the deleted file's and the archived one's went


def test_another_code_version_or_a_damaged_cache_is_not_read(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for tag, text in TEXTS:
        invoke_json("capture", "--tag", tag, text)
    first = _cold_health(repo)
    monkeypatch.setattr(word_cache, "rules_version", lambda: "another")
    split = record_calls(monkeypatch, pairs, "distinct_words")
    assert _cold_health(repo) == first and len(split) == len(TEXTS)  # all split again
    assert _cold_health(repo) == first and len(split) == len(TEXTS)  # kept for "another"
    (repo / ".git" / "memex" / word_cache.NAME).write_bytes(b"not a database" * 100)
    assert _cold_health(repo) == first and len(split) == 2 * len(TEXTS)
    assert _cold_health(repo) == first and len(split) == 3 * len(TEXTS)  # made again
    assert _cold_health(repo) == first and len(split) == 3 * len(TEXTS)  # read back
    monkeypatch.setattr(word_cache, "rules_version", lambda: None)  # a source unreadable
    assert _cold_health(repo) == first and len(split) == 4 * len(TEXTS)


def test_a_cold_health_makes_each_memory_s_paired_text_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pass of one report (the word pass, the counts, near-duplicates and
    contradictions) keys its word set on one text object per memory: each further copy
    was a store's worth of text made and hashed again (~300 MB at 100,000 memories)."""
    for tag, text in TEXTS:
        invoke_json("capture", "--tag", tag, text)
    made = record_calls(monkeypatch, pairs, "paired_text")
    report = _nothing_kept(repo)
    assert report["open_conflicts"] == 1 and report["total"] == len(TEXTS)
    assert sorted(call.args[1] for call in made) == sorted(text for _, text in TEXTS)


def _spelled(words: pairs.WordIds, text: str) -> frozenset[str]:
    return frozenset(words.spelled[n] for n in words[text])


def test_kept_and_made_sets_number_their_words_alike(tmp_path: Path) -> None:
    texts = ["alpha beta gamma", "beta gamma delta", "gamma delta epsilon"]
    word_cache.read(tmp_path, texts[:2], ["h1", "h2"])
    words = word_cache.read(tmp_path, texts, ["h1", "h2", "h3"])  # two kept, one made
    assert all(_spelled(words, t) == pairs.word_set(t) for t in texts)
    assert all(len(words[t]) == len(pairs.word_set(t)) for t in texts)  # each word once
    assert len(words.spelled) == len(words.ids) == 5  # one id a word, kept or made
    again = word_cache.read(tmp_path, texts, ["h1", "h2", "h3"])  # all three kept
    assert [again[t] for t in texts] == [words[t] for t in texts]


def _traces(index_dir: Path, word: bytes) -> list[str]:
    """The files of the word cache (with its journal or WAL) whose bytes hold WORD."""
    return [path.name for path in sorted(index_dir.glob(word_cache.NAME + "*"))
            if word in path.read_bytes()]


def test_forget_hard_and_reindex_full_leave_no_trace_of_a_memory_s_words(
        repo: Path) -> None:
    index_dir = repo / ".git" / "memex"
    for tag, text in TEXTS:
        invoke_json("capture", "--tag", tag, text)
    secret = invoke_json("capture", "--scope", "personal", "my zorbleflux9931 plans")
    _cold_health(repo)
    assert _traces(index_dir, b"zorbleflux9931") == [word_cache.NAME]
    invoke_json("forget", "--hard", "--yes", secret["id"])
    assert _traces(index_dir, b"zorbleflux9931") == []
    _cold_health(repo)
    assert _traces(index_dir, b"zorbleflux9931") == []
    kept = invoke_json("capture", "--tag", "x", "the quuxplorp7781 of the build")
    _cold_health(repo)
    assert _traces(index_dir, b"quuxplorp7781") == [word_cache.NAME]
    invoke_json("reindex", "--full")
    assert _traces(index_dir, b"quuxplorp7781") == []
    assert kept["id"]


def test_a_gone_file_s_words_leave_the_cache(repo: Path) -> None:
    """Rows of files no longer live are dropped, and with them every word no kept set
    uses any more (health reads every live set, so the used words are known)."""
    index_dir = repo / ".git" / "memex"
    for tag, text in TEXTS:
        invoke_json("capture", "--tag", tag, text)
    gone = invoke_json("capture", "--tag", "x", "the frimbulator5521 runs nightly")
    first = _cold_health(repo)
    assert _traces(index_dir, b"frimbulator5521") == [word_cache.NAME]
    Path(str(gone["path"])).unlink()
    _cold_health(repo)
    assert _traces(index_dir, b"frimbulator5521") == []
    with sqlite3.connect(index_dir / word_cache.NAME) as conn:
        vocab = {w for (w,) in conn.execute("SELECT word FROM vocab")}
    assert "nightly" not in vocab and "runs" in vocab  # words of live sets stay
    new = invoke_json("capture", "--tag", "x", "a brand new nightly word")
    assert new["id"]
    again = _cold_health(repo)
    assert again["open_conflicts"] == first["open_conflicts"]
    assert again == _nothing_kept(repo)  # new ids after dropped ones decode right


def test_a_cache_started_over_while_read_is_not_paired_with_another_vocabulary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another git-memex (other code) starts the cache over between the reads of the
    vocabulary and of the sets: the reads are one transaction, so the sets decode
    against the vocabulary they were made with."""
    texts = ["alpha beta gamma", "delta epsilon zeta", "eta theta iota"]
    hashes = ["h1", "h2", "h3"]
    word_cache.read(tmp_path, texts, hashes)
    real_version = word_cache.rules_version
    know = pairs.WordIds.know
    interleaved: list[bool] = []

    def interleaving(self: pairs.WordIds, words: Iterable[tuple[int, str]]) -> None:
        know(self, words)
        if not interleaved:
            interleaved.append(True)
            monkeypatch.setattr(word_cache, "rules_version", lambda: "other-version")
            word_cache.read(tmp_path, texts[::-1], hashes[::-1])
            monkeypatch.setattr(word_cache, "rules_version", real_version)

    monkeypatch.setattr(pairs.WordIds, "know", interleaving)
    got = word_cache.read(tmp_path, texts, hashes)
    assert interleaved
    assert [_spelled(got, t) for t in texts] == [pairs.word_set(t) for t in texts]


def test_a_cache_of_another_layout_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / word_cache.NAME
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE word_sets (hash TEXT NOT NULL UNIQUE, ids BLOB NOT NULL, "
                     "made_at INTEGER NOT NULL)")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.execute("INSERT INTO meta VALUES ('version', 'some-future-version')")
        conn.commit()
    texts = ["alpha beta gamma", "delta epsilon zeta"]
    word_cache.read(tmp_path, texts, ["h1", "h2"])
    word_cache.read(tmp_path, texts, ["h1", "h2"])
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM word_sets").fetchone()[0] == 2


def test_a_damaged_cache_is_repaired_in_place(tmp_path: Path) -> None:
    """Never deleted (another process may hold it open), as the index and the vectors;
    no journal is left beside it."""
    path = tmp_path / word_cache.NAME
    path.write_bytes(b"not a database" * 100)
    (tmp_path / (word_cache.NAME + "-journal")).write_bytes(b"stray" * 100)
    inode = path.stat().st_ino
    texts = ["alpha beta gamma", "delta epsilon zeta"]
    word_cache.read(tmp_path, texts, ["h1", "h2"])
    assert path.stat().st_ino == inode
    journal = tmp_path / (word_cache.NAME + "-journal")
    assert not journal.exists() or journal.stat().st_size == 0
    word_cache.read(tmp_path, texts, ["h1", "h2"])  # made again, in the same file
    assert path.stat().st_ino == inode
    with contextlib.closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM word_sets").fetchone()[0] == 2


def test_the_caches_name_their_code_by_one_digest_of_its_source(tmp_path: Path) -> None:
    """sources.of_sources is the one digest of modules' source (word cache, verdicts,
    pair cache): BLAKE2b of a prefix and each module's file; None when one is unreadable
    (a module without a file, or one that cannot be imported)."""
    import hashlib
    import types

    from memex.storage import sources
    from memex.workflows import conflicts

    expected = hashlib.blake2b(digest_size=8)
    expected.update(b"v1")
    for module in (conflicts, pairs):
        expected.update(Path(str(module.__file__)).read_bytes())
    assert sources.of_sources((conflicts.__name__, pairs.__name__), "v1", size=8) == \
        expected.hexdigest()
    assert conflicts.cache_version() == sources.of_sources(
        (conflicts.__name__, pairs.__name__), size=8)
    assert sources.of_sources(["memex.no_such_module"]) is None
    gone = types.ModuleType("memex_test_gone")
    gone.__file__ = str(tmp_path / "gone.py")
    sys.modules[gone.__name__] = gone
    try:
        assert sources.of_sources([pairs.__name__, gone.__name__]) is None
    finally:
        del sys.modules[gone.__name__]
    assert word_cache.rules_version() is word_cache.rules_version()  # taken once


def test_a_kept_row_repeating_ids_is_split_again(tmp_path: Path) -> None:
    """A damaged row holding an id twice is not a set: read as it is, the word would be
    counted twice for one memory and every set size inflated (review35A D1)."""
    text = "alpha beta gamma"
    word_cache.read(tmp_path, [text], ["h1"])
    with contextlib.closing(sqlite3.connect(tmp_path / word_cache.NAME)) as conn, conn:
        (blob,) = conn.execute("SELECT ids FROM word_sets WHERE hash = 'h1'").fetchone()
        conn.execute("UPDATE word_sets SET ids = ? WHERE hash = 'h1'", (blob + blob,))
    words = word_cache.read(tmp_path, [text], ["h1"])
    got = list(words[text])
    assert len(got) == len(set(got)) == 3, got
    assert {words.spelled[n] for n in got} == pairs.word_set(text)


def test_health_with_a_kept_row_repeating_ids_finds_what_it_found(repo: Path) -> None:
    body = ("Deploy the zyxqwv service with blue green rollout and check the quorumfoo "
            "dashboards before switching traffic over to the new pool")
    invoke_json("capture", "--tag", "ops", body)
    invoke_json("capture", "--tag", "ops", body + " today")
    first = _cold_health(repo)
    with contextlib.closing(sqlite3.connect(repo / ".git" / "memex" / word_cache.NAME)
                            ) as conn, conn:
        for content_hash, blob in conn.execute("SELECT hash, ids FROM word_sets").fetchall():
            conn.execute("UPDATE word_sets SET ids = ? WHERE hash = ?",
                         (blob + blob, content_hash))
    assert _cold_health(repo) == first


def test_reading_the_cache_costs_its_vocabulary_not_its_largest_id(tmp_path: Path) -> None:
    """Ids are not reused, so the largest may be far past the words held (a long-lived
    store's dropped words, or a damaged row): reading must not cost that range
    (review35A D3: a set of 3,000,000 ints, ~360 MB traced, for 6 words)."""
    import tracemalloc

    texts = ["alpha beta gamma", "beta gamma delta"]
    word_cache.read(tmp_path, texts, ["h1", "h2"])
    with contextlib.closing(sqlite3.connect(tmp_path / word_cache.NAME)) as conn, conn:
        conn.execute("INSERT INTO vocab (id, word) VALUES (?, ?)", (3_000_000, "far"))
    tracemalloc.start()
    try:
        words = word_cache.read(tmp_path, texts, ["h1", "h2"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, peak  # bytes
    assert [{words.spelled[n] for n in words[t]} for t in texts] == list(
        map(pairs.word_set, texts))


def test_a_sparse_vocabulary_still_refuses_a_dropped_word_s_id(tmp_path: Path) -> None:
    """With gaps in the ids, a kept set naming one of them (a dropped word's) is split
    again, as when the gaps are below the largest id of a dense vocabulary."""
    texts = ["alpha beta", "gamma delta"]
    word_cache.read(tmp_path, texts, ["h1", "h2"])
    with contextlib.closing(sqlite3.connect(tmp_path / word_cache.NAME)) as conn, conn:
        conn.execute("INSERT INTO vocab (id, word) VALUES (?, ?)", (1_000_000, "far"))
        conn.execute("DELETE FROM vocab WHERE word = 'gamma'")
    words = word_cache.read(tmp_path, texts, ["h1", "h2"])
    assert [{words.spelled[n] for n in words[t]} for t in texts] == list(
        map(pairs.word_set, texts))
