"""The refresh plan is a pure function of two maps of file states."""

from __future__ import annotations

from memex.index.plan import FileState, needs_hash, plan_changes


def st(size: int, mtime: int, digest: str | None = None) -> FileState:
    return FileState(size, mtime, mtime, 1, digest)


def test_unchanged_tree_plans_nothing() -> None:
    old = {"a.md": st(10, 1, "h1"), "b.md": st(20, 2, "h2")}
    new = {"a.md": st(10, 1), "b.md": st(20, 2)}
    assert needs_hash(old, new) == []
    assert plan_changes(old, new).empty


def test_new_changed_deleted() -> None:
    old = {"a.md": st(10, 1, "h1"), "b.md": st(20, 2, "h2")}
    new = {"a.md": st(11, 5, "h1b"), "c.md": st(30, 3, "h3")}
    assert needs_hash(old, new) == ["a.md", "c.md"]
    plan = plan_changes(old, new)
    assert plan.changed == ["a.md"]
    assert plan.new == ["c.md"]
    assert plan.deleted == ["b.md"]
    assert plan.moved == []
    assert plan.to_read == ["c.md", "a.md"]


def test_stat_change_with_same_content_is_only_touched() -> None:
    old = {"a.md": st(10, 1, "h1")}
    plan = plan_changes(old, {"a.md": st(10, 9, "h1")})
    assert plan.touched == ["a.md"] and plan.to_read == []
    # positive control: the same stat change with other content is a change
    assert plan_changes(old, {"a.md": st(10, 9, "other")}).changed == ["a.md"]


def test_stat_change_without_hash_counts_as_changed() -> None:
    plan = plan_changes({"a.md": st(10, 1, "h1")}, {"a.md": st(12, 2)})
    assert plan.changed == ["a.md"]


def test_move_is_recognised_by_content() -> None:
    old = {"x/a.md": st(10, 1, "h1"), "x/b.md": st(20, 2, "h2")}
    new = {"y/a.md": st(10, 7, "h1"), "x/b.md": st(20, 2)}
    plan = plan_changes(old, new)
    assert plan.moved == [("x/a.md", "y/a.md")]
    assert plan.new == [] and plan.deleted == []


def test_two_moves_of_identical_content_pair_up_once_each() -> None:
    old = {"a.md": st(5, 1, "same"), "b.md": st(5, 1, "same")}
    new = {"c.md": st(5, 2, "same"), "d.md": st(5, 2, "same"), "e.md": st(5, 2, "same")}
    plan = plan_changes(old, new)
    assert sorted(dst for _, dst in plan.moved) == ["c.md", "d.md"]
    assert plan.new == ["e.md"]
    assert plan.deleted == []


def test_new_file_with_unrelated_content_is_not_a_move() -> None:
    plan = plan_changes({"a.md": st(5, 1, "h1")}, {"b.md": st(5, 1, "h2")})
    assert plan.new == ["b.md"] and plan.deleted == ["a.md"] and plan.moved == []


def test_empty_maps() -> None:
    assert plan_changes({}, {}).empty
    assert plan_changes({}, {"a.md": st(1, 1, "h")}).new == ["a.md"]
    assert plan_changes({"a.md": st(1, 1, "h")}, {}).deleted == ["a.md"]
