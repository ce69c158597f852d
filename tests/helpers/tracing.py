"""Coverage's tracer paused around code that is not ours, to make the README's test
command cheaper without measuring less of memex/ (docs/decisions.md, "tests: coverage's
tracer paused around hypothesis and reference implementations")."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any


def coverage_tracer() -> Any:
    """The tracer coverage.py's C core installed in this thread, or None (no coverage,
    another tracer, or a core that is not sys.settrace's such as sys.monitoring's)."""
    tracer = sys.gettrace()
    kind = type(tracer)
    if (tracer is None or kind.__name__ != "CTracer"
            or not kind.__module__.startswith("coverage")):
        return None
    return tracer


@contextlib.contextmanager
def untraced() -> Iterator[None]:
    """Coverage's tracer paused in this thread around code that is not ours (hypothesis
    drawing examples, a reference implementation such as ruamel or json): under the
    tracer every Python line runs about twice as slow, and none of it is memex/. The
    tracer's own stop() and start(), as coverage's pause and resume use them. Code of
    memex/ called inside is not measured: keep memex/ out (docs/decisions.md)."""
    tracer = coverage_tracer()
    if tracer is None:
        yield
        return
    tracer.stop()
    try:
        yield
    finally:
        tracer.start()


@contextlib.contextmanager
def traced(tracer: Any) -> Iterator[None]:
    """Inside untraced(): that tracer back on, unless something else traces meanwhile
    (hypothesis's own explain phase after a failure)."""
    if sys.gettrace() is not None and sys.gettrace() is not tracer:
        yield
        return
    tracer.start()
    try:
        yield
    finally:
        tracer.stop()
