"""A pattern compiled when it is first used. `re.compile` at a module's top costs
~0.1-0.4 ms a pattern in every process that imports the module, used or not; a
search imports modules whose patterns only writes, time options or git config files
use. The object stands in for the compiled pattern (its methods and attributes), and
after the first use holds them itself, so a later call costs what the pattern's own
does."""

from __future__ import annotations

import re
from typing import Any, cast, overload


class _Pattern:
    def __init__(self, pattern: str | bytes, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name == "_source":  # not made yet (a copy being built): no pattern to ask
            raise AttributeError(name)
        compiled: re.Pattern[Any] = re.compile(*self._source)
        for attr in dir(compiled):
            if not attr.startswith("_"):
                setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self._source[0]!r}, {self._source[1]!r})"


@overload
def compile(pattern: str, flags: int = 0) -> re.Pattern[str]: ...  # noqa: A001 - re's name
@overload
def compile(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]: ...  # noqa: A001
def compile(pattern: str | bytes, flags: int = 0) -> re.Pattern[Any]:  # noqa: A001
    """re.compile(PATTERN, FLAGS), made on first use."""
    return cast("re.Pattern[Any]", _Pattern(pattern, flags))
