"""The fast front matter reader agrees with the full YAML parser (ruamel): on any
front matter, both give the same memory record, or both refuse the file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memex.core import frontmatter, model
from memex.core.errors import InvalidMemory
from tests.helpers.tracing import untraced

MID = "01JD6Z3S0V8F4K2M9N7P5Q1R3T"
OTHER = "01JD6Z3S0V8F4K2M9N7P5Q1R3V"


def record(text: str, fast: bool) -> tuple[str, Any]:
    """("ok", the memory) or ("refused", None)."""
    try:
        parsed = frontmatter.parse(text, fast=fast)
        return "ok", model.from_front_matter(parsed.data, parsed.body)
    except InvalidMemory:
        return "refused", None


class _UntracedYAML:
    """ruamel's YAML object with its parsing run without coverage's tracer (ruamel is the
    reference here, not our code; tests/helpers/tracing.py): frontmatter's own code
    around it stays measured."""

    def __init__(self, yaml: Any) -> None:
        self._yaml = yaml

    def load(self, text: str) -> Any:
        with untraced():
            return self._yaml.load(text)

    def parse(self, text: str) -> Iterator[Any]:
        events = self._yaml.parse(text)
        while True:
            with untraced():
                event = next(events, _END)
            if event is _END:
                return
            yield event


_END = object()


def agree(text: str) -> None:
    yaml = frontmatter._yaml
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frontmatter, "_yaml", lambda: _UntracedYAML(yaml()))
        fast, full = record(text, True), record(text, False)
    assert fast == full, (text, fast, full)


# Pieces of YAML a person might type, the awkward ones included.
_WORD_CHARS = "abcxyz09 -_:#'\"\\[]{},.&*!|>%@`~?/\u00e9\u4f9d"
_words = st.text(_WORD_CHARS, min_size=0, max_size=12)
_plain_words = st.sampled_from([
    "pnpm", "use pnpm", "a: b", "a:b", "x #c", "x#c", "-x", "- x", "?x", ":x", "true",
    "True", "TRUE", "tRue", "false", "null", "Null", "~", "yes", "No", "on", "y", "0",
    "012", "12", "-3", "+4", "1.5", ".5", ".inf", "0x1f", "0o7", "1_000", "1e3",
    "2026-12-01", "2026-12-01T06:00:00Z", "2026-12-01 06:00:00", "2026-13-45T99:00:00Z",
    "<<", "=", "a, b", "[a]", "{a: 1}", "&a x", "*a", "!!str x", "|", ">", "%x", "@x",
    "`x`", "x:", "x: ", "'q'", '"q"', "caf\u00e9", "\u4f9d\u8d56", "a  b", "a ", " a",
])


@st.composite
def scalars(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "word", "double", "single", "escape", "time"]))
    if kind == "plain":
        return draw(_plain_words)
    if kind == "word":
        return draw(_words)
    if kind == "double":
        return '"' + draw(_words).replace("\\", "\\\\").replace('"', '\\"') + '"'
    if kind == "single":
        return "'" + draw(_words).replace("'", "''") + "'"
    if kind == "escape":
        return '"' + draw(st.sampled_from([
            "\\n", "\\t", "\\u00e9", "\\ud800", "\\ud83d\\ude00", "\\x41", "\\e", "\\N",
            "\\/", "\\\\", "\\\"", "\\U0001F600", "\\0", "\\ ", "\\_", "\\q"])) + "x\""
    return draw(st.sampled_from(['"2026-12-01T06:00:00Z"', "2026-12-01T06:00:00Z",
                                 "'2026-12-01T06:00:00Z'", "2026-12-01T06:00:00+02:00",
                                 "2026-12-01"]))


@st.composite
def block_mappings(draw: st.DrawFn) -> list[str]:
    """List items that are block mappings (`- at: x` and `  by: y` under it), their keys
    at the item's column or off it, some values empty, nested, continued or odd."""
    seq = draw(st.sampled_from(["", "  ", "    "]))
    gap = draw(st.sampled_from([" ", " ", "  "]))
    column = len(seq) + 1 + len(gap)
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        pairs = draw(st.lists(st.tuples(
            st.sampled_from(["at", "by", "to", "from", "note", "at", "on", "x-y", "Yes"]),
            st.one_of(scalars().map(lambda v: " " + v), st.sampled_from(
                ["", " ", " # c", " [a, b]", " {a: 1}", " |", " x\n" + " " * (column + 2) + "y",
                 " x\n" + " " * column + "y", " &a x", "x"]))), min_size=1, max_size=4))
        for n, (key, value) in enumerate(pairs):
            if n == 0:
                lead = f"{seq}-{gap}"
            else:
                lead = " " * draw(st.sampled_from([column, column, column, column - 1,
                                                   column + 1]))
            lines.append(f"{lead}{key}:{value}")
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from([f"{seq}- plain", "# between", "",
                                               " " * column + "# indented comment"])))
    return lines


@st.composite
def values(draw: st.DrawFn) -> list[str]:
    """The text after `key:` (one line), or that line and the lines below it."""
    kind = draw(st.sampled_from(["scalar", "scalar", "flow", "block", "history", "empty",
                                 "odd", "mappings"]))
    if kind == "scalar":
        return [" " + draw(scalars())]
    if kind == "flow":
        items = draw(st.lists(scalars(), max_size=3))
        sep = draw(st.sampled_from([", ", ",", " , "]))
        tail = draw(st.sampled_from(["", ",", " "]))
        return [" [" + sep.join(items) + tail + "]"]
    if kind == "block":
        indent = draw(st.sampled_from(["", "  ", "    "]))
        items = draw(st.lists(scalars(), min_size=1, max_size=3))
        return ["", *(f"{indent}- {item}" for item in items)]
    if kind == "history":
        entries = draw(st.lists(st.fixed_dictionaries({
            "at": scalars(), "by": st.sampled_from(["alice", '"local:a@b"', "a:b", "'x y'"]),
            "to": st.sampled_from(["approved", "proposed", '"draft"', "null"])}),
            min_size=1, max_size=2))
        return ["", *("  - {" + ", ".join(f"{k}: {v}" for k, v in e.items()) + "}"
                      for e in entries)]
    if kind == "mappings":  # block mappings in list items, as open-memex writes history
        return ["", *draw(block_mappings())]
    if kind == "empty":
        return [draw(st.sampled_from(["", " ", " # nothing", " ~", " null"]))]
    return [draw(st.sampled_from([
        " |\n  text", " >\n  folded", " &a x", " *a", " !!str 5", " {a: 1}",
        " [a, [b]]", " plain\n  continued", ' "open', " 'open", " x\n x2",
        " [a, b", " a # c", ' "a" # c', ' "a"#c', " [a] # c", "\tx", " x\t"]))]


_KEYS = ["title", "tags", "aliases", "paths", "status", "importance", "review_state",
         "updated_at", "created_at", "expires_at", "revision", "pinned", "review_history",
         "related", "supersedes", "note", "x-custom", "true", "Tags", "source"]
_BASE = [("id", f" {MID}"), ("scope", " project"), ("schema_version", " 2")]


@st.composite
def front_matter(draw: st.DrawFn) -> str:
    lines: list[tuple[str, list[str]]] = []
    keys = draw(st.lists(st.sampled_from(_KEYS), max_size=6))
    base = draw(st.permutations(_BASE))
    fields: list[tuple[str, list[str]]] = [(k, [v]) for k, v in base]
    fields += [(k, draw(values())) for k in keys]
    fields = draw(st.permutations(fields))
    for key, value in fields:
        comment = draw(st.sampled_from(["", "", "", "# a comment", "  # indented"]))
        if comment:
            lines.append(("", [comment]))
        lines.append((key, value))
    out = []
    for key, value in lines:
        if not key:
            out.append(value[0])
            continue
        first, *rest = value
        out.append(f"{key}:{first}")
        out.extend(rest)
    return "---\n" + "\n".join(out) + "\n---\n\nThe body.\n"


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front_matter())
@example("---\nid: " + MID + "\nscope: project\ntitle: 'it''s'\ntags: [\"a\", b]\n"
         "updated_at: \"2026-12-01T06:00:00Z\" # when\n---\n\nbody\n")
@example("---\nid: " + MID + "\nscope: project\ntags:\n- a\n-  b\n---\n")
@example("---\nid: " + MID + "\nscope: project\nreview_history:\n"
         "  - {at: 2026-12-01T06:00:00Z, by: alice, to: approved}\n---\n")
@example("---\nid: " + MID + "\nscope: project\nrelated: [" + OTHER + ",]\n---\n")
def test_fast_reader_agrees_with_ruamel(text: str) -> None:
    agree(text)


@settings(max_examples=150, deadline=None)
@example(title="\x7f\x85\u2028", tags=[], note="\x9f\ufeff")  # raw, YAML refuses them
@given(title=st.text(max_size=30), tags=st.lists(st.text(max_size=8), max_size=3),
       note=st.text(max_size=20))
def test_canonical_files_agree(title: str, tags: list[str], note: str) -> None:
    try:
        memory = model.Memory(
            id=MID, scope="project", title=title, body="b", tags=model.normalise_tags(tags),
            created_at="2026-12-01T06:00:00Z",
            review_history=[{"at": "2026-12-01T06:00:00Z", "by": "local:a", "note": note}])
        text = frontmatter.emit(memory)
    except InvalidMemory:
        return
    agree(text)


def test_the_fast_reader_reads_hand_written_files() -> None:
    """Quoted strings, flow and block lists, other key order and comments are read
    without ruamel (the whole point), and give the canonical file's record."""
    text = ("---\n# by hand\nscope: 'project'\ntags:\n  - deploy\n  - \"ci\"\n"
            "updated_at: \"2026-12-01T06:00:00Z\"  # when\nid: " + MID + "\n"
            "aliases: [\"ship it\", 'roll out']\nrevision: 3\n---\n\nBody.\n")
    parsed = frontmatter.parse(text)
    assert frontmatter.read_plain(parsed.raw_header) is not None
    assert not parsed.canonical
    memory = model.from_front_matter(parsed.data, parsed.body)
    assert memory.tags == ["deploy", "ci"] and memory.aliases == ["ship it", "roll out"]
    assert memory.updated_at == "2026-12-01T06:00:00Z" and memory.revision == 3
    agree(text)


def test_open_memex_block_history_is_read_without_ruamel() -> None:
    """open-memex writes its files with block lists and each history entry as a block
    mapping under `- `: the fast reader reads them (ruamel took ~2-5 ms a file, most of
    an open-memex folder's import) and gives ruamel's record."""
    header = ("id: " + MID + "\nscope: \"project\"\ntags:\n  - process\n"
              "created_at: \"2026-12-01T18:50:33.211Z\"\nproposed_by: alice\n"
              "approved_by: null\nreview_history:\n  - at: \"2026-12-01T18:50:41.324Z\"\n"
              "    by: alice\n    from: draft\n    to: proposed\n"
              "    note: submitted to branch main\n"
              "  -   at: 2026-12-02T06:00:00Z  # a plain time, as in a flow entry\n"
              "      by: \"bob\"\n")
    data = frontmatter.read_plain(header)
    assert data is not None
    assert data["review_history"] == [
        {"at": "2026-12-01T18:50:41.324Z", "by": "alice", "from": "draft", "to": "proposed",
         "note": "submitted to branch main"},
        {"at": "2026-12-02T06:00:00Z", "by": "bob"}]
    agree(f"---\n{header}---\n\nWe deploy on Fridays\n")
    for odd in ("  - at: x\n   by: y\n", "  - at: x\n     by: y\n", "  - at:\n    by: y\n",
                "  - at: x\n    by:\n      - y\n", "  - at: x\n    at: y\n",
                "  - at: x\n    on: y\n", "  - note: a\n      continued\n",
                "  - at: x\n    by: y\n  by: z\n"):
        assert frontmatter.read_plain("review_history:\n" + odd) is None, odd
        agree(f"---\nid: {MID}\nscope: project\nreview_history:\n{odd}---\n")


def test_what_the_fast_reader_leaves_to_ruamel() -> None:
    for header in ("a: &x 1\nb: *x\n", "a: |\n  text\n", "a: !!str 5\n", "a:\n  b: 1\n",
                   "a: 1\na: 2\n", "a: 1.5\n", "a: yes\n", "a: plain\n  more\n",
                   "a: \"\\ud83d\\ude00\"\n", "a:\tb\n", "true: 1\n", "a: 2026-12-01\n"):
        assert frontmatter.read_plain(header) is None, header


@pytest.mark.parametrize("word", ["0o7", "0O17", "-0o7", "0x1F", "0b11", "1_000", "+5", ".5",
                                  "1e3", "07", "0o8", "1:30"])
def test_number_words_read_as_ruamel_reads_them(word: str) -> None:
    """YAML 1.2's number forms (0o octal, found by hypothesis) are typed by ruamel; a
    plain title that is one must not reach the model as the raw text."""
    agree(f"---\nid: {MID}\nscope: project\nschema_version: 2\ntitle: {word}\n---\n\nBody.\n")


@pytest.mark.parametrize("key", ["note", "review_history", "status_history"])
def test_a_timestamp_in_a_flow_mapping_is_read_as_ruamel_reads_it(key: str) -> None:
    """`at: <timestamp>` in a flow mapping is a history entry's time (its text) only under
    the history fields; under another key ruamel types it (found by hypothesis: `note:`
    holding `{at: 2026-12-01T06:00:00Z, ...}` was a string fast and a timestamp in full)."""
    agree(f"---\nid: {MID}\nscope: project\nschema_version: 2\n{key}:\n"
          "  - {at: 2026-12-01T06:00:00Z, by: alice, to: approved}\n---\n\nThe body.\n")


def test_aliases_are_still_refused_before_expansion() -> None:
    text = f"---\nid: {MID}\nscope: project\nx: &a [1]\ny: *a\n---\n"
    assert record(text, True) == ("refused", None)


def test_duplicate_keys_are_still_refused() -> None:
    assert record(f"---\nid: {MID}\nscope: project\nscope: personal\n---\n", True) == (
        "refused", None)


def test_the_refused_characters_are_exactly_what_yaml_does_not_print() -> None:
    """The reader's refused set is written as the few characters refused (it compiles in
    well under a millisecond); it must equal the complement of YAML's printable set,
    checked at every edge of the ranges and at a sample in between."""
    printable = [(0x0A, 0x0A), (0x20, 0x7E), (0xA0, 0x2027), (0x202A, 0xD7FF),
                 (0xE000, 0xFEFE), (0xFF00, 0xFFFD), (0x10000, 0x10FFFF)]
    points = {0, 0x10FFFF, *range(0, 0x10FFFF, 997)}
    for low, high in printable:
        points.update({low - 1, low, low + 1, high - 1, high, high + 1})
    for point in sorted(p for p in points if 0 <= p <= 0x10FFFF):
        allowed = any(low <= point <= high for low, high in printable)
        refused = frontmatter._NOT_SIMPLE.search(chr(point)) is not None
        assert refused != allowed, hex(point)


def test_the_ascii_look_for_refused_characters_agrees_with_the_class() -> None:
    """read_plain's look (_simple: str.isprintable for an ASCII header) refuses exactly
    what _NOT_SIMPLE finds: every ASCII character alone, at a line's start and end and
    between lines, and headers with other characters (the class decides those)."""
    heads = []
    for point in range(0x80):
        char = chr(point)
        heads += [char, f"a: b{char}\n", f"{char}a: b\n", f"a: b\n{char}\nc: d\n"]
    heads += ["a: ü\n", "a: \x85\n", "a: \u2028\n", "a: 日本\t\n", "a: \ufeff\n", ""]
    for head in heads:
        assert frontmatter._simple(head) == (frontmatter._NOT_SIMPLE.search(head) is None), \
            repr(head)


def test_the_surrogate_look_agrees_with_the_class() -> None:
    """_check_text's look over a non-ASCII text (a strict UTF-8 encode) finds a surrogate
    exactly when _SURROGATE does: lone ones and pairs written as two code points, at the
    start, middle and end, beside astral characters, which are no surrogates."""
    texts = ["ü", "日本", "\U0001f600", "a\U0001f600b", "\uffff\ue000\ud7ff", ""]
    for point in (0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xDABC):
        char = chr(point)
        texts += [char, f"ü{char}", f"{char}日", f"a{char}\U0001f600", "\ud83d\ude00"]
    for text in texts:
        assert frontmatter._has_surrogate(text) == (
            frontmatter._SURROGATE.search(text) is not None), repr(text)
    with pytest.raises(frontmatter.FrontMatterError, match="surrogate"):
        frontmatter.parse(f"---\nid: {MID}\nscope: project\n---\n\nü \udc80 body\n")


def test_a_short_text_is_written_the_same_from_the_cache_in_a_block_and_a_flow() -> None:
    """_scalar keeps short texts' results apart for block and flow values (a colon is
    plain in one, quoted in the other): a cached answer equals a fresh one."""
    from memex.core import frontmatter

    values = ["project", "a: b", "a:b", "yes", "1.0", "2026-11-01T00:00:00Z", "2026-11-01",
              "", "ünï", "x\x7f", "local:me@example.com", "#tag", "null", "x" * 64,
              "y" * 65]
    for _ in range(2):
        for value in values:
            for in_flow in (False, True):
                assert frontmatter._scalar(value, in_flow) == frontmatter._text_scalar(
                    value, in_flow)
    assert frontmatter._scalar("a:b", True) != frontmatter._scalar("a:b", False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(
    st.sampled_from(["scope", "status", "title", "role", "note", "x-tool", "tags"]),
    st.one_of(st.text(max_size=70), st.sampled_from(["true", "12", "a: b", "project", "#x"]),
              st.booleans(), st.integers(), st.lists(st.text(max_size=5), max_size=2))),
    max_size=6))
def test_a_header_is_written_the_same_from_the_line_cache(items: list[tuple[str, Any]]) -> None:
    """emit_header keeps the lines of short text values: a header written with them
    cached is the one written without (each line made by _emit_value)."""
    data = dict(items)
    fresh = "".join(frontmatter._emit_value(k, v) + "\n" for k, v in data.items())
    assert frontmatter.emit_header(data) == fresh  # the cache as earlier examples left it
    assert frontmatter.emit_header(data) == fresh  # these lines cached
    for value in ("p", "pr", "project"):  # a value is not taken for another
        assert frontmatter.emit_header({"title": value}) == f"title: {value}\n"
    # the same text under another key, and True beside 1, are not taken for each other
    assert frontmatter.emit_header({"a": "1", "b": "1", "c": True, "d": 1}) == \
        "a: \"1\"\nb: \"1\"\nc: true\nd: 1\n"


def _flow_of(read: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", read(text)
    except frontmatter._Unsure:
        return "unsure", None


_list_words = st.one_of(_plain_words, _words, st.sampled_from(
    ["a", "ab.c", "x@y", "a+b", "a/b", "Yes", "nO", "Y", "n", "ON", "tag-1", "a_b"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_list_words, scalars()), max_size=4),
       st.sampled_from([", ", ",", " , ", ",  "]), st.sampled_from(["", " ", ",", " # c"]),
       st.booleans())
@example(["a", "b"], ", ", "", False)
@example(["a, b", "c"], ", ", "", True)
@example(["true", "x"], ", ", "", False)
@example(["a\\\\n", "b"], ", ", "", True)
def test_a_flow_list_read_whole_is_read_as_item_by_item(
        items: list[str], sep: str, tail: str, quote: bool) -> None:
    """_flow_list's whole reads ([a, b], ["a", "b"]) give what _flow gives, item by
    item, for any flow list, the awkward ones included: the same list, or both unsure."""
    if quote:
        items = ['"' + item.replace('"', "") + '"' for item in items]
    text = "[" + sep.join(items) + "]" + tail
    assert _flow_of(frontmatter._flow_list, text) == _flow_of(frontmatter._flow, text), text
