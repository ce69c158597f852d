"""health keeps each live memory's word set beside the index (word_cache, issue 18): a
report whose paired results are gone (hygiene-cache.json deleted, or more than 200
files changed) reads the kept sets back instead of splitting every text again, splits
only the files that changed, and finds exactly what a report with nothing kept finds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memex.storage import homes
from memex.workflows import pairs, word_cache
from tests.helpers import invoke_json

TEXTS = [
    ("ci", "CI runs on Node 18 with the pnpm store cached"),
    ("ci", "CI runs on Node 20 with the pnpm store cached"),
    ("style", "Format the Python code with ruff before each commit"),
    ("style", "Format the Python code with ruff before each commit, always"),
    ("db", "Störe the dätes in UTC: naïve İstanbul times break the 依赖管理 job"),
    ("db", "Never run migrations on a friday"),
]


def _split_count(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the word pass splits from now on."""
    split: list[str] = []
    original = pairs._words

    def counting(text: str) -> list[str]:
        split.append(text)
        return original(text)

    monkeypatch.setattr(pairs, "_words", counting)
    return split


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
    split = _split_count(monkeypatch)
    again = _cold_health(repo)
    assert split == [] and again == first  # nothing split again, the same report
    edited = Path(str(made[5]["path"]))
    edited.write_text(edited.read_text().replace("on a friday", "on a friday or a monday"))
    changed = _cold_health(repo)
    assert len(split) == 1 and "monday" in split[0]  # only the changed file
    assert changed == _nothing_kept(repo)


def test_the_kept_sets_are_those_of_the_files_read(repo: Path) -> None:
    made = [invoke_json("capture", "--tag", tag, text) for tag, text in TEXTS]
    _cold_health(repo)
    Path(str(made[0]["path"])).unlink()
    invoke_json("status", made[1]["id"], "archived")
    _cold_health(repo)
    ws = homes.workspace()
    with sqlite3.connect(ws.index_dir / word_cache.NAME) as conn:
        vocab = [w for (w,) in conn.execute("SELECT word FROM vocab ORDER BY id")]
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
    split = _split_count(monkeypatch)
    assert _cold_health(repo) == first and len(split) == len(TEXTS)  # all split again
    assert _cold_health(repo) == first and len(split) == len(TEXTS)  # kept for "another"
    (repo / ".git" / "memex" / word_cache.NAME).write_bytes(b"not a database" * 100)
    assert _cold_health(repo) == first and len(split) == 2 * len(TEXTS)
    assert _cold_health(repo) == first and len(split) == 3 * len(TEXTS)  # made again
    assert _cold_health(repo) == first and len(split) == 3 * len(TEXTS)  # read back
    monkeypatch.setattr(word_cache, "rules_version", lambda: None)  # a source unreadable
    assert _cold_health(repo) == first and len(split) == 4 * len(TEXTS)


def test_shared_words_are_one_object_across_kept_and_made_sets(tmp_path: Path) -> None:
    texts = ["alpha beta gamma", "beta gamma delta", "gamma delta epsilon"]
    word_cache.read(tmp_path, texts[:2], ["h1", "h2"])
    words = word_cache.read(tmp_path, texts, ["h1", "h2", "h3"])  # two kept, one made
    assert all(words[t] == pairs.word_set(t) for t in texts)
    spelled = {w: w for w in words[texts[0]]}
    assert all(spelled.get(w, w) is w for t in texts for w in words[t])
    gammas = {id(w) for t in texts for w in words[t] if w == "gamma"}
    assert len(gammas) == 1
