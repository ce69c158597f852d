"""Retrieval quality of the product's own search on public data (not a test).

LoCoMo: per conversation, every dialog turn (speaker, text and image caption) is one
personal memory written as a canonical file; every question of categories 1-4 with
evidence ids that name a turn is a query; recall@k = evidence turns among the top k
/ evidence turns. CMRC 2018 trial: every paragraph is a memory; hit@1 = the
question's own paragraph ranks first.

The data is read where it lies (default ../shared/bench/ beside the repository,
--data to override) and never copied into the repository.

    python bench/retrieval.py [--data DIR] [--only locomo|cmrc]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memex import frontmatter, model, search  # noqa: E402
from memex.homes import Workspace  # noqa: E402
from memex.ulid import new_ulid  # noqa: E402
from memex.writes import default_title  # noqa: E402

AT = "2026-12-01T06:00:00Z"


def default_data() -> Path:
    for base in (ROOT, *ROOT.parents):
        candidate = base.parent / "shared" / "bench"
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "bench"


def workspace(home: Path) -> Workspace:
    return Workspace(cwd=home, home=home, repo=None, repo_id="path-sha256:bench")


def write_memory(home: Path, body: str, title: str | None = None) -> str:
    memory = model.Memory(
        id=new_ulid(), scope="personal", type="observation", body=body,
        title=default_title(body) if title is None else title, trust_level="reviewed",
        created_at=AT, updated_at=AT, source="import", via="import")
    folder = home / "personal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
    return memory.id


def locomo(data: Path, k: int = 10) -> dict[str, float]:
    conversations = json.loads((data / "locomo10.json").read_text(encoding="utf-8"))
    recalls: list[float] = []
    recalls5: list[float] = []
    hits: list[float] = []
    skipped = 0
    seconds = 0.0
    for conv in conversations:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            ids: dict[str, str] = {}
            talk = conv["conversation"]
            for key, turns in talk.items():
                if not key.startswith("session_") or not isinstance(turns, list):
                    continue
                for turn in turns:
                    text = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        text += f" [image: {turn['blip_caption']}]"
                    ids[write_memory(home, text)] = turn["dia_id"]
            ws = workspace(home)
            turn_ids = set(ids.values())
            for qa in conv["qa"]:
                if qa.get("category") not in (1, 2, 3, 4):
                    continue
                named = [e for entry in qa.get("evidence", [])
                         for e in re.split(r"[;,\s]+", str(entry)) if e]
                evidence = {e for e in named if e in turn_ids}
                skipped += len(set(named) - evidence)
                if not evidence:
                    continue
                started = time.perf_counter()
                result = search.search(ws, search.SearchRequest(
                    query=qa["question"], limit=k, record_access=False))
                seconds += time.perf_counter() - started
                found = [ids[h.id] for h in result.hits]
                recalls.append(len(evidence & set(found)) / len(evidence))
                recalls5.append(len(evidence & set(found[:5])) / len(evidence))
                hits.append(1.0 if evidence & set(found) else 0.0)
    n = len(recalls)
    return {"queries": n, "recall@10": sum(recalls) / n, "recall@5": sum(recalls5) / n,
            "hit@10": sum(hits) / n, "skipped_evidence": skipped,
            "ms_per_query": 1000 * seconds / n}


def cmrc(data: Path) -> dict[str, float]:
    doc = json.loads((data / "cmrc2018_trial.squad.json").read_text(encoding="utf-8"))
    hit1 = 0
    hit10 = 0
    n = 0
    seconds = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        questions: list[tuple[str, str]] = []
        for article in doc["data"]:
            for para in article["paragraphs"]:
                mid = write_memory(home, para["context"], title="")
                questions.extend((qa["question"], mid) for qa in para["qas"])
        ws = workspace(home)
        for question, mid in questions:
            if not question.strip():
                continue
            started = time.perf_counter()
            result = search.search(ws, search.SearchRequest(
                query=question, limit=10, record_access=False))
            seconds += time.perf_counter() - started
            found = [h.id for h in result.hits]
            n += 1
            hit1 += bool(found and found[0] == mid)
            hit10 += mid in found
    return {"queries": n, "hit@1": hit1 / n, "hit@10": hit10 / n,
            "ms_per_query": 1000 * seconds / n}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data(),
                        help="folder holding locomo10.json and cmrc2018_trial.squad.json")
    parser.add_argument("--only", choices=["locomo", "cmrc"])
    args = parser.parse_args()
    os.environ.setdefault("GIT_MEMEX_NOW", AT)
    if not args.data.is_dir():
        sys.exit(f"no benchmark data at {args.data}; pass --data DIR")
    if args.only in (None, "locomo"):
        print("LoCoMo", json.dumps({k: round(v, 4) for k, v in locomo(args.data).items()}))
    if args.only in (None, "cmrc"):
        print("CMRC trial", json.dumps({k: round(v, 4) for k, v in cmrc(args.data).items()}))


if __name__ == "__main__":
    main()
