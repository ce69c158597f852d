"""Search: weird queries, lanes, eligibility (each hidden memory shown by a control),
scope, filters, ranking and --explain."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memex.index import tokens
from memex.search import engine as search
from memex.storage import homes
from memex.workflows import reads
from tests.helpers import invoke, invoke_json, memfiles

PAST = "2026-01-01T00:00:00Z"
FUTURE = "2030-01-01T00:00:00Z"


def ids(query: str, *args: str) -> list[str]:
    return [h["id"] for h in invoke_json("search", query, *args)]


def capture(text: str, *args: str) -> str:
    out = invoke_json("capture", text, *args)
    return str(out["id"])


def test_hit_fields_and_summary(repo: Path) -> None:
    mid = capture("Deploys go through the staging VPN " + "detail " * 100, "--tag", "ops")
    [hit] = invoke_json("search", "staging vpn")
    assert hit["id"] == mid
    for key in ("id", "score", "lane", "scope", "status", "review_state", "title", "summary"):
        assert key in hit
    assert hit["lane"] == "bm25" and hit["scope"] == "project"
    assert hit["review_state"] == "draft" and hit["status"] == "active"
    assert len(hit["summary"]) <= 240 and "\n" not in hit["summary"]


def test_no_hits_is_an_empty_list_and_exit_0(repo: Path) -> None:
    capture("We use pnpm")
    result = invoke("search", "zebra", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    table = invoke("search", "zebra")
    assert table.exit_code == 0 and table.stdout == ""
    # positive control
    assert len(ids("pnpm")) == 1


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_a_usage_error(repo: Path, query: str) -> None:
    result = invoke("search", query)
    assert result.exit_code == 2
    assert "empty" in result.stderr
    assert invoke("search").exit_code == 2


@pytest.mark.parametrize("query", [
    '"', '"""', "AND", "OR NOT", "NEAR(", "NEAR(pnpm", "*", "-", "pnpm*", "-pnpm", "^pnpm",
    "title:pnpm", "pnpm AND", "(pnpm", "🎉", "pnpm 🎉", "'; DROP TABLE memories; --",
    "x" * 10_000, "pnpm " * 2000, "\x00pnpm", "{pnpm}", "pnpm\\",
])
def test_weird_queries_are_weaker_queries_never_errors(repo: Path, query: str) -> None:
    mid = capture("We use pnpm for installs")
    result = invoke("search", "--json", "--", query)
    assert result.exit_code == 0, result.stderr
    found = [h["id"] for h in json.loads(result.stdout)]
    if "pnpm" in query:
        assert found == [mid]
    else:
        assert found == []


def test_stop_words_dropped(repo: Path) -> None:
    pnpm = capture("pnpm is the package manager")
    capture("the cat is on the mat with the hat")
    assert ids("what is the package manager") == [pnpm]


def test_all_terms_rank_first_then_any_term_fills(repo: Path) -> None:
    one = capture("redis cache notes")
    both = capture("redis timeout in the cache layer")
    other = capture("timeout of the http client")
    found = ids("redis timeout")
    assert found[0] == both
    assert set(found) == {one, both, other}
    assert ids("redis timeout", "--limit", "1") == [both]


def test_every_term_but_one_ranks_above_a_single_term(repo: Path) -> None:
    two = capture("kafka consumer lag alert")
    single = capture("kafka kafka kafka kafka topic")
    found = ids("kafka consumer lag dashboard")
    assert found.index(two) < found.index(single)


def test_unseen_word_is_tried_as_a_prefix(repo: Path) -> None:
    mid = capture("configuration lives in settings.toml")
    assert ids("config") == [mid]


def test_title_and_tags_weigh_above_body(repo: Path) -> None:
    in_body = capture("notes about many things, among them the tern colony", "--title",
                      "bird notes")
    in_title = capture("a long body about many other things", "--title", "tern colony")
    in_tag = capture("yet another body about things entirely", "--tag", "tern")
    found = ids("tern")
    assert found.index(in_title) < found.index(in_body)
    assert found.index(in_tag) < found.index(in_body)


def test_ubiquitous_terms_leave_the_any_term_lane() -> None:
    stats = [search._Term("common", df=900), search._Term("rare", df=3),
             search._Term("medium", df=50)]
    lanes = dict(search.lane_queries(stats, total=search.UBIQUITY_MIN_MEMORIES))
    assert '"common"' in lanes["all terms"]
    assert '"common"' not in lanes["any term"] and '"rare"' in lanes["any term"]
    # positive control: in a small index nothing is dropped
    small = dict(search.lane_queries(stats, total=100))
    assert '"common"' in small["any term"]


# ---------------------------------------------------------------- eligibility


def test_superseded_hidden_newest_shown(repo: Path) -> None:
    old = capture("We deploy with fabric", "--scope", "personal")
    result = invoke("supersede", old, "We deploy with ansible and fabric is gone")
    assert result.exit_code == 0, result.stderr
    found = ids("fabric")
    assert old not in found and len(found) == 1
    assert old in ids("fabric", "--include", "all")


def test_half_written_chain_hides_the_old_memory(repo: Path) -> None:
    folder = memfiles.personal()
    old = memfiles.put(folder, "walnut rule v1", scope="personal")
    new = memfiles.put(folder, "walnut rule v2", scope="personal", supersedes=old,
                       created_at="2026-11-02T00:00:00Z")
    result = invoke("search", "walnut", "--json")
    assert [h["id"] for h in json.loads(result.stdout)] == [new]
    assert "half-written" in result.stderr
    assert [m["id"] for m in invoke_json("list")] == [new]
    assert set(ids("walnut", "--include", "all")) == {old, new}


@pytest.mark.parametrize("command", [["forget"], ["status", "archived"]])
def test_retracted_and_archived_hidden(repo: Path, command: list[str]) -> None:
    mid = capture("sesame credentials live in the vault", "--scope", "personal")
    result = invoke(command[0], mid, *command[1:], "--yes") if command[0] == "forget" \
        else invoke(command[0], mid, *command[1:])
    assert result.exit_code == 0, result.stderr
    assert ids("sesame") == []
    assert ids("sesame", "--include", "all") == [mid]


def test_rejected_hidden(repo: Path) -> None:
    mid = memfiles.put(repo / ".memex", "hazelnut policy", review_state="rejected")
    assert ids("hazelnut") == []
    assert ids("hazelnut", "--include", "all") == [mid]


def test_expired_and_out_of_window_hidden(repo: Path) -> None:
    folder = memfiles.personal()
    expired = memfiles.put(folder, "pecan expired", scope="personal", expires_at=PAST)
    ended = memfiles.put(folder, "pecan ended", scope="personal", valid_until=PAST)
    future = memfiles.put(folder, "pecan future", scope="personal", valid_from=FUTURE)
    live = memfiles.put(folder, "pecan live", scope="personal")
    assert ids("pecan") == [live]
    assert set(ids("pecan", "--include", "all")) == {expired, ended, future, live}
    assert set(ids("pecan", "--as-of", "2025-06-01T00:00:00Z")) == set()
    assert set(ids("pecan", "--as-of", "2031-01-01T00:00:00Z")) == {future, live}


def test_deprecated_flagged_and_ranked_low(repo: Path) -> None:
    dep = capture("almond milk is in the fridge", "--scope", "personal")
    assert invoke("status", dep, "deprecated").exit_code == 0
    act = capture("almond milk is on the shelf", "--scope", "personal")
    hits = invoke_json("search", "almond milk")
    assert [h["id"] for h in hits] == [act, dep]
    assert hits[1]["warning"] == "deprecated" and "warning" not in hits[0]


def test_as_of_shows_what_was_known_then(repo: Path) -> None:
    folder = memfiles.personal()
    early = memfiles.put(folder, "cashew early", scope="personal",
                         created_at="2026-01-01T00:00:00Z")
    late = memfiles.put(folder, "cashew late", scope="personal",
                        created_at="2026-06-01T00:00:00Z")
    retired = memfiles.put(folder, "cashew retired", scope="personal", status="archived",
                           created_at="2026-01-01T00:00:00Z",
                           retired_at="2026-03-01T00:00:00Z")
    assert set(ids("cashew", "--as-of", "2026-02-01T00:00:00Z")) == {early, retired}
    assert set(ids("cashew", "--as-of", "2026-07-01")) == {early, late}
    assert set(ids("cashew")) == {early, late}
    assert invoke("search", "cashew", "--as-of", "yesterday-ish").exit_code == 2


def test_list_and_search_agree_on_eligibility(repo: Path) -> None:
    folder = memfiles.personal()
    shared = repo / ".memex"
    variants = [
        {}, {"status": "deprecated"}, {"status": "archived", "retired_at": PAST},
        {"status": "retracted", "retired_at": PAST}, {"expires_at": PAST},
        {"valid_until": PAST}, {"valid_from": FUTURE}, {"expires_at": FUTURE},
    ]
    for fields in variants:
        memfiles.put(folder, "chestnut variant", scope="personal", **fields)
    for state in ("draft", "proposed", "approved", "published", "rejected"):
        memfiles.put(shared, "chestnut shared", review_state=state)
    old = memfiles.put(folder, "chestnut chain old", scope="personal")
    memfiles.put(folder, "chestnut chain new", scope="personal", supersedes=old)
    for args in ([], ["--include", "all"], ["--as-of", "2026-11-15T00:00:00Z"],
                 ["--as-of", "2025-01-01T00:00:00Z"]):
        listed = {m["id"] for m in invoke_json("list", *args)}
        found = set(ids("chestnut", "--limit", "100", *args))
        assert found == listed, args
    assert 0 < len(set(ids("chestnut", "--limit", "100"))) < len(variants) + 7


def test_sql_and_reads_eligible_agree(repo: Path) -> None:
    """The SQL prefilter never drops what reads.eligible would keep."""
    folder = memfiles.personal()
    made = []
    for fields in ({}, {"expires_at": FUTURE}, {"valid_from": PAST}, {"valid_until": FUTURE}):
        made.append(memfiles.put(folder, "acorn", scope="personal", **fields))
    ws = homes.workspace()
    view = reads.load_view(ws)
    assert {i.id for i in view.items} == set(made)
    result = search.search(ws, search.SearchRequest("acorn", limit=50))
    assert {h.id for h in result.hits} == set(made)


# ---------------------------------------------------------------- scope and filters


def test_scope_defaults_to_this_project_and_personal(repo: Path, tmp_path: Path) -> None:
    here = capture("nutmeg here")
    mine = capture("nutmeg mine", "--scope", "personal")
    other = tmp_path / "other"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=other, check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://github.com/acme/other"],
                   cwd=other, check=True)
    theirs = memfiles.put(memfiles.outbox(other), "nutmeg theirs")
    assert set(ids("nutmeg")) == {here, mine}
    assert ids("nutmeg", "--scope", "personal") == [mine]
    assert ids("nutmeg", "--scope", "project") == [here]
    # positive controls: asked for by path or by origin URL, the other project answers
    assert theirs in ids("nutmeg", "--repo", str(other))
    assert theirs in ids("nutmeg", "--repo", "git@github.com:acme/other.git")
    assert here not in ids("nutmeg", "--repo", str(other))
    assert invoke("search", "nutmeg", "--repo", "github.com/acme/nope").exit_code == 2


def test_type_tag_and_status_filters(repo: Path) -> None:
    a = capture("thyme decision", "--type", "decision", "--tag", "x", "--tag", "y")
    b = capture("thyme lesson", "--type", "lesson", "--tag", "x")
    assert ids("thyme", "--type", "decision") == [a]
    assert ids("thyme", "--tag", "x", "--tag", "y") == [a]
    assert set(ids("thyme", "--tag", "x")) == {a, b}
    assert invoke("status", b, "deprecated").exit_code == 0
    assert ids("thyme", "--status", "deprecated") == [b]
    assert ids("thyme", "--status", "active") == [a]


# ---------------------------------------------------------------- ranking


def test_reviewed_above_proposed_above_draft(repo: Path) -> None:
    shared = repo / ".memex"
    draft = memfiles.put(memfiles.outbox(), "basil rule")
    proposed = memfiles.put(shared, "basil rule", review_state="proposed")
    approved = memfiles.put(shared, "basil rule", review_state="approved")
    assert ids("basil") == [approved, proposed, draft]


def test_importance_and_recency(repo: Path) -> None:
    folder = memfiles.personal()
    low = memfiles.put(folder, "sage tip", scope="personal", importance="low")
    high = memfiles.put(folder, "sage tip", scope="personal", importance="high")
    normal = memfiles.put(folder, "sage tip", scope="personal")
    assert ids("sage") == [high, normal, low]
    old = memfiles.put(folder, "dill tip", scope="personal", created_at="2020-01-01T00:00:00Z")
    new = memfiles.put(folder, "dill tip", scope="personal")
    assert ids("dill") == [new, old]


def test_paths_matching_cwd_rank_higher(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = memfiles.personal()
    plain = memfiles.put(folder, "mint tip", scope="personal")
    api = memfiles.put(folder, "mint tip", scope="personal", paths=["src/api/**"])
    assert ids("mint")[0] == plain or set(ids("mint")) == {plain, api}
    (repo / "src" / "api" / "v1").mkdir(parents=True)
    monkeypatch.chdir(repo / "src" / "api" / "v1")
    hits = invoke_json("search", "mint", "--explain")
    assert hits[0]["id"] == api
    assert "paths match cwd" in hits[0]["explain"]["boosts"]


def test_explain(repo: Path) -> None:
    mid = capture("rosemary deploy checklist", "--importance", "high")
    [hit] = invoke_json("search", "rosemary checklist", "--explain")
    e = hit["explain"]
    assert hit["id"] == mid
    assert e["lane"] == "bm25" and e["match"] == "all terms"
    assert e["bm25"] > 0 and e["score"] == hit["score"]
    assert e["matched"] == ["rosemary", "checklist"]
    assert e["boosts"]["importance:high"] > 1
    text = invoke("search", "rosemary checklist", "--explain")
    assert text.exit_code == 0 and "matched: rosemary, checklist" in text.stdout
    assert "rosemary deploy checklist" in text.stdout


def test_reads_count_access_in_the_index_only(repo: Path) -> None:
    mid = capture("oregano")
    ws = homes.workspace()
    path = ws.outbox_dir / f"{mid}.md"
    before = path.read_text()
    ids("oregano")
    [hit] = invoke_json("search", "oregano", "--explain")
    assert hit["explain"]["boosts"].get("accessed", 0) > 1
    assert path.read_text() == before


def test_fts_phrase_quotes_only_plain_terms() -> None:
    for term in tokens.query_terms('a"b c*d NEAR(e) 依赖'):
        assert '"' not in term and "*" not in term and "(" not in term


@pytest.mark.parametrize("glob", ["./src/api", ".config/**"])
def test_a_path_glob_means_the_same_to_search_and_review(
        repo: Path, monkeypatch: pytest.MonkeyPatch, glob: str) -> None:
    """audit31: search read `./src/api` as a folder named `.` (never matching) while
    review's stale-path check stripped every leading dot and slash, so `.config/**` (a
    dot-folder) was reported as matching no file. One reading of a glob for both."""
    from memex.workflows import review
    where = glob.removeprefix("./").removesuffix("/**")
    (repo / where / "v1").mkdir(parents=True)
    (repo / where / "v1" / "a.txt").write_text("x", encoding="utf-8")
    assert review.glob_matches(glob, [f"{where}/v1/a.txt"])
    folder = memfiles.personal()
    memfiles.put(folder, "mint tip", scope="personal")
    api = memfiles.put(folder, "mint tip", scope="personal", paths=[glob])
    monkeypatch.chdir(repo / where / "v1")
    hits = invoke_json("search", "mint", "--explain")
    assert hits[0]["id"] == api
    assert "paths match cwd" in hits[0]["explain"]["boosts"]
