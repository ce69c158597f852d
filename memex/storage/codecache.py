"""Dataclass methods made from code compiled once per Python, not once per process.

`@dataclass` writes the source of each class's methods (`__init__`, `__repr__`,
`__eq__`, ...) and compiles it with `exec` when the class is made: a command process
makes ~50 classes, ~190 methods, and compiling them cost ~17 ms of CPU before any
work (a capture at 10,000 memories is ~0.3 s). The source of a method depends only
on the class's fields and options, so the code compiled from it is kept, as Python
keeps a module's compiled code in `__pycache__`: `install` gives the dataclasses
module an `exec` that takes the code kept for a source it has seen (the same code
object `exec` would compile: same text, same file name "<string>", no inherited
flags) and compiles any other. What it compiled is written back at exit into the
package's `__pycache__` folder, one file per Python (cache tag and exact version),
unless Python writes no bytecode (`sys.dont_write_bytecode`, PYTHONDONTWRITEBYTECODE)
or the folder is not writable; a file that cannot be read as such a cache is
ignored (and replaced).

Regular expressions likewise: `re` parses and compiles each pattern a process uses
(a search ~20 of them, ~4.5 ms; a capture ~70, ~20 ms), and what its compiler hands
`_sre.compile` depends only on the pattern, its flags and the Python. `install` gives
`re` a compiler that takes those arguments kept for a pattern it has seen (checked by
`_sre`, which refuses code it cannot run) and compiles any other. A pattern's
arguments are kept only when they make the very pattern `re`'s own compiler makes
(compared: same code, flags, groups) and when the pattern is a module's own (made as
a module of git-memex, json or urllib is imported, or by memex.core.lazyre at first use): other
packages' patterns (the MCP server's libraries, a test run's) and patterns made from data
at run time are compiled as before and not written.
"""

from __future__ import annotations

import atexit
import builtins
import importlib
import marshal
import os
import sys
import zlib
from types import CodeType, ModuleType
from typing import Any

from memex.storage import atomic


class _Inspect(ModuleType):
    """What the dataclasses module gets for `inspect` when this module imports it first:
    the real module, imported at its first use. dataclasses asks inspect only to write a
    class's missing docstring (inspect.signature); inspect imports ast, dis, tokenize and
    linecache, ~8 ms of every command process (~36M instructions, 1/12 of a no-change
    search at 10,000 memories) that makes no class without a docstring."""

    def __getattr__(self, name: str) -> Any:
        import inspect  # the real one: the stand-in left sys.modules after dataclasses'

        dataclasses.inspect = inspect  # type: ignore[attr-defined]  # later uses: the real one
        return getattr(inspect, name)


# dataclasses imported with the stand-in in inspect's place, where neither is loaded yet
# (else as it is: another importer's inspect is the real one).
_STAND_IN = _Inspect("inspect") if not {"inspect", "dataclasses"} & sys.modules.keys() \
    else None
if _STAND_IN is not None:
    sys.modules["inspect"] = _STAND_IN
try:
    import dataclasses  # noqa: E402 - after the stand-in is placed
finally:
    if _STAND_IN is not None and sys.modules.get("inspect") is _STAND_IN:
        del sys.modules["inspect"]

# More sources than this (a program making classes without end) are not written.
MOST = 4096

_codes: dict[str, bytes] = {}  # method source -> marshal.dumps of its code
_state: dict[str, Any] = {"path": None, "new": 0, "re": None}


def default_path() -> str:
    """The cache file of this Python in the package's `__pycache__` folder."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tag = sys.implementation.cache_tag or sys.implementation.name
    return os.path.join(package, "__pycache__",
                        f"dataclass-code.{tag}.{sys.hexversion:x}.marshal")


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:  # noqa: A002
    """`exec` as the dataclasses module calls it, with a source's code compiled once."""
    if isinstance(source, str):
        source = _code(source)
    builtins.exec(source, globals, locals)


def _code(source: str) -> CodeType:
    """SOURCE's code: from the kept bytes when they read as code, else compiled (and
    then kept)."""
    kept = _codes.get(source)
    if kept is not None:
        try:
            code = marshal.loads(kept)
        except Exception:  # noqa: BLE001  # damaged bytes: MemoryError, EOFError, ValueError...
            code = None
        if type(code) is CodeType:
            return code
    code = compile(source, "<string>", "exec", dont_inherit=True)
    _codes[source] = marshal.dumps(code)
    _state["new"] += 1
    return code


# re's compiler module (private: its arguments are checked against its own result).
_RE: Any = importlib.import_module("re._compiler")
# A pattern's key among the dataclass sources (none starts with a NUL), with the code
# format's own version (`_sre.MAGIC`): a patched Python of the same version number whose
# compiler changed is served nothing kept by the old one.
_PATTERN_KEY = "\x00re " + str(_RE.MAGIC) + " {} {} {}"


def _compile_pattern(pattern: Any, flags: int = 0) -> Any:
    """`re._compiler.compile` with a module pattern's compiled arguments kept."""
    real = _state["re"]
    if not isinstance(pattern, (str, bytes)) or flags & _RE.SRE_FLAG_DEBUG:
        return real(pattern, flags)
    key = _PATTERN_KEY.format(int(flags), type(pattern).__name__, pattern if isinstance(
        pattern, str) else pattern.decode("latin-1"))
    kept = _codes.get(key)
    if kept is not None:
        try:
            return _RE._sre.compile(pattern, *marshal.loads(kept))
        except Exception:  # noqa: BLE001  # damaged or refused (RuntimeError: invalid code)
            pass
    compiled = real(pattern, flags)
    if _own_pattern():
        try:
            arguments = _arguments(pattern, flags)
            made = _RE._sre.compile(pattern, *arguments)
            if made == compiled and (made.groups, made.groupindex) == (
                    compiled.groups, compiled.groupindex):
                _codes[key] = marshal.dumps(arguments)
                _state["new"] += 1
        except Exception:  # noqa: BLE001  # another Python's compiler: not kept
            pass
    return compiled


def _arguments(pattern: str | bytes, flags: int) -> tuple[Any, ...]:
    """What re._compiler.compile hands _sre.compile for PATTERN, as it computes it."""
    parsed = _RE._parser.parse(pattern, flags)
    code = [int(op) for op in _RE._code(parsed, flags)]  # (named constants: int subclasses)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, at in groupindex.items():
        indexgroup[at] = name
    return (int(flags | parsed.state.flags), code, parsed.state.groups - 1, groupindex,
            tuple(indexgroup))


_INNER = frozenset({"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"})
# Whose module patterns are kept: git-memex's, json's and urllib's (every command loads them);
# another package's (the MCP server's, a test run's) would grow the file each command reads.
_KEPT_PACKAGES = frozenset({"memex", "json", "urllib"})


def _own_pattern() -> bool:
    """Whether the pattern being compiled is a module's own: `re` was called by the
    top-level code of a module of _KEPT_PACKAGES, or by lazyre at a pattern's first use."""
    frame = sys._getframe(2)
    while frame.f_back is not None and (frame.f_globals.get("__name__", "").partition(
            ".")[0] == "re" or frame.f_code.co_name in _INNER):
        frame = frame.f_back  # re's own frames and comprehensions: their caller decides
    name, code = frame.f_globals.get("__name__", ""), frame.f_code.co_name
    return (code == "<module>" and name.partition(".")[0] in _KEPT_PACKAGES) or (
        name == "memex.core.lazyre" and code == "__getattr__")


# The file: the CRC-32 of what follows (little-endian), then the marshalled dict.
_SUM_BYTES = 4


def _load(path: str) -> dict[str, bytes]:
    """The sources and their marshalled code kept at PATH ({} when there is none that
    reads as such). Each code stays bytes until its class is made: a process makes a
    few of the classes of every command the file holds (~750 sources: ~3 ms to load as
    code objects, ~0.3 ms as bytes)."""
    try:
        with open(path, "rb") as file:
            data = file.read()  # marshal.load(file) reads in small pieces: ~10x the time
        # a damaged byte can still read as code _sre accepts (another literal: a pattern
        # matching other text, a secret rule blind), so the whole file is checked
        payload = memoryview(data)[_SUM_BYTES:]
        if len(data) < _SUM_BYTES or zlib.crc32(payload) != int.from_bytes(
                data[:_SUM_BYTES], "little"):
            return {}
        kept = marshal.loads(payload)
    except Exception:  # noqa: BLE001  # unreadable or damaged (a huge declared size: MemoryError)
        return {}
    if not isinstance(kept, dict) or not all(
            type(k) is str and type(v) is bytes for k, v in kept.items()):
        return {}
    return kept


def file_bytes(codes: dict[str, bytes]) -> bytes:
    """What the file holds for CODES (what _load reads back)."""
    payload = marshal.dumps(codes)
    return zlib.crc32(payload).to_bytes(_SUM_BYTES, "little") + payload


def save() -> None:
    """Write the kept sources and code back when this process compiled new ones."""
    path = _state["path"]
    if path is None or not _state["new"] or sys.dont_write_bytecode or len(_codes) > MOST:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # a reader sees the old file or the new one, whole; mode as open() would make it
        atomic.replace(path, file_bytes(_codes), mode=0o666 & ~atomic.umask())
        _state["new"] = 0
    except OSError:
        pass


def install(path: str | None = None) -> None:
    """Make the dataclasses module compile each method source once, and `re` each
    module's pattern (see the module's doc), with the code kept at PATH (default_path).
    Once per process: a second call only changes where the code is kept."""
    first = _state["path"] is None
    _state["path"] = path or default_path()
    _codes.update(_load(_state["path"]))
    if first:
        dataclasses.exec = _exec  # type: ignore[attr-defined]  # read before builtins'
        _state["re"] = _RE.compile
        _RE.compile = _compile_pattern
        atexit.register(save)


def uninstall() -> None:
    """Undo `install` (the code kept stays where it is)."""
    if _state["path"] is not None:
        atexit.unregister(save)
        if getattr(dataclasses, "exec", None) is _exec:
            del dataclasses.exec  # type: ignore[attr-defined]
        if _RE.compile is _compile_pattern:
            _RE.compile = _state["re"]
        _state["re"] = None
    _state["path"] = None
    _state["new"] = 0
    _codes.clear()
