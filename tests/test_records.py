"""memex.core.records: dataclasses made when first used (issue 18: making the ~30 of a
command's imports was ~9 ms of every search, about half of them never used by it).
Once made, a record class is the standard library's dataclass: these tests hold it to
a twin made by dataclasses.dataclass at once."""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import os
import pickle
import pkgutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.core import records
from tests.helpers import invoke_json


def _records() -> tuple[type[Any], type[Any], type[Any], type[Any]]:
    """New record classes (none made yet): _Base, _Child, _Plain, _Frozen."""

    @records.dataclass
    class _Base:
        """A record with a default factory and a field left out of repr and eq."""

        name: str
        tags: list[str] = records.field(default_factory=list)
        note: str = records.field(default="", repr=False, compare=False)

    @records.dataclass
    class _Child(_Base):
        """A record on a record."""

        size: int = 0

    class _Plain(_Base):
        """Not a record: a subclass of one."""

    @records.dataclass(frozen=True)
    class _Frozen:
        """A frozen record."""

        key: str
        count: int = 1

    return _Base, _Child, _Plain, _Frozen


@records.dataclass
class _Kept:
    """A record pickle finds by its name."""

    name: str
    numbers: list[int]


@dataclasses.dataclass
class _TwinBase:
    """A record with a default factory and a field left out of repr and eq."""

    name: str
    tags: list[str] = dataclasses.field(default_factory=list)
    note: str = dataclasses.field(default="", repr=False, compare=False)


@dataclasses.dataclass
class _TwinChild(_TwinBase):
    """A record on a record."""

    size: int = 0


@dataclasses.dataclass(frozen=True)
class _TwinFrozen:
    """A frozen record."""

    key: str
    count: int = 1


def _shape(cls: type) -> list[tuple[Any, ...]]:
    return [(f.name, f.default, f.default_factory, f.repr, f.compare, f.init)
            for f in dataclasses.fields(cls)]


def _args(obj: object) -> str:
    """repr(OBJ) without the class's name."""
    return repr(obj).split("(", 1)[1]


def test_a_record_class_is_made_by_its_first_instance_as_dataclasses_makes_it() -> None:
    _Base, _Child, _Plain, _Frozen = _records()
    # _Plain's first instance makes its base, and _Child takes the base's fields
    assert records.waiting(_Base) and records.waiting(_Child) and records.waiting(_Frozen)
    assert records.is_record(_Base) and not records.is_record(_Plain)
    assert not dataclasses.is_dataclass(_Base)
    plain = _Plain("p", ["a"])
    assert not records.waiting(_Base) and dataclasses.is_dataclass(_Base)
    assert records.is_record(_Base) and not records.is_record(_TwinBase)
    assert records.waiting(_Child)
    pairs = [(_Child("c", ["x"], "n", 3), _TwinChild("c", ["x"], "n", 3)),
             (_Base("b"), _TwinBase("b")), (_Frozen("k"), _TwinFrozen("k"))]
    for made, twin in pairs:
        assert not records.waiting(type(made))
        assert _args(made) == _args(twin)
        assert _shape(type(made)) == _shape(type(twin))
        assert made.__match_args__ == twin.__match_args__  # type: ignore[attr-defined]
        assert type(made).__doc__ == type(twin).__doc__
    assert repr(plain).endswith("._Plain(name='p', tags=['a'])")
    assert _Base("b", note="x") == _Base("b", note="y") != _Base("c")
    assert _Plain("p") == _Plain("p") and _Base("p") != _Plain("p")
    assert _Base.__hash__ is None and _TwinBase.__hash__ is None
    assert hash(_Frozen("k", 2)) == hash(_TwinFrozen("k", 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        _Frozen("k").count = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Frozen()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _Base("a", [], "n", 4)  # type: ignore[call-arg]


def test_a_made_record_copies_pickles_and_is_replaced_as_a_dataclass() -> None:
    _, _Child, _, _ = _records()
    child = _Child("c", ["x"], size=2)
    assert dataclasses.replace(child, size=5) == _Child("c", ["x"], size=5)
    assert records.replace(child, name="d").name == "d"
    assert copy.deepcopy(child) == child and copy.copy(child).tags is child.tags
    kept = _Kept("k", [1])
    assert pickle.loads(pickle.dumps(kept)) == kept
    assert dataclasses.asdict(child) == {"name": "c", "tags": ["x"], "note": "", "size": 2}


def test_fields_makes_a_waiting_class() -> None:
    @records.dataclass
    class Waiting:
        first: int
        second: str = "s"

    assert records.waiting(Waiting)
    assert [f.name for f in records.fields(Waiting)] == ["first", "second"]
    assert not records.waiting(Waiting)
    assert [f.name for f in records.fields(Waiting(1))] == ["first", "second"]
    assert records.made(Waiting) is Waiting


def test_a_mistake_in_the_fields_is_reported_at_the_first_use() -> None:
    @records.dataclass
    class Wrong:
        first: int = 0
        second: int  # type: ignore[misc]

    with pytest.raises(TypeError, match="non-default argument 'second'"):
        Wrong()


def test_a_class_making_its_own_new_is_refused() -> None:
    class Own:
        def __new__(cls) -> Own:
            return object.__new__(cls)

    with pytest.raises(TypeError, match="own __new__"):
        records.dataclass(Own)


def test_an_instance_begun_while_another_thread_makes_the_class_waits_for_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The class is made by the first instance's thread; one begun in another thread
    meanwhile goes through the waiting class's __new__ and waits for the finished one
    (with __init__ as the hook, a thread could find neither the hook nor the made
    __init__ while dataclasses wrote it, and get an object without fields)."""

    @records.dataclass
    class Slow:
        value: int
        more: list[int] = records.field(default_factory=list)

    real = dataclasses.dataclass
    other: dict[str, Any] = {}
    started = threading.Event()

    def second() -> None:
        started.set()
        other["made"] = Slow(2)

    thread = threading.Thread(target=second)

    def slow_make(cls: type, **options: Any) -> Any:
        thread.start()
        started.wait()
        time.sleep(0.05)  # the other thread is in Slow(2) meanwhile
        return real(cls, **options)

    monkeypatch.setattr(dataclasses, "dataclass", slow_make)
    first = Slow(1)
    thread.join()
    monkeypatch.undo()
    assert (first, other["made"]) == (Slow(1, []), Slow(2, []))


def _record_classes() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(memex.__path__, "memex."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (the semantic lane's model)
            continue
        for value in vars(module).values():
            if (isinstance(value, type) and value.__module__ == info.name
                    and records.is_record(value)):
                found.append(value)
    return found


def test_every_record_class_of_the_package_can_be_made() -> None:
    """A mistake in a record class's fields shows at its first use, not at import:
    every one in the package is made here."""
    classes = _record_classes()
    assert len(classes) >= 20
    for cls in classes:
        records.made(cls)
        assert dataclasses.is_dataclass(cls) and not records.waiting(cls)


SEARCH = """
import sys
sys.argv = ["git-memex", *sys.argv[1:]]
from memex.adapters.cli.main import main
try:
    main()
except SystemExit:
    pass
made = sorted(f"{c.__module__}.{c.__qualname__}" for m in list(sys.modules.values())
              if (getattr(m, "__name__", "") or "").startswith("memex.")
              for c in vars(m).values()
              if isinstance(c, type) and c.__module__ == m.__name__
              and "__dataclass_fields__" in vars(c))
sys.stderr.write("\\nMADE " + __import__("json").dumps(made) + "\\n")
"""


def test_a_search_makes_none_of_the_record_classes_it_does_not_use(repo: Path) -> None:
    """A search's process makes the dataclasses it instantiates, not every one its
    imports define (the index's refresh plan, the views of list and context, the
    merge's and the journal's records)."""
    out = invoke_json("capture", "Deploys go through the staging VPN")
    mid = str(out["id"])
    hour_ago = time.time_ns() - 3600 * 10**9
    os.utime(str(out["path"]), ns=(hour_ago, hour_ago))  # not racy
    invoke_json("search", "staging")  # the index is fresh: no refresh plan below
    env = {k: v for k, v in os.environ.items()
           if k not in ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")}
    done = subprocess.run([sys.executable, "-c", SEARCH, "search", "staging", "--json"],
                          cwd=repo, env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)[0]["id"] == mid
    made = set(json.loads(done.stderr.rsplit("MADE ", 1)[1]))
    assert {"memex.search.engine.Hit", "memex.search.engine.SearchResult",
            "memex.core.model.Memory"} <= made
    assert made & {"memex.index.plan.Plan", "memex.workflows.reads.View",
                   "memex.index.views.Snapshot", "memex.index.views.Gated",
                   "memex.index.views.Neighbours", "memex.storage.gitio.TextMerge",
                   "memex.storage.gitio.Unmerged", "memex.core.lifecycle.ChainWarning",
                   "memex.storage.journalfile.Record"} == set()
