"""Capture's duplicate, near-duplicate and conflict checks go through the index's FTS
lookups; they must find exactly what comparing with every memory finds."""

from __future__ import annotations

import json
from pathlib import Path

from memex.index import views
from memex.storage import homes
from memex.workflows import conflicts, writes

ROOT = Path(__file__).resolve().parent.parent


def _capture(text: str, **fields: object) -> writes.WriteResult:
    return writes.capture(homes.workspace(), writes.CaptureRequest(text=text, **fields))


def test_conflict_pairs_found_as_a_full_comparison_finds_them(repo: Path) -> None:
    rows = [json.loads(x) for x in (ROOT / "bench" / "conflict_pairs.jsonl").read_text()
            .splitlines()]
    _capture("Unrelated filler about the coffee machine", tags=["office"])
    _capture("A memory with paths only", paths=["src/api/"])
    for row in rows:
        a = row["a"]
        _capture(a["body"], title=a["title"], tags=a["tags"], paths=a["paths"])
    ws = homes.workspace()
    found_any = 0
    for row in rows:
        b = row["b"]
        result = writes.capture(ws, writes.CaptureRequest(
            text=b["body"], title=b["title"], tags=b["tags"], paths=b["paths"]), dry_run=True)
        everyone = [x.memory for x in views.snapshot(ws).items]
        expected = [c.b for c in conflicts.against(result.memory, everyone)]
        assert [c["id"] for c in result.possible_conflicts] == expected, row["id"]
        found_any += bool(expected)
    assert found_any >= 25  # most labelled contradictions are found


def test_identical_text_and_same_title_are_found(repo: Path) -> None:
    first = _capture("Run   the 依赖管理 checks\nwith pnpm before a café release",
                     title="Release Checks")
    again = _capture("Run the 依赖管理 checks with pnpm   before a café release")
    assert again.created is False and again.memory.id == first.memory.id
    near = _capture("Something else entirely", title="release checks")
    assert near.created is True and near.near_duplicates == [first.memory.id]
    other_scope = _capture("Run the 依赖管理 checks with pnpm before a café release",
                           scope="personal")
    assert other_scope.created is True  # the check is per scope
    sign = _capture("+++ --- !!!")  # no word to look up: every memory is compared
    assert _capture("+++   --- !!!").memory.id == sign.memory.id


def test_tag_with_punctuation_meets_its_twin(repo: Path) -> None:
    first = _capture("Enable the ci/cd cache in staging", tags=["ci/cd"])
    second = _capture("Disable the ci/cd cache in staging", tags=["CI/CD"])
    assert [c["id"] for c in second.possible_conflicts] == [first.memory.id]
