"""The vector lane's interface: what a provider is and the error that says one cannot
run (here so a provider module never imports the registry)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memex.core.errors import MemexError


class Provider(Protocol):
    """Turns text into unit-length vectors of `dim` floats."""

    name: str  # what the vectors are stored under: a different model never mixes in
    dim: int

    def passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    def query(self, text: str) -> list[float]: ...


class ProviderUnavailable(MemexError):
    """The configured provider cannot run here (package missing, unknown name)."""
