"""Dataclasses made when first used.

Making a dataclass runs the standard library's code generator: it writes each method's
source and compiles it (~0.3-2 ms a class). A command's process imports ~30 of them
and a search instantiates about half; the others were ~9 ms of every search's ~150 ms.
`dataclass` here takes dataclasses.dataclass's common arguments and leaves the class as
written until it is first needed: its first instance (or a subclass's), or `made` /
`fields` on it. Then dataclasses.dataclass makes it, in place, with those arguments:
from then on it is the standard library's dataclass, nothing else.

Until then the class is not a dataclass (dataclasses.fields and is_dataclass on the
class do not know it: use `fields` here), and a mistake in its fields (a field without
a default after one with) is reported at its first use, not at import
(tests/test_records.py makes every such class of the package).
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

field = dataclasses.field
Field = dataclasses.Field
MISSING = dataclasses.MISSING
replace = dataclasses.replace

_C = TypeVar("_C", bound=type)
# In a class's own namespace while it waits: the arguments it is to be made with.
_WAITING = "_records_waiting"
_LOCK = threading.Lock()
_NEW = "__new__"  # set through setattr: mypy takes no assignment to a method


@overload
def dataclass(cls: _C, /) -> _C: ...


@overload
def dataclass(*, frozen: bool = False) -> Callable[[_C], _C]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(cls: _C | None = None, /, *, frozen: bool = False) -> _C | Callable[[_C], _C]:
    """dataclasses.dataclass(cls, frozen=frozen), done when the class is first needed."""

    def wait(klass: _C) -> _C:
        if "__new__" in klass.__dict__:
            raise TypeError(f"{klass.__qualname__}: a record class makes its own __new__")
        setattr(klass, _WAITING, {"frozen": frozen})
        # __new__, not __init__: dataclasses writes __init__ only where the class has
        # none of its own, and __new__ runs first, so every instance is made by the
        # finished class (another thread waits for it on the lock).
        setattr(klass, _NEW, staticmethod(_first_new))
        return klass

    return wait if cls is None else wait(cls)


def _first_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    made(cls)
    return object.__new__(cls)


def _new(cls: type, *args: Any, **kwargs: Any) -> Any:
    return object.__new__(cls)


def made(cls: _C) -> _C:
    """CLS (a class), with every waiting record class in its bases made now."""
    if not any(_WAITING in klass.__dict__ for klass in cls.__mro__):
        return cls
    with _LOCK:
        for klass in reversed(cls.__mro__):  # bases first: a dataclass takes theirs
            options = klass.__dict__.get(_WAITING)
            if options is None:
                continue
            dataclasses.dataclass(klass, **options)
            delattr(klass, _WAITING)
            # Only now: an instance started meanwhile went through _first_new and waited.
            # Not deleted: CPython keeps the class's new-instance slot on the Python
            # __new__ once one was set, which then passes the arguments on to
            # object.__new__ (a TypeError); this one takes them (~0.2 us an instance).
            setattr(klass, _NEW, staticmethod(_new))
    return cls


def fields(class_or_instance: Any) -> tuple[dataclasses.Field[Any], ...]:
    """dataclasses.fields, the class made first if it waits."""
    made(class_or_instance if isinstance(class_or_instance, type)
         else type(class_or_instance))
    return dataclasses.fields(class_or_instance)


def waiting(cls: type) -> bool:
    """Whether CLS is a record class not made yet."""
    return _WAITING in cls.__dict__


def is_record(cls: type) -> bool:
    """Whether CLS was declared with `dataclass` here (made or waiting)."""
    new = cls.__dict__.get(_NEW)
    return isinstance(new, staticmethod) and new.__func__ in (_first_new, _new)
