from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.core import frontmatter, model
from memex.core.errors import InvalidMemory
from memex.core.ulid import is_ulid, new_ulid
from tests.helpers.tracing import untraced


def make(**kw: object) -> model.Memory:
    base: dict[str, object] = dict(
        id=new_ulid(), scope="project", title="Use pnpm", body="We use pnpm.",
        created_at="2026-12-01T06:00:00Z", updated_at="2026-12-01T06:00:00Z",
        review_state="draft",
    )
    base.update(kw)
    return model.Memory(**base)  # type: ignore[arg-type]


def test_emit_is_canonical_and_parses_back() -> None:
    m = make(tags=["a", "b:c", "x y"], review_history=[
        {"at": "2026-12-01T06:00:00Z", "by": "local:a@b", "from": "draft", "to": "proposed",
         "note": 'says "hi", ok'}])
    text = frontmatter.emit(m)
    parsed = frontmatter.parse(text)
    assert parsed.canonical
    back = model.from_front_matter(parsed.data, parsed.body)
    assert back == m
    assert text.startswith("---\nid: ")


def test_keys_in_protocol_order_and_empty_left_out() -> None:
    text = frontmatter.emit(make(importance="high"))
    keys = [line.split(":")[0] for line in text.split("---")[1].strip().splitlines()]
    assert keys == [k for k in model.FIELD_ORDER if k in keys]
    assert "superseded_by" not in keys and "tags" not in keys


def test_ruamel_reads_canonical_files_the_same_way() -> None:
    from ruamel.yaml import YAML

    m = make(title='Colon: "quoted" #hash', tags=["true", "123", "a"])
    header, _ = frontmatter.split(frontmatter.emit(m))
    data = frontmatter._plain_data(YAML(typ="rt").load(header))
    assert model.from_front_matter(data, m.body) == m


def _read_by_ruamel(scalar: str, version: tuple[int, int] | None) -> object:
    from ruamel.yaml import YAML

    with untraced():  # the reference reader (tests/helpers/tracing.py)
        yaml = YAML(typ="rt")
        if version:
            yaml.version = version
        loaded = yaml.load(f"v: {scalar}\n")
    return frontmatter._plain_data(loaded)["v"]


@pytest.mark.parametrize("text", ["0._", "0.1_", "0b1", "0x_a", "1:30", "1_0", "+1", "0o7_"])
def test_a_number_with_underscores_or_a_prefix_is_quoted(text: str) -> None:
    written = frontmatter._text_scalar(text, in_flow=False)
    assert written.startswith('"')
    assert _read_by_ruamel(written, None) == text


@settings(max_examples=300, deadline=None)
@given(text=st.from_regex(r"[0-9a-fA-Fxob_.:+eE-]{1,9}", fullmatch=True))
def test_every_scalar_written_plain_reads_back_as_the_same_text(text: str) -> None:
    for in_flow in (False, True):
        written = frontmatter._text_scalar(text, in_flow)
        for version in (None, (1, 1)):
            assert _read_by_ruamel(written, version) == text, (written, version)


@settings(max_examples=60, deadline=None)
@given(title=st.text(max_size=40), body=st.text(max_size=200),
       tags=st.lists(st.from_regex(r"[a-z0-9_.:-]{1,8}", fullmatch=True), max_size=4))
def test_round_trip_any_text(title: str, body: str, tags: list[str]) -> None:
    m = make(title=title.strip(), body=body.replace("\r", "").strip("\n").rstrip(),
             tags=list(dict.fromkeys(tags)))
    back, parsed = frontmatter.load(frontmatter.emit(m))
    assert back.title == m.title and back.tags == m.tags
    assert back.body == m.body.strip("\n").rstrip()


HAND_EDITED = """---
# a comment the user wrote
title: Hand written   # trailing comment
id: {id}
scope: project
schema_version: 2
revision: 3
type: decision
my_custom_key: keep me
tags:
  - one
  - two
created_at: 2026-11-30 10:00:00+01:00
updated_at: 2026-11-30T10:00:00Z
review_state: draft
---
Body here.
"""


def test_hand_edited_file_round_trip_keeps_comments_order_unknown_keys() -> None:
    mid = new_ulid()
    text = HAND_EDITED.format(id=mid)
    memory, parsed = frontmatter.load(text)
    assert not parsed.canonical
    assert memory.created_at == "2026-11-30T09:00:00Z"
    assert memory.extra == {"my_custom_key": "keep me"}
    memory.revision = 4
    memory.tags.append("three")
    out = frontmatter.rewrite(memory, parsed)
    assert "# a comment the user wrote" in out
    assert "# trailing comment" in out
    assert "my_custom_key: keep me" in out
    assert out.index("title:") < out.index("id:")  # the user's order is kept
    assert "created_at: 2026-11-30 10:00:00+01:00" in out  # untouched values keep their form
    again, _ = frontmatter.load(out)
    assert again.revision == 4 and again.tags == ["one", "two", "three"]


@pytest.mark.parametrize("text,needle", [
    ("no front matter\n", "no front matter"),
    ("---\nid: [unclosed\n---\nbody\n", "not valid YAML"),
    ("---\nid: x\n", "not closed"),
    ("---\n- a list\n---\n", "mapping"),
])
def test_malformed(text: str, needle: str) -> None:
    with pytest.raises(frontmatter.FrontMatterError, match=needle):
        frontmatter.load(text)


@pytest.mark.parametrize("field,value,needle", [
    ("scope", "team", "reserved"),
    ("scope", "public", "reserved"),
    ("type", "banana", "unknown type"),
    ("status", "zombie", "unknown status"),
    ("created_at", "yesterday-ish", "created_at"),
    ("revision", "three", "whole number"),
])
def test_invalid_values(field: str, value: str, needle: str) -> None:
    text = frontmatter.emit(make()).replace("---\nid:", f"---\n{field}: {value}\nid:", 1)
    if field in ("scope", "type", "created_at", "revision", "status"):
        lines = [ln for ln in text.splitlines() if not ln.startswith(f"{field}: ")
                 or ln == f"{field}: {value}"]
        text = "\n".join(lines) + "\n"
    with pytest.raises(InvalidMemory, match=needle):
        frontmatter.load(text)


def test_ulid() -> None:
    ids = [new_ulid() for _ in range(1000)]
    assert all(is_ulid(i) for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 1000


def test_round_trip_keeps_style_of_lists_and_times() -> None:
    mid = new_ulid()
    text = (f"---\n# note\nid: {mid}\nscope: project\ntags: [a, b]\npaths:\n  - src/**\n"
            "created_at: 2026-11-30T10:00:00Z\nupdated_at: 2026-11-30T10:00:00Z\n"
            "review_history:\n  - at: 2026-11-30T10:00:00Z\n    by: local:x\n"
            "    from: draft\n    to: proposed\n---\nbody\n")
    memory, parsed = frontmatter.load(text)
    memory.tags.append("c")
    memory.paths.append("docs/**")
    memory.updated_at = "2026-12-01T08:13:26Z"
    memory.review_history.append({"at": "2026-12-01T08:13:26Z", "by": "local:y",
                                  "from": "proposed", "to": "approved"})
    out = frontmatter.rewrite(memory, parsed)
    assert "tags: [a, b, c]" in out
    assert "paths:\n  - src/**\n  - docs/**\n" in out
    assert "updated_at: 2026-12-01T08:13:26Z\n" in out
    assert "created_at: 2026-11-30T10:00:00Z\n" in out
    assert "  - at: 2026-11-30T10:00:00Z\n    by: local:x\n" in out  # old entry untouched
    assert "{at: 2026-12-01T08:13:26Z, by: local:y, from: proposed, to: approved}" in out
    again, _ = frontmatter.load(out)
    assert again.review_history[-1]["to"] == "approved" and again.tags == ["a", "b", "c"]
    assert again.updated_at == "2026-12-01T08:13:26Z"


@pytest.mark.parametrize("key", ["x_\nreview_state", "x_: 1\nsuperseded_by",
                                 "x_\u202e\x85", "has space: colon", "#hash", "'quote"])
def test_an_unknown_key_from_a_file_is_written_back_as_it_was_read(key: str) -> None:
    """A key that arrived by git (kept in `extra`) was written raw: a newline in it made a
    rewrite (`update`, a fix) emit an unreadable file or a line of its own."""
    m = make(review_state="draft", scope="project", repo_id="git-origin-sha256:x",
             extra={key: "01M8WGS9P6ZYYK3G5VS3MJS4P6"})
    back = frontmatter.load(frontmatter.emit(m))[0]
    assert back.extra == {key: "01M8WGS9P6ZYYK3G5VS3MJS4P6"}
    assert back.review_state == "draft" and back.superseded_by is None
