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
"""

from __future__ import annotations

import atexit
import builtins
import marshal
import os
import sys
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
_state: dict[str, Any] = {"path": None, "new": 0}


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


def _load(path: str) -> dict[str, bytes]:
    """The sources and their marshalled code kept at PATH ({} when there is none that
    reads as such). Each code stays bytes until its class is made: a process makes a
    few of the classes of every command the file holds (~750 sources: ~3 ms to load as
    code objects, ~0.3 ms as bytes)."""
    try:
        with open(path, "rb") as file:
            data = file.read()  # marshal.load(file) reads in small pieces: ~10x the time
        kept = marshal.loads(data)
    except Exception:  # noqa: BLE001  # unreadable or damaged (a huge declared size: MemoryError)
        return {}
    if not isinstance(kept, dict) or not all(
            type(k) is str and type(v) is bytes for k, v in kept.items()):
        return {}
    return kept


def save() -> None:
    """Write the kept sources and code back when this process compiled new ones."""
    path = _state["path"]
    if path is None or not _state["new"] or sys.dont_write_bytecode or len(_codes) > MOST:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # a reader sees the old file or the new one, whole; mode as open() would make it
        atomic.replace(path, marshal.dumps(_codes), mode=0o666 & ~atomic.umask())
        _state["new"] = 0
    except OSError:
        pass


def install(path: str | None = None) -> None:
    """Make the dataclasses module compile each method source once (see the module's
    doc), with the code kept at PATH (default_path). Once per process: a second call
    only changes where the code is kept."""
    first = _state["path"] is None
    _state["path"] = path or default_path()
    _codes.update(_load(_state["path"]))
    if first:
        dataclasses.exec = _exec  # type: ignore[attr-defined]  # read before builtins'
        atexit.register(save)


def uninstall() -> None:
    """Undo `install` (the code kept stays where it is)."""
    if _state["path"] is not None:
        atexit.unregister(save)
        if getattr(dataclasses, "exec", None) is _exec:
            del dataclasses.exec  # type: ignore[attr-defined]
    _state["path"] = None
    _state["new"] = 0
    _codes.clear()
