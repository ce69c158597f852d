"""The field-level 3-way merge over parsed memories and file texts."""

from __future__ import annotations

from memex.core import frontmatter
from memex.workflows import file_merge as merge
from tests.helpers.memfiles import memory


def _texts(base, ours, theirs):  # type: ignore[no-untyped-def]
    return frontmatter.emit(base), frontmatter.emit(ours), frontmatter.emit(theirs)


def test_different_fields_merge_clean() -> None:
    base = memory()
    ours = base.copy(importance="high", revision=2, updated_at="2026-02-01T00:00:00Z")
    theirs = base.copy(tags=["tooling", "build"], revision=3,
                       updated_at="2026-01-15T00:00:00Z", title="Use pnpm 9")
    result = merge.merge_texts(*_texts(base, ours, theirs))
    assert result.clean, result.conflicts
    merged = frontmatter.load(result.text)[0]
    assert merged.importance == "high"
    assert merged.title == "Use pnpm 9"
    assert merged.tags == ["tooling", "build"]
    assert merged.revision == 4
    assert merged.updated_at == "2026-02-01T00:00:00Z"


def test_histories_union_in_time_order_without_duplicates() -> None:
    shared = {"at": "2026-01-02T00:00:00Z", "by": "local:a", "from": "draft", "to": "proposed"}
    base = memory(review_history=[shared])
    ours_entry = {"at": "2026-01-05T00:00:00Z", "by": "local:b", "from": "proposed",
                  "to": "approved"}
    theirs_entry = {"at": "2026-01-03T00:00:00Z", "by": "local:c", "from": "active",
                    "to": "deprecated"}
    ours = base.copy(review_history=[shared, ours_entry], review_state="approved")
    theirs = base.copy(status_history=[theirs_entry], status="deprecated",
                       review_history=[shared, {**shared, "at": "2026-01-04T00:00:00Z"}])
    merged, conflicts = merge.merge_memories(base, ours, theirs, _no_body)
    assert conflicts == []
    assert [e["at"] for e in merged.review_history] == [
        "2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z"]
    assert merged.status_history == [theirs_entry]
    assert (merged.status, merged.review_state) == ("deprecated", "approved")


def _no_body(o: str, b: str, t: str) -> tuple[str, bool]:
    raise AssertionError("body merge not expected")


def test_sets_union_and_removals_kept() -> None:
    base = memory(tags=["a", "b"], related=[], paths=["src/*"])
    a, b = memory().id, memory().id
    ours = base.copy(tags=["a"], related=[a])
    theirs = base.copy(tags=["a", "b", "c"], related=[b], paths=["src/*", "lib/*"])
    merged, conflicts = merge.merge_memories(base, ours, theirs, _no_body)
    assert conflicts == []
    assert merged.tags == ["a", "c"]  # b removed on ours, c added on theirs
    assert merged.related == [a, b]
    assert merged.paths == ["src/*", "lib/*"]


def test_created_at_earlier_and_updated_at_later() -> None:
    base = memory(created_at="2026-01-02T00:00:00Z")
    ours = base.copy(created_at="2026-01-01T00:00:00Z", updated_at="2026-03-01T00:00:00Z")
    theirs = base.copy(importance="low", updated_at="2026-02-01T00:00:00Z")
    merged, conflicts = merge.merge_memories(base, ours, theirs, _no_body)
    assert conflicts == []
    assert merged.created_at == "2026-01-01T00:00:00Z"
    assert merged.updated_at == "2026-03-01T00:00:00Z"


def test_same_scalar_changed_differently_is_a_conflict() -> None:
    base = memory()
    result = merge.merge_texts(*_texts(base, base.copy(importance="high"),
                                       base.copy(importance="low")))
    assert not result.clean
    [conflict] = result.conflicts
    assert (conflict.field, conflict.ours, conflict.theirs, conflict.base) == (
        "importance", "high", "low", "normal")
    assert "<<<<<<< ours\nimportance: high\n||||||| base\nimportance: normal\n=======\n" \
           "importance: low\n>>>>>>> theirs" in result.text


def test_lifecycle_conflict_two_successors() -> None:
    base = memory()
    s1, s2 = memory().id, memory().id
    ours = base.copy(status="superseded", superseded_by=s1, retired_at="2026-02-01T00:00:00Z")
    theirs = base.copy(status="superseded", superseded_by=s2, retired_at="2026-02-02T00:00:00Z")
    result = merge.merge_texts(*_texts(base, ours, theirs))
    assert [(c.field, c.kind) for c in result.conflicts] == [("superseded_by", "lifecycle")]
    assert s1 in result.text and s2 in result.text
    assert "decide which successor" in result.conflicts[0].describe()


def test_body_merged_by_git() -> None:
    base = memory()
    ours = base.copy(body="We use pnpm!\n\nLine two.\n\nLine three.")
    theirs = base.copy(body="We use pnpm.\n\nLine two.\n\nLine 3.")
    result = merge.merge_texts(*_texts(base, ours, theirs))
    assert result.clean
    assert frontmatter.load(result.text)[0].body == "We use pnpm!\n\nLine two.\n\nLine 3."
    both = base.copy(body="We use yarn.\n\nLine two.\n\nLine three.")
    result = merge.merge_texts(*_texts(base, ours, both))
    assert [c.kind for c in result.conflicts] == ["body"]
    assert "<<<<<<< ours\nWe use pnpm!\n=======\nWe use yarn.\n>>>>>>> theirs" in result.text


def test_redaction_runs_on_the_merged_result() -> None:
    base = memory()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    ours = base.copy(importance="high")
    theirs = base.copy(body=base.body + f"\n\ntoken {token}")
    result = merge.merge_texts(*_texts(base, ours, theirs))
    assert result.clean
    assert token not in result.text
    assert "ghp_xxxx" in result.text
    assert any("masked" in n for n in result.notices)


def test_unparseable_side_falls_back_to_text_merge_keeping_both() -> None:
    base = memory()
    ours = frontmatter.emit(base.copy(importance="high"))
    theirs = "not a memory at all\n"
    result = merge.merge_texts(frontmatter.emit(base), ours, theirs)
    assert result.fallback and not result.clean
    assert "importance: high" in result.text and "not a memory at all" in result.text


def test_added_on_both_sides_without_base() -> None:
    ours = memory()
    theirs = ours.copy(tags=["x"], importance="high")
    result = merge.merge_texts(None, frontmatter.emit(ours), frontmatter.emit(theirs))
    assert [c.field for c in result.conflicts] == ["importance"]
    assert frontmatter.emit_header({"tags": ["tooling", "x"]}) in result.text


def test_one_side_unchanged_takes_the_other_verbatim() -> None:
    base = memory()
    theirs = base.copy(importance="high", revision=2)
    result = merge.merge_texts(*_texts(base, base, theirs))
    assert result.clean
    assert frontmatter.load(result.text)[0] == theirs


def test_hand_edited_ours_keeps_its_comments() -> None:
    base = memory()
    ours_text = frontmatter.emit(base.copy(importance="high")).replace(
        "importance: high", "importance: high  # we argued about this")
    theirs = base.copy(tags=["tooling", "ci"])
    result = merge.merge_texts(frontmatter.emit(base), ours_text, frontmatter.emit(theirs))
    assert result.clean
    assert "# we argued about this" in result.text
    merged = frontmatter.load(result.text)[0]
    assert (merged.importance, merged.tags) == ("high", ["tooling", "ci"])


def test_conflicting_unknown_keys_are_reported() -> None:
    base = memory()
    ours = base.copy(extra={"team": "web"})
    theirs = base.copy(extra={"team": "infra"})
    result = merge.merge_texts(*_texts(base, ours, theirs))
    assert [c.field for c in result.conflicts] == ["team"]
    assert "team: web" in result.text and "team: infra" in result.text


def test_conflicting_values_are_redacted_too() -> None:
    base = memory()
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    result = merge.merge_texts(*_texts(base, base.copy(title=f"use {token}"),
                                       base.copy(title="use the vault")))
    assert [c.field for c in result.conflicts] == ["title"]
    assert token not in result.text and "use the vault" in result.text
    assert token not in result.conflicts[0].describe()
