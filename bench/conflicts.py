"""Precision and recall of the contradiction heuristics on bench/conflict_pairs.jsonl.

Run: python bench/conflicts.py [-v]   (-v lists every miss and false alarm)
Each line is a labelled pair (contradicts | compatible) of realistic coding-agent
memories that share a tag; the detector sees them as two live memories. The
"tuned" pairs were written first and the rules adjusted on them; the "holdout"
pairs were written afterwards and not tuned on, so their figure is the honest one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memex.core import model
from memex.core.ulid import new_ulid
from memex.workflows import conflicts

PAIRS = Path(__file__).with_name("conflict_pairs.jsonl")


def memory(side: dict[str, object]) -> model.Memory:
    return model.Memory(id=new_ulid(), scope="project", title=str(side["title"]),
                        body=str(side["body"]), tags=list(side["tags"]),  # type: ignore[arg-type]
                        paths=list(side.get("paths", [])))  # type: ignore[arg-type]


def main() -> int:
    verbose = "-v" in sys.argv
    rows = [json.loads(x) for x in PAIRS.read_text(encoding="utf-8").splitlines()]
    for split in ("tuned", "holdout", "all"):
        chosen = [r for r in rows if split == "all" or r.get("split", "tuned") == split]
        print(f"{split:8s} " + score(chosen, verbose and split == "all"))
    return 0


def score(rows: list[dict[str, object]], verbose: bool) -> str:
    tp = fp = fn = tn = 0
    for row in rows:
        a, b = memory(row["a"]), memory(row["b"])  # type: ignore[arg-type]
        found = conflicts.find([a, b])
        predicted = bool(found)
        actual = row["label"] == "contradicts"
        tp += predicted and actual
        fp += predicted and not actual
        fn += actual and not predicted
        tn += not predicted and not actual
        if verbose and predicted != actual:
            kind = "false alarm" if predicted else "missed"
            detail = "; ".join(r.detail for r in found[0].reasons) if found else row["why"]
            print(f"{row['id']} {kind}: {detail}")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return (f"pairs {tp + fp + fn + tn}: tp {tp} fp {fp} fn {fn} tn {tn}  "
            f"precision {precision:.2f} recall {recall:.2f}")


if __name__ == "__main__":
    sys.exit(main())
