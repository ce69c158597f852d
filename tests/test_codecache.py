"""Dataclass methods from kept code (storage.codecache): a command process compiles none
of them once their code is kept, and the classes are the ones compiling makes."""

from __future__ import annotations

import dataclasses
import keyword
import marshal
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memex
from memex.storage import codecache

# A whole process importing what a capture imports; prints how many method sources
# were compiled (dataclasses' exec of a text, or a compile of "<string>" to exec).
CODE = """
import builtins
counted = []
real_exec, real_compile = builtins.exec, builtins.compile
def exec_(source, *args):
    if isinstance(source, str):
        counted.append(1)
    return real_exec(source, *args)
def compile_(source, filename, mode, *args, **kwargs):
    if filename == "<string>" and mode == "exec":  # typing's forward references: eval
        counted.append(1)
    return real_compile(source, filename, mode, *args, **kwargs)
builtins.exec, builtins.compile = exec_, compile_
import re._parser
parsed = []  # patterns re parses (compiles): none that kept code makes
real_parse = re._parser.parse
re._parser.parse = lambda *args: parsed.append(args[0]) or real_parse(*args)
import memex.adapters.cli.main, memex.adapters.cli.capture, memex.workflows.writes
import memex.index.views, memex.workflows.conflicts, memex.search.engine
builtins.exec, builtins.compile = real_exec, real_compile
re._parser.parse = real_parse
print(len(counted), len(parsed))
"""


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A cache file under tmp_path for the hook (installed by the test), bytecode written
    whatever the environment says; the process's hook as before after."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    before = codecache._state["path"]
    codecache.uninstall()
    path = tmp_path / "kept.marshal"
    try:
        yield path
    finally:
        codecache.uninstall()
        if before is not None:
            codecache.install(before)


def test_a_command_process_compiles_no_dataclass_method_once_their_code_is_kept(
        tmp_path: Path) -> None:
    """The first process compiles the ~190 method sources of a capture's ~50 classes and
    its ~50 patterns and keeps their code; the next compiles none (main's code compiled
    the methods in each before stop 30, the patterns before stop 34)."""
    package = tmp_path / "site" / "memex"  # a copy: the test writes no cache into the tree
    shutil.copytree(Path(memex.__file__).parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "COVERAGE_PROCESS_CONFIG",
                        "COVERAGE_PROCESS_START")}
    env["PYTHONPATH"] = str(package.parent)

    def compiled() -> tuple[int, int]:
        done = subprocess.run([sys.executable, "-c", CODE], cwd=tmp_path, env=env,
                              capture_output=True, text=True, check=True)
        methods, patterns = map(int, done.stdout.split())
        return methods, patterns

    first = compiled()
    assert first[0] > 100 and first[1] > 40  # ~50 patterns (redact's among them)
    assert list((package / "__pycache__").glob("dataclass-code.*.marshal"))
    # the patterns' code kept too: parsed are only dataclasses' own (compiled as it is
    # imported, before the hook) and string.Template's (made in a class statement)
    assert compiled() <= (0, 2)
    # no bytecode written: nothing kept, each process compiles them again
    shutil.rmtree(package / "__pycache__")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    assert compiled() > (100, 40)
    assert compiled()[1] > 40


def _classes(make: Any) -> list[type]:
    """A few classes of each kind of method the dataclasses module writes."""

    @make
    class Plain:
        a: int
        b: str = "x"
        c: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, order=True)
    class Frozen:
        a: int
        b: tuple[str, ...] = ()

    @dataclasses.dataclass(kw_only=True, slots=True)
    class Slotted:
        a: int = 1
        b: dict[str, int] = dataclasses.field(default_factory=dict)

    @dataclasses.dataclass(eq=False)
    class NoEq:
        a: int
        b: int = dataclasses.field(default=2, repr=False)

    return [Plain, Frozen, Slotted, NoEq]


def _code(cls: type) -> list[tuple[str, bytes, tuple[Any, ...], tuple[str, ...]]]:
    out = []
    for name in ("__init__", "__repr__", "__eq__", "__lt__", "__setattr__", "__hash__"):
        fn = getattr(cls.__dict__.get(name), "__wrapped__", cls.__dict__.get(name))
        code = getattr(fn, "__code__", None)
        if code is not None:
            out.append((name, code.co_code, code.co_consts, code.co_varnames))
    return out


def _behaviour(classes: list[type]) -> list[object]:
    plain, frozen, slotted, no_eq = classes
    out: list[object] = [repr(plain(1)), plain(1) == plain(1), plain(1, "y") == plain(1),
                         plain(2).c is not plain(2).c, repr(frozen(1, ("a",))),
                         frozen(1) < frozen(2), hash(frozen(3)) == hash(frozen(3)),
                         repr(slotted(a=3)), slotted() == slotted(), repr(no_eq(1)),
                         no_eq(1) == no_eq(1)]
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen(1).a = 2
    with pytest.raises(TypeError):
        slotted(1)  # keyword-only
    return out


def test_classes_made_from_kept_code_are_the_ones_compiling_makes(own_cache: Path) -> None:
    plain = _classes(dataclasses.dataclass)
    codecache.install(str(own_cache))
    compiling = _classes(dataclasses.dataclass)  # compiled here, then kept
    assert codecache._state["new"] > 0
    codecache.save()
    codecache.uninstall()
    codecache.install(str(own_cache))
    kept = _classes(dataclasses.dataclass)
    assert codecache._state["new"] == 0  # every method from the kept code
    assert [_code(c) for c in kept] == [_code(c) for c in compiling] == [
        _code(c) for c in plain]
    assert _behaviour(kept) == _behaviour(compiling) == _behaviour(plain)


# (not "or": the field f + name must not be a keyword, "for")
_NAMES = st.lists(st.from_regex(r"[a-z0-9_]{1,6}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(f"f{n}")), min_size=1, max_size=6, unique=True)


@settings(deadline=None)  # three classes an example: 256 ms seen at load 9
@given(_NAMES, st.integers(0, 6), st.booleans(), st.booleans(), st.booleans())
def test_any_fields_make_the_same_methods_from_kept_code(
        names: list[str], defaults: int, frozen: bool, order: bool, kw_only: bool) -> None:
    """Fields without defaults then fields with them, any options: the methods made
    through the hook (compiled, then from its code) are those made without it."""
    cut = max(len(names) - defaults, 0)
    fields: list[Any] = [(f"f{n}", str) for n in names[:cut]]
    fields += [(f"f{n}", int, dataclasses.field(default=i)) for i, n in enumerate(names[cut:])]
    options: dict[str, Any] = {"frozen": frozen, "order": order, "kw_only": kw_only}
    before = codecache._state["path"]
    codecache.uninstall()
    try:
        plain = dataclasses.make_dataclass("Made", fields, **options)
        codecache.install(os.devnull)  # nothing kept: each source compiled by the hook
        hooked = dataclasses.make_dataclass("Made", fields, **options)
        again = dataclasses.make_dataclass("Made", fields, **options)
    finally:
        codecache.uninstall()
        if before is not None:
            codecache.install(before)
    assert _code(hooked) == _code(again) == _code(plain)


def test_a_cache_that_does_not_read_is_ignored_and_replaced(own_cache: Path) -> None:
    own_cache.write_bytes(b"not marshal data \x00\xff")
    codecache.install(str(own_cache))
    assert codecache._codes == {}
    made = _classes(dataclasses.dataclass)
    codecache.save()
    codecache.uninstall()
    codecache.install(str(own_cache))
    assert codecache._codes and codecache._state["new"] == 0
    assert _behaviour(_classes(dataclasses.dataclass)) == _behaviour(made)


def test_a_file_without_its_checksum_or_with_one_damaged_byte_is_ignored(
        own_cache: Path) -> None:
    """A flipped byte can still read as marshal data and as code _sre accepts (the
    literal `k` of `kauph` made `l`: the pattern would find `lauph`, never `kauph`, and
    never be compiled again): the file's CRC-32 must hold or nothing of it is used
    (review of stop 34). A file of the form before the checksum is ignored and replaced."""
    codecache.install(str(own_cache))
    _as_module([("kauph", 0)])
    codecache.save()
    codecache.uninstall()
    data = own_cache.read_bytes()
    assert codecache._load(str(own_cache))
    literal = [at for at in range(1, len(data) - 4) if data[at] == 0x6B
               and data[at - 1] in (0x69, 0xE9) and data[at + 1:at + 4] == b"\0\0\0"]
    assert literal  # the pattern's kept code holds the literal as a marshalled int
    for at in literal:
        damaged = bytearray(data)
        damaged[at] = 0x6C  # 'l'
        own_cache.write_bytes(bytes(damaged))
        codecache.install(str(own_cache))
        try:
            assert codecache._codes == {}
            pattern = _as_module([("kauph", 0)])[0]
            assert pattern.search("kauph") and not pattern.search("lauph")
        finally:
            codecache.uninstall()
    own_cache.write_bytes(data[4:])  # the marshalled dict alone: the earlier form
    assert codecache._load(str(own_cache)) == {}


def test_nothing_is_written_when_python_writes_no_bytecode(
        own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    codecache.install(str(own_cache))
    _classes(dataclasses.dataclass)
    codecache.save()
    assert not own_cache.exists()


def test_kept_code_that_does_not_load_is_compiled_again(own_cache: Path) -> None:
    """A kept entry whose bytes are not code (a damaged file) is compiled as if new."""
    codecache.install(str(own_cache))
    made = _classes(dataclasses.dataclass)
    codecache.save()
    codecache.uninstall()
    kept = codecache._load(str(own_cache))
    assert kept and all(type(v) is bytes for v in kept.values())
    own_cache.write_bytes(codecache.file_bytes(dict.fromkeys(kept, b"\x00not code")))
    codecache.install(str(own_cache))
    again = _classes(dataclasses.dataclass)
    assert codecache._state["new"] == len(kept)
    assert _behaviour(again) == _behaviour(made)
    assert [_code(c) for c in again] == [_code(c) for c in made]


def test_a_cache_whose_reading_runs_out_of_memory_is_ignored(
        own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A damaged header can declare a huge tuple: under a memory limit marshal raises
    MemoryError, which must not take every command down (the CLI installs the cache as
    it loads): the file and the entry are ignored, the methods compiled (stop 30 review)."""
    codecache.install(str(own_cache))
    made = _classes(dataclasses.dataclass)
    codecache.save()
    codecache.uninstall()

    def no_memory(data: bytes) -> object:
        raise MemoryError

    codecache.install(str(own_cache))  # the entries kept as bytes
    monkeypatch.setattr(codecache.marshal, "loads", no_memory)
    again = _classes(dataclasses.dataclass)  # each entry's code: MemoryError
    assert codecache._state["new"] > 0
    assert _behaviour(again) == _behaviour(made)
    codecache.uninstall()
    codecache.install(str(own_cache))  # the whole file: MemoryError
    assert codecache._codes == {}


# A whole process: the CLI's package (codecache first), then a no-change search's
# imports and classes; then a dataclass without a docstring, which dataclasses writes
# from inspect.signature.
INSPECT_CODE = """
import sys
import memex.adapters.cli.main, memex.adapters.cli.search, memex.search.engine
import memex.workflows.reads
before = sorted({"inspect", "ast", "dis", "tokenize"} & sys.modules.keys())
import dataclasses
@dataclasses.dataclass
class Undocumented:
    a: int
    b: str = "x"
import inspect
print(before, Undocumented.__doc__, dataclasses.inspect is inspect,
      type(sys.modules["inspect"]).__name__)
"""


def test_the_cli_imports_dataclasses_without_inspect_until_a_class_needs_it(
        tmp_path: Path) -> None:
    """inspect (with ast, dis, tokenize: ~8 ms) is loaded by the dataclasses module only
    to write a missing class docstring; the CLI's classes all have one, so a command loads
    none of them (main loaded them in every process); a class without one still gets the
    docstring inspect writes, and the module is then the real one everywhere."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", INSPECT_CODE], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "Undocumented(a:", "int,", "b:", "str", "=",
                                   "'x')", "True", "module"]


# Patterns of every shape re compiles: flags, groups (named too), bytes, classes,
# look-arounds, repeats, Unicode ranges past the BMP, case folding, verbose text.
PATTERNS: list[tuple[Any, int]] = [
    (r"[^\W_]+", 0), (r"(?P<key>\w+)\s*=\s*(?P<value>[^#\n]*)", re.MULTILINE),
    (r"\b(?:kinds?|types?)\s+of\b", re.IGNORECASE), (b"[\x80-\xff]", 0),
    (rb"^(?:\s*(\w+)\s*\.)?", 0), ("[\u3400-\u4dbf\U00020000-\U0002ffff]+", 0),
    (r"(?<!\d)(\d{2,4})(?=[-/])", 0), (r"a{3,}?|b*+|(c)(?(1)d|e)", 0),
    (r"""  # a comment
         (x) [ ]+ y  # more
     """, re.VERBOSE), (r"straße|ǅ", re.IGNORECASE), (r"(.*?)([\"\\\x00-\x1f])", re.DOTALL),
    (r"[a-z]", re.ASCII | re.IGNORECASE),
]
TEXTS = ["key = value # c\nother=2", "Kinds of TYPES of", "\x80abc", "  mod . name",
         "依赖\U00020001x", "12/31 1999-", "aaab ccd bbb", "x   y", "STRASSE ǆ", 'ab"c',
         "Q"]


def _same(a: re.Pattern[Any], b: re.Pattern[Any]) -> None:
    assert a == b and (a.flags, a.groups, a.groupindex) == (b.flags, b.groups, b.groupindex)
    for text in TEXTS:
        subject: Any = text.encode("utf-8") if isinstance(a.pattern, bytes) else text
        assert [m.span() + m.groups() for m in a.finditer(subject)] == [
            m.span() + m.groups() for m in b.finditer(subject)]


def _as_module(patterns: list[tuple[Any, int]]) -> list[re.Pattern[Any]]:
    """PATTERNS compiled through the hook by a module's top-level code (as imported)."""
    space: dict[str, Any] = {"__name__": "memex.made_by_test", "hook": codecache._compile_pattern,
                             "patterns": patterns}
    exec(compile("made = []\nfor p, f in patterns:\n    made.append(hook(p, f))\n",  # noqa: S102
                 "<made>", "exec"), space)
    return cast("list[re.Pattern[Any]]", space["made"])


def test_patterns_made_from_kept_code_are_the_ones_re_makes(own_cache: Path) -> None:
    """Each pattern compiled through the hook (then kept, then from the kept code in a
    fresh install) equals, and matches as, the one re's own compiler makes."""
    plain = [re._compiler.compile(p, f) for p, f in PATTERNS]  # type: ignore[attr-defined]
    codecache.install(str(own_cache))
    made = _as_module(PATTERNS)  # a module's: kept
    assert codecache._state["new"] == len(PATTERNS)
    codecache.save()
    codecache.uninstall()
    codecache.install(str(own_cache))
    parsed = []
    real_parse = re._parser.parse  # type: ignore[attr-defined]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(re._parser, "parse",  # type: ignore[attr-defined]
                      lambda *a: parsed.append(a) or real_parse(*a))
        kept = _as_module(PATTERNS)
    assert parsed == [] and codecache._state["new"] == 0  # none parsed or compiled again
    for a, b, c in zip(plain, made, kept, strict=True):
        _same(a, b)
        _same(a, c)


def _compiled_at_run_time(pattern: str) -> re.Pattern[str]:
    return cast("re.Pattern[str]", codecache._compile_pattern(pattern, 0))


def test_a_pattern_made_at_run_time_is_not_kept(own_cache: Path) -> None:
    """A pattern compiled by a function (perhaps from data) is compiled as re does and
    not written: the file holds modules' own patterns only."""
    codecache.install(str(own_cache))
    real = re._compiler.compile(r"data\d+", 0)  # type: ignore[attr-defined]
    _same(_compiled_at_run_time(r"data\d+"), real)
    assert codecache._state["new"] == 0
    assert not any(k.startswith("\x00re") for k in codecache._codes)


def test_kept_pattern_code_that_re_refuses_is_compiled_again(own_cache: Path) -> None:
    """Kept arguments that are damaged (not marshal data, or code _sre refuses) give the
    pattern re's compiler makes."""
    codecache.install(str(own_cache))
    _as_module(PATTERNS)
    keys = [k for k in codecache._codes if k.startswith("\x00re")]
    assert len(keys) == len(PATTERNS)
    for n, key in enumerate(keys):
        flags, code, *rest = marshal.loads(codecache._codes[key])
        codecache._codes[key] = b"\x00damaged" if n % 2 else marshal.dumps(
            (flags, [*code[:3], 9999, *code[4:]], *rest))
    for pattern, flags in PATTERNS:
        _same(codecache._compile_pattern(pattern, flags),
              re._compiler.compile(pattern, flags))  # type: ignore[attr-defined]

