"""The in-process `.memexconfig` reader (memex.storage.configfile) agrees with `git config
--file F --null --list` on every file it accepts, and declines (None: git is asked) the
rest."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memex.storage import configfile, gitio
from tests.helpers.tracing import untraced


def _git_map(path: Path) -> dict[str, str] | None:
    """What config_map made of git's answer before the in-process reader (None: git fails)."""
    with untraced():  # the reference: git (tests/helpers/tracing.py)
        proc = subprocess.run(["git", "config", "--null", "--file", str(path), "--list"],
                              capture_output=True, text=True, encoding="utf-8",
                              errors="replace")
    return gitio._config_records(proc.stdout) if proc.returncode == 0 else None


ACCEPTED = [
    "",
    "\n",
    "[memex]\n\tdir = .memex\n",
    "[memex]\n\tdir = docs/memory\n\tmaxBytes = 200000\n",
    "[memex]\n\tdir = a\n[memex]\n\tdir = b\n",  # the last value wins, as in config_map
    "[Memex]\n\tMaxBytes = 64k\n",  # keys lower-cased
    '[branch "Feature/X"]\n\tmemexBase = abc\n',  # subsection kept, then lower-cased
    "# a comment\n; another\n[memex]\n\n  dir=x\n\tflag\n\tempty =\n",
    "[memex]\n\tteamBranch = memex/main   \n\tnote = two  words here\n",
    "[memex]\n\tdir = caf\u00e9\n",
    "[memex]\n\tdir = .memex",  # no final newline
    "[memex]\n\turl = https://example.com/a?b=c&d\n",
]

DECLINED = [
    '[memex]\n\tdir = "quoted"\n',
    "[memex]\n\tdir = a\\tb\n",
    "[memex]\n\tdir = a \\\n b\n",  # continuation line
    "[memex]\n\tdir = x # comment\n",
    "[memex]\n\tdir = x ; comment\n",
    "[memex]\n\tdir = a\tb\n",
    "[memex.sub]\n\tdir = x\n",
    '[memex  "sub"]\n\tdir = x\n',
    '[memex "a\\"b"]\n\tdir = x\n',
    "[include]\n\tpath = other\n",
    '[includeIf "gitdir:/x/"]\n\tpath = other\n',
    "\ufeff[memex]\n\tdir = x\n",
    "[memex]\r\n\tdir = x\r\n",
    "[memex]\n\tdir = a\rb\n",
    "[memex]\n\tdir = a\x0bb\n",
    "[memex] dir = x\n",
    "dir = x\n",  # no section: git refuses the file
    "[memex]\n\t1dir = x\n",
    "[memex]\n\tdir\t= x\n",
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_accepted_files_read_as_git_reads_them(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".memexconfig"
    path.write_bytes(text.encode("utf-8"))
    assert configfile.read(path) is not None
    assert configfile.read(path) == _git_map(path)


@pytest.mark.parametrize("text", DECLINED)
def test_other_files_are_left_to_git(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".memexconfig"
    path.write_bytes(text.encode("utf-8"))
    assert configfile.read(path) is None
    assert gitio.config_map(tmp_path, path) == (_git_map(path) or {})


def test_git_written_file_is_read_in_process(tmp_path: Path) -> None:
    path = tmp_path / ".memexconfig"
    for key, value in (("memex.dir", "docs/memory"), ("memex.maxBytes", "200000"),
                       ("memex.teamBranch", "memex/main"), ('branch.x y.memexBase', "a b")):
        subprocess.run(["git", "config", "--file", str(path), key, value], check=True)
    assert configfile.read(path) == _git_map(path)
    assert configfile.read(path) == {"memex.dir": "docs/memory", "memex.maxbytes": "200000",
                                     "memex.teambranch": "memex/main",
                                     "branch.x y.memexbase": "a b"}


def test_unreadable_file_is_left_to_git(tmp_path: Path) -> None:
    path = tmp_path / ".memexconfig"
    path.write_bytes(b"[memex]\n\tdir = \xff\n")
    assert configfile.read(path) is None
    assert configfile.read(tmp_path / "missing") is None


_NAME = st.sampled_from(["memex", "Memex", "branch", "core", "a-b", "x1", "1x"])
_ODD_NAME = st.sampled_from(["include", "includeIf", "a.b", "", "a_b"])
_SUB = st.sampled_from(["", "main", "Feature/X", "x y", "caf\u00e9"])
_ODD_SUB = st.sampled_from(['a"b', "a\\b", "a\\\\b", "a\\\"b"])
_KEY = st.sampled_from(["dir", "maxBytes", "x-y", "k1", "D"])
_ODD_KEY = st.sampled_from(["1k", "-k", "a_b", "k\u00e9"])
_VALUE = st.text(alphabet=st.sampled_from(list("ab9./:= \u00e9")), max_size=8)
_ODD_VALUE = st.tuples(_VALUE, st.sampled_from(["\t", '"', "\\", "\\t", "#", ";", "\r"]),
                      _VALUE).map("".join)
_PAD = st.sampled_from(["", " ", "  ", "\t", " \t"])
_AROUND = st.sampled_from(["=", " = ", " =", "= ", "  =  "])
_ODD_AROUND = st.sampled_from(["\t= ", " =\t", "\t=\t"])


@st.composite
def _line(draw: st.DrawFn, odd: bool = False) -> str:
    """One line of a config file: of the plain subset, or (odd) with exactly one part
    drawn from outside it, so that the reader must decline or still agree with git."""
    kind = draw(st.sampled_from(["section", "entry", "entry", "entry", "bare", "comment",
                                 "blank", *(["raw"] if odd else [])]))
    parts = {"section": ["name", "sub", "gap"], "entry": ["key", "around", "value"],
             "bare": ["key"], "comment": ["value"], "blank": ["pad"], "raw": ["raw"]}[kind]
    strange = draw(st.sampled_from(parts)) if odd else None

    def pick(part: str, plain: st.SearchStrategy[str], other: st.SearchStrategy[str]) -> str:
        return draw(other if part == strange else plain)

    pad, tail = draw(_PAD), draw(_PAD)
    if kind == "section":
        sub = pick("sub", _SUB, _ODD_SUB)
        gap = pick("gap", st.just(" "), st.sampled_from(["  ", "\t"]))
        name = pick("name", _NAME, _ODD_NAME)
        return f"{pad}[{name}{gap}\"{sub}\"]{tail}" if sub else f"{pad}[{name}]{tail}"
    if kind == "entry":
        return (f"{pad}{pick('key', _KEY, _ODD_KEY)}{pick('around', _AROUND, _ODD_AROUND)}"
                f"{pick('value', _VALUE, _ODD_VALUE)}{tail}")
    if kind == "bare":
        return f"{pad}{pick('key', _KEY, _ODD_KEY)}{tail}"
    if kind == "comment":
        return f"{pad}{draw(st.sampled_from(['#', ';']))}{pick('value', _VALUE, _ODD_VALUE)}"
    if kind == "blank":
        return pick("pad", _PAD, st.sampled_from(["\r", "\x00", "\x0b", "\ufeff"]))
    return draw(st.text(alphabet=st.sampled_from(list("[]a= \"\\\r\x00#")), max_size=6))


# Files of the plain subset (a section first), such files with one odd line, and plain
# lines with no section first.
_PLAIN_FILES = st.tuples(_line().filter(lambda line: line.strip().startswith("[")),
                         st.lists(_line(), max_size=6)).map(lambda t: [t[0], *t[1]])
_FILES = st.one_of(
    _PLAIN_FILES,
    st.tuples(_PLAIN_FILES, _line(odd=True), st.integers(1, 7)).map(
        lambda t: [*t[0][:t[2]], t[1], *t[0][t[2]:]]),
    st.lists(_line(), max_size=4))


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(lines=_FILES, final_newline=st.booleans())
@example(lines=["[memex]", "\tdir = x  y"], final_newline=True)
@example(lines=["[memex]", "\tdir = x", "[memex]", "\tDIR = y"], final_newline=False)
def test_reader_agrees_with_git_on_what_it_accepts(tmp_path: Path, lines: list[str],
                                                  final_newline: bool) -> None:
    text = "\n".join(lines) + ("\n" if final_newline else "")
    path = tmp_path / ".memexconfig"
    path.write_bytes(text.encode("utf-8"))
    mine = configfile.parse(text)
    if mine is not None:
        assert mine == _git_map(path), text
