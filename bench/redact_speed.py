"""Redaction speed (issue 14, item 4): masking a typical 3 KB memory (target < 0.2 ms), the
scan of a 2 MB staged file (target < 0.1 s), and 1 MB inputs of repeated trigger prefixes
(the worst cases for the patterns).

Usage: python bench/redact_speed.py

Each figure is the median of several runs, as CPU time of this process (what the code costs,
not how busy the machine is) and as wall time; print `uptime` beside them.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

from memex.core.bare_secrets import spans as bare_spans
from memex.core.redact import find_secrets, redact

ROOT = Path(__file__).resolve().parent.parent
PROSE = ("The build uses a token bucket; see the password policy and key rotation notes. "
         "Run `make test` before pushing.\n")
SECRET = "gh" + "p_" + "A1b2" * 9
MEMORY = (
    "---\nid: 01JD5V3K8Q2W9X7Y6Z5A4B3C2D\nschema_version: 2\nscope: project\ntype: lesson\n"
    "title: Retry the flaky upload step\ntags: [ci, uploads]\npaths: [scripts/upload.py]\n---\n\n"
    + ("The upload step in CI fails about once in thirty runs with a reset connection; the "
       "script now retries three times with a 2 s backoff (see scripts/upload.py, commit "
       "3f9c2a1). The API token comes from the CI secret UPLOAD_TOKEN, never from the repo. "
       "Run `make upload DRY_RUN=1` locally to check the manifest; it prints the bucket "
       "path s3://artifacts/builds/{sha}/ and the expected sha256 of each file.\n") * 7
)


def median_seconds(func: Callable[[str], object], text: str, runs: int = 5
                   ) -> tuple[float, float]:
    """(CPU seconds, wall seconds), each the median of RUNS calls."""
    cpu, wall = [], []
    for _ in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        func(text)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return statistics.median(cpu), statistics.median(wall)


def staged_file() -> str:
    """2 MB of the repo's own docs and code (what a big staged text looks like), a few
    secrets sprinkled in."""
    parts = [p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("docs/*.md"))]
    parts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "memex").rglob("*.py"))]
    chunk = "\n".join(parts) + f"\ntoken={SECRET}\n"
    return (chunk * (2_000_000 // len(chunk) + 1))[:2_000_000]


def main() -> None:
    print(f"3 KB memory ({len(MEMORY)} chars)")
    cpu, wall = median_seconds(redact, MEMORY, 201)
    print(f"  redact  cpu {cpu * 1000:.3f} ms  wall {wall * 1000:.3f} ms  (target < 0.2 ms)")
    cpu, wall = median_seconds(bare_spans, MEMORY, 201)
    print(f"  of which the bare-token detector  cpu {cpu * 1000:.3f} ms")
    staged = staged_file()
    cpu, wall = median_seconds(find_secrets, staged)
    print(f"2 MB staged file (docs + code)\n  scan    cpu {cpu:.3f} s  wall {wall:.3f} s  "
          "(target < 0.1 s)")
    cpu, wall = median_seconds(bare_spans, staged)
    print(f"  of which the bare-token detector  cpu {cpu:.3f} s")
    # The repo's docs and code quote <private> tags: ~3/4 of the text above falls inside
    # "blocks" that are redacted, not scanned. The same bytes with the tags broken: every
    # byte scanned.
    whole = staged.replace("<private", "<privat_")
    cpu, wall = median_seconds(find_secrets, whole)
    print(f"  the same 2 MB with no private block: every byte scanned  cpu {cpu:.3f} s  "
          f"wall {wall:.3f} s")
    chunk = PROSE * 50 + f"token={SECRET}\n<private>x</private>\n"
    text = (chunk * (2_000_000 // len(chunk) + 1))[:2_000_000]
    cpu, wall = median_seconds(find_secrets, text)
    print(f"2 MB of keyword-dense prose (a key word in every line)\n  scan    cpu {cpu:.3f} s  "
          f"wall {wall:.3f} s")
    cpu, wall = median_seconds(redact, text, 3)
    print(f"  redact  cpu {cpu:.3f} s  wall {wall:.3f} s")
    for unit in ("sk-", "eyJ", "xoxb-", "password=", "<private>", "-----BEGIN PRIVATE KEY-----\n",
                 "://a:b@", "Authorization: Bearer ", "key_", "a1B2c3", "Xy9Z" + "q" * 30 + " ",
                 "AIza ", "1:A", "sumo", "meraki=1 ", "33f!!lloppa ", "the key is ",
                 "password is a1)", "discordId .= ", "--password x1y2z3w4! ",
                 "-Password "):
        worst = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
        cpu, wall = median_seconds(redact, worst, 3)
        print(f"1 MB of {unit.strip()!r:32} redact cpu {cpu:.3f} s  wall {wall:.3f} s")


if __name__ == "__main__":
    main()
