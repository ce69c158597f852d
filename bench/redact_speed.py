"""Redaction speed: redact() + scan() over 2 MB of prose with secrets, and 1 MB inputs of
repeated trigger prefixes (the worst cases for the patterns).

Usage: python bench/redact_speed.py
"""

from __future__ import annotations

import statistics
import time

from memex.core.redact import redact, scan

PROSE = ("The build uses a token bucket; see the password policy and key rotation notes. "
         "Run `make test` before pushing.\n")
SECRET = "ghp_" + "A1b2" * 9


def median_time(func: object, text: str, runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        func(text)  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    chunk = PROSE * 50 + f"token={SECRET}\n<private>x</private>\n"
    text = (chunk * (2_000_000 // len(chunk) + 1))[:2_000_000]
    print(f"2 MB prose+secrets  redact {median_time(redact, text):.3f}s  "
          f"scan {median_time(scan, text):.3f}s")
    for unit in ("sk-", "eyJ", "xoxb-", "password=", "<private>", "-----BEGIN PRIVATE KEY-----\n"):
        worst = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
        print(f"1 MB of {unit.strip()!r:32} redact {median_time(redact, worst, 3):.3f}s")


if __name__ == "__main__":
    main()
