"""The health report on 10,000 synthetic memories (target: under 1 s).

Run: python bench/health.py [N]
Writes N canonical files (memex.core.frontmatter.emit) into a temp GIT_MEMEX_HOME's
personal folder and a temp repo's .memex/, then times `hygiene.health` (scan,
retention, ROT candidates, contradiction search, score) in-process, wall and CPU
seconds: cold (no index and no hygiene cache yet: it builds both), warm (best of 3,
nothing changed: the usual case), and after one file changed (every file's parse is
reused, the pairwise results are redone).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memex.core import frontmatter, model
from memex.core.ulid import new_ulid
from memex.storage.homes import workspace
from memex.workflows import hygiene

TOPICS = ["auth", "build", "ci", "database", "api", "testing", "style", "deploy", "logging",
          "cache", "frontend", "payments", "search", "infra", "docs", "security", "mobile",
          "billing", "queue", "metrics", "i18n", "cli", "sdk", "release"]
VERBS = ["use", "prefer", "run", "check", "avoid", "configure", "document", "review", "pin",
         "call", "wrap", "mock"]
SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "zo", "pe", "vi", "su", "do", "ge"]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def synthetic(rng: random.Random, words: list[str], weights: list[float], i: int,
              scope: str, repo_id: str | None) -> model.Memory:
    """One memory: 1-4 short sentences of Zipf-distributed words (as real notes are),
    one sentence in ten negated."""
    topic = rng.choice(TOPICS)
    sentences = []
    for _ in range(rng.randint(1, 4)):
        text = " ".join(rng.choices(words, weights, k=rng.randint(5, 12)))
        verb = rng.choice(VERBS)
        sentences.append(f"Never {verb} {text}." if rng.random() < 0.1
                         else f"{verb.capitalize()} {text}.")
    body = " ".join(sentences)
    created = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T12:00:00Z"
    return model.Memory(
        id=new_ulid(), scope=scope, type=rng.choice(model.TYPES), title=f"{topic} note {i}",
        body=body, repo_id=repo_id, tags=rng.sample(TOPICS, rng.randint(1, 2)),
        trust_level="reviewed", importance=rng.choice(model.IMPORTANCES),
        confidence=rng.choice(model.CONFIDENCES),
        status="active" if rng.random() < 0.9 else "archived",
        review_state=None if scope == "personal" else "published",
        created_by="local:bench@example.com", created_at=created, updated_at=created,
        retired_at=None,
    )


def main() -> int:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    rng = random.Random(7)
    words = vocabulary(rng)
    weights = [1 / (rank + 20) for rank in range(len(words))]  # content words: flatter
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = root / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        os.environ["GIT_MEMEX_HOME"] = str(root / "home")
        os.environ["GIT_MEMEX_NOW"] = "2026-12-01T00:00:00Z"
        ws = workspace(repo)
        personal, shared = ws.personal_dir, ws.memory_dir
        assert shared is not None
        personal.mkdir(parents=True)
        shared.mkdir(parents=True)
        for i in range(count):
            scope = "personal" if i % 4 == 0 else "project"
            repo_id = None if scope == "personal" else ws.repo_id
            memory = synthetic(rng, words, weights, i, scope, repo_id)
            if memory.status != "active":
                memory.retired_at = memory.updated_at
            folder = personal if scope == "personal" else shared
            (folder / f"{memory.id}.md").write_text(frontmatter.emit(memory), encoding="utf-8")
        start, cpu = time.perf_counter(), time.process_time()
        report = hygiene.health(ws)
        cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
        warm = warm_cpu = float("inf")
        for _ in range(3):
            start, cpu = time.perf_counter(), time.process_time()
            report = hygiene.health(ws)
            warm = min(warm, time.perf_counter() - start)
            warm_cpu = min(warm_cpu, time.process_time() - cpu)
        touched = next(shared.iterdir())
        touched.write_text(touched.read_text().replace("revision: 1", "revision: 2"))
        start, cpu = time.perf_counter(), time.process_time()
        hygiene.health(ws)
        one_changed, one_cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"health of {report.total} memories, wall / CPU s (load "
              f"{os.getloadavg()[0]:.1f}): cold {cold:.3f} / {cold_cpu:.3f} (no cache, the "
              f"index built too); warm {warm:.3f} / {warm_cpu:.3f} (best of 3, files "
              f"unchanged); one file changed {one_changed:.3f} / {one_cpu:.3f}")
        print(f"score {report.score} ({report.grade}); rot {report.rot}, "
              f"conflicts {report.conflicts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
