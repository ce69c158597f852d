"""One bad memory file never stops a command (issue 13, items 1 and 2): a malformed
record is quarantined at the parse boundary, reported with its reason, skipped and
left untouched, and every other memory is still served. Alias bombs are refused
before anything is expanded. A fuzz test runs the read commands over mutated files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex.core import frontmatter, model
from memex.core.errors import InvalidMemory
from memex.storage import store
from tests.helpers import invoke
from tests.helpers.memfiles import commit_all, memory, write

GOOD_TITLE = "Use pnpm for installs"

# (the line to replace, its replacement): each from the list.
MUTATIONS = {
    "revision-null": (r"^revision: .*$", "revision: ~"),
    "id-null": (r"^id: .*$", "id: ~"),
    "title-null": (r"^title: .*$", "title: ~"),
    "type-null": (r"^type: .*$", "type: ~"),
    "status-null": (r"^status: .*$", "status: ~"),
    "importance-null": (r"^importance: .*$", "importance: ~"),
    "history-text": (r"^source: .*$", 'review_history: "text"'),
    "history-list-of-text": (r"^source: .*$", "review_history: [text]"),
    "history-list-of-null": (r"^source: .*$", "review_history: [~]"),
    "title-surrogate": (r"^title: .*$", 'title: "\\ud800"'),
    "tags-alias": (r"^title: .*$", "title: &a hello\ntags: [*a]"),
}


def alias_bomb(mem_id: str, levels: int = 9) -> str:
    """A 'billion laughs' header: about 600 bytes that expand to 9**levels strings."""
    lines = ["---", f"id: {mem_id}", "schema_version: 2", "scope: project",
             'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join([*lines, "---", "", "boom", ""])


def _mutate(text: str, pattern: str, replacement: str) -> str:
    out, count = re.subn(pattern, lambda _m: replacement, text, count=1, flags=re.M)
    assert count == 1, pattern
    return out


def test_bad_repo_files_never_stop_a_command(repo: Path) -> None:
    """Every malformed record of the issue, committed at once beside a good memory."""
    good = write(repo, memory(title=GOOD_TITLE, body="We use pnpm."))
    invoke("init")
    bad: dict[Path, bytes] = {}
    for name in [*MUTATIONS, "alias-bomb"]:
        path = write(repo, memory(title="Broken one", body=name, importance="high"))
        if name == "alias-bomb":
            path.write_text(alias_bomb(path.stem), encoding="utf-8")
        else:
            path.write_text(_mutate(path.read_text(encoding="utf-8"), *MUTATIONS[name]),
                            encoding="utf-8")
        bad[path] = path.read_bytes()
    commit_all(repo, "a teammate's broken files")
    # catch_exceptions=False: a traceback fails the test.
    for args in (["list"], ["search", "pnpm"], ["context"], ["doctor"], ["health"],
                 ["reindex", "--full"], ["show", good.stem]):
        result = invoke(*args)
        assert result.exit_code in (0, 1), (args, result.output)
        if args[0] in ("list", "search", "context", "show"):
            assert GOOD_TITLE in result.stdout, (args, result.stdout)
    captured = invoke("capture", "a fresh memory", "--json")
    assert captured.exit_code == 0, captured.output
    verify = invoke("verify")
    assert verify.exit_code == 1
    assert f"parse ({len(bad)})" in verify.output, verify.output
    some = next(iter(bad))
    shown = invoke("show", some.stem)
    assert shown.exit_code == 1 and "cannot be read" in shown.stderr
    report = json.loads(invoke("reindex", "--json").stdout)
    assert sorted(q["path"] for q in report["quarantined"]) == sorted(str(p) for p in bad)
    for path, before in bad.items():
        assert path.read_bytes() == before


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_validation_happens_at_the_parse_boundary(repo: Path, name: str) -> None:
    """store.read is the boundary: it raises InvalidMemory with a reason, and nothing
    else (no TypeError, AttributeError or UnicodeError past it)."""
    path = write(repo, memory())
    path.write_text(_mutate(path.read_text(encoding="utf-8"), *MUTATIONS[name]),
                    encoding="utf-8")
    with pytest.raises(InvalidMemory) as caught:
        store.read(path, store.Home("repo", path.parent))
    assert str(caught.value)


def test_alias_refused_before_expansion() -> None:
    with pytest.raises(frontmatter.FrontMatterError, match="anchor or alias"):
        frontmatter.parse(alias_bomb("01ARZ3NDEKTSV4RRFFQ69G5FAV", levels=12))
    with pytest.raises(frontmatter.FrontMatterError, match="anchor or alias"):
        frontmatter.parse("---\nid: x\nscope: project\nk: &x v\n---\n")


def test_null_optional_fields_still_mean_no_value() -> None:
    text = ("---\nid: 01ARZ3NDEKTSV4RRFFQ69G5FAV\nschema_version: 2\nscope: project\n"
            "supersedes: ~\nreview_state:\ntags: ~\npinned: ~\n---\n\nbody\n")
    mem, _ = frontmatter.load(text)
    assert mem.supersedes is None and mem.tags == [] and mem.pinned is False


# ---------------------------------------------------------------- fuzz

_HOSTILE_VALUES = [
    "~", "", "[~]", "[[a]]", "{a: b}", "[{a: 1}]", "99999999999999999999999999", "-1",
    "1.5", "true", '"\\ud800"', '"\\U0001F600"', "&a x", "*a", "!!binary aGVsbG8=",
    "2026-01-01", "0001-01-01T00:00:00+23:59", "x" * 5000, "'unterminated", "[a, b",
    "|\n  block text", "- a\n- b", '"tab\\there"', "!!set {a, b}", "2026-13-45T99:99:99Z",
]
_KEYS = [*model.FIELD_ORDER, "custom_key"]


@st.composite
def _hostile_file(draw: st.DrawFn, mem_id: str) -> bytes:
    base = frontmatter.emit(memory(id=mem_id, title="Fuzzed", body="fuzz body"))
    lines = base.split("\n")
    header_end = lines.index("---", 1)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(_KEYS))
        value = draw(st.sampled_from(_HOSTILE_VALUES))
        line = f"{key}: {value}"
        existing = [i for i in range(1, header_end) if lines[i].startswith(f"{key}:")]
        if existing and draw(st.booleans()):
            lines[existing[0]] = line
        else:  # a new line, possibly a duplicate key
            lines.insert(draw(st.integers(1, header_end)), line)
            header_end += 1
    text = "\n".join(lines)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 9)) == 0:
        data = data.replace(b"fuzz body", b"fuzz \xff\xfe body")
    return data


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                 HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_files_never_crash_hang_or_change(repo: Path, data: st.DataObject) -> None:
    folder = repo / ".memex"
    for old in folder.glob("*.md"):
        old.unlink()
    good = write(repo, memory(title=GOOD_TITLE, body="We use pnpm."))
    files: dict[Path, bytes] = {}
    for _ in range(4):
        mem_id = memory().id
        content = data.draw(_hostile_file(mem_id))
        path = folder / f"{mem_id}.md"
        path.write_bytes(content)
        files[path] = content
    for args in (["list"], ["search", "fuzzed"], ["search", "pnpm"], ["verify"],
                 ["export", "--output", str(repo.parent / "out.jsonl")],
                 *[["show", p.stem] for p in files]):
        result = invoke(*args)
        assert result.exit_code in (0, 1), (args, result.output)
    assert GOOD_TITLE in invoke("list").stdout
    for path, content in files.items():
        assert path.read_bytes() == content
    assert good.exists()
