"""How the BM25 list and vector similarities combine into one ranking (pure).

Modes (chosen by measurement, see docs/benchmarks.md):
- "rrf": reciprocal-rank fusion, 1/(k + rank) from each list.
- "weighted": min-max normalised BM25 score and cosine, (1 - w) * bm25 + w * cos,
  over the union of both lists.
- "zscore": like weighted, each lane's scores as z-scores over its own list.
- "rank": like weighted, but BM25 enters by its rank (its lanes put all-term matches
  first, which raw scores do not show).
- "rerank": "rank" restricted to BM25's own candidates: vectors only reorder them.
A candidate without a vector keeps its BM25 part as its vector part (BM25 alone
ranks memories not embedded yet).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MODES = ("rrf", "weighted", "zscore", "rank", "rerank")
RRF_K = 60


@dataclass
class Fused:
    key: int  # the candidate (an index rowid)
    score: float
    lane: str  # "bm25", "vector" or "bm25+vector"
    bm25_part: float
    vector_part: float | None


def _minmax(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    span = high - low
    return {k: (v - low) / span if span > 0 else 1.0 for k, v in values.items()}


def _zscore(values: dict[int, float]) -> dict[int, float]:
    if not values:
        return {}
    mean = sum(values.values()) / len(values)
    var = sum((v - mean) ** 2 for v in values.values()) / len(values)
    std = var ** 0.5 or 1.0
    return {k: (v - mean) / std for k, v in values.items()}


def fuse(bm25: Sequence[tuple[int, float]], cosine: dict[int, float],
         dense_order: Sequence[int], mode: str, weight: float) -> list[Fused]:
    """bm25: (key, score) in BM25's rank order; cosine: key -> similarity for every
    candidate that has a vector; dense_order: the vector lane's own candidates, best
    first. Returns all candidates, best first (ties keep BM25's order)."""
    if mode not in MODES:
        raise ValueError(f"unknown fusion mode {mode!r}")
    bm25_rank = {key: i for i, (key, _s) in enumerate(bm25)}
    keys = list(bm25_rank)
    if mode != "rerank":
        keys += [k for k in dense_order if k not in bm25_rank]
    out: list[Fused] = []
    if mode == "rrf":
        dense_rank = {k: i for i, k in enumerate(
            sorted((k for k in keys if k in cosine), key=lambda k: -cosine[k]))}
        for key in keys:
            b = 1 / (RRF_K + bm25_rank[key] + 1) if key in bm25_rank else 0.0
            d = 1 / (RRF_K + dense_rank[key] + 1) if key in dense_rank else None
            out.append(Fused(key, b + (b if d is None else d), _lane(key, bm25_rank, d),
                             b, d))
    else:
        norm = _zscore if mode == "zscore" else _minmax
        if mode in ("weighted", "zscore"):
            b_norm = norm(dict(bm25))
            if mode == "zscore":  # a memory BM25 did not find sits below all it found
                floor = min(b_norm.values(), default=0.0) - 1.0
                b_norm.update({k: floor for k in keys if k not in b_norm})
        else:
            n = max(len(bm25), 1)
            b_norm = {key: 1.0 - i / n for key, i in bm25_rank.items()}
        d_norm = norm({k: cosine[k] for k in keys if k in cosine})
        for key in keys:
            b = b_norm.get(key, 0.0)
            d = d_norm.get(key)
            score = (1 - weight) * b + weight * (b if d is None else d)
            out.append(Fused(key, score, _lane(key, bm25_rank, d), b, d))
    order = {f.key: i for i, f in enumerate(out)}
    out.sort(key=lambda f: (-f.score, order[f.key]))
    return out


def _lane(key: int, bm25_rank: dict[int, int], dense: float | None) -> str:
    if key in bm25_rank:
        return "bm25" if dense is None else "bm25+vector"
    return "vector"
