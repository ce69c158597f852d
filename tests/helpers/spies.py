"""Count what the code under test calls: a wrapper that calls through and records."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest


class Call(NamedTuple):
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def record_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[Call]:
    """From now on (until the test ends) each call of `owner.name` runs the real one
    and is appended, with its arguments, to the list returned."""
    calls: list[Call] = []
    real = getattr(owner, name)

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(Call(args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, recorded)
    return calls
