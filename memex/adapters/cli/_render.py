"""How memories look to people: tables, one-liners, the `show` layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memex.core import model

SHORT_ID = 10


def short(memory_id: str) -> str:
    return memory_id[:SHORT_ID]


def one_line(memory: model.Memory) -> str:
    return f"{short(memory.id)} {memory.label} {memory.scope}: {memory.title or memory.summary}"


def score(value: float) -> str:
    """A score in fixed-point notation (never `2.42e-06`): three decimals, or three
    significant digits for a smaller one."""
    if value == 0 or abs(value) >= 0.001:
        return f"{value:.3f}"
    import math

    return f"{value:.{2 - math.floor(math.log10(abs(value)))}f}"


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def memory_rows(items: Sequence[Any]) -> list[list[str]]:
    rows = []
    for item in items:
        m = item.memory
        state = m.label + ("" if m.status == "active" else f" {m.status}")
        title = m.title or m.summary
        if len(title) > 70:
            title = title[:69] + "\u2026"
        rows.append([short(m.id), state, m.type, m.scope, m.updated_at[:10], title])
    return rows


LIST_HEADERS = ("ID", "STATE", "TYPE", "SCOPE", "UPDATED", "TITLE")


def show_text(item: Any, warnings: Sequence[str] = ()) -> str:
    m = item.memory
    lines = [f"memory {m.id}  {m.label}"]
    for key, value in m.front_matter().items():
        if key in ("id",):
            continue
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"{key}:")
            for entry in value:
                lines.append("  - " + ", ".join(f"{k}: {v}" for k, v in entry.items()))
        elif isinstance(value, list):
            lines.append(f"{key}: {', '.join(str(v) for v in value)}")
        else:
            lines.append(f"{key}: {value}")
    lines.append(f"path: {item.path}")
    for warning in warnings:
        lines.append(f"warning: {warning}")
    lines.append("")
    lines.append(m.body)
    return "\n".join(lines)
