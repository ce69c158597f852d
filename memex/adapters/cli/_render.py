"""How memories look to people: tables, one-liners, the `show` layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memex.core import model

SHORT_ID = 10


def short(memory_id: str) -> str:
    return memory_id[:SHORT_ID]


def one_line(memory: model.Memory) -> str:
    title = model.escape_controls(memory.title) if memory.title else memory.summary
    return f"{short(memory.id)} {memory.label} {memory.scope}: {title}"


def score(value: float) -> str:
    """A score in fixed-point notation (never `2.42e-06`): three decimals, or three
    significant digits for a smaller one."""
    if value == 0 or abs(value) >= 0.001:
        return f"{value:.3f}"
    import math

    return f"{value:.{2 - math.floor(math.log10(abs(value)))}f}"


def width(text: str) -> int:
    """Columns TEXT takes on a terminal: CJK wide and fullwidth characters take two,
    combining marks none."""
    if text.isascii():  # every ASCII character takes one column (no wide, no combining)
        return len(text)
    import unicodedata

    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def clip(text: str, columns: int) -> str:
    """TEXT cut to COLUMNS terminal columns, ending in `…` when cut."""
    if width(text) <= columns:
        return text
    out, used = [], 0
    for char in text:
        used += width(char)
        if used > columns - 1:
            break
        out.append(char)
    return "".join(out) + "\u2026"


def _terminal_columns() -> int | None:
    import sys

    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError, OSError):
        return None
    import shutil  # on a terminal only: it loads bz2, lzma and zlib (~2 ms)

    return shutil.get_terminal_size().columns


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str],
          columns: int | None = None) -> str:
    """Columns two spaces apart under a dashed rule (tabulate's "simple" layout),
    measured in terminal columns so CJK text lines up; on a terminal (or with COLUMNS
    given) the last column is cut with `…` to fit its width."""
    cells = [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max([width(h) + 2] + [width(r[i]) for r in cells])
              for i, h in enumerate(headers)]
    columns = columns if columns is not None else _terminal_columns()
    if columns and cells:
        room = columns - sum(widths[:-1]) - 2 * (len(widths) - 1)
        if room < widths[-1]:
            room = max(room, width(headers[-1]) + 2, 10)
            for row in cells:
                row[-1] = clip(row[-1], room)
            widths[-1] = max([width(headers[-1]) + 2] + [width(r[-1]) for r in cells])

    def line(values: Sequence[str]) -> str:
        return "  ".join(v + " " * (w - width(v)) for v, w in zip(values, widths,
                                                                   strict=True)).rstrip()

    return "\n".join([line(list(headers)), "  ".join("-" * w for w in widths),
                      *(line(row) for row in cells)])


def memory_rows(items: Sequence[Any]) -> list[list[str]]:
    rows = []
    for item in items:
        m = item.memory
        state = m.label + ("" if m.status == "active" else f" {m.status}")
        title = model.escape_controls(m.title) if m.title else m.summary
        if len(title) > 70:
            title = title[:69] + "\u2026"
        rows.append([short(m.id), state, m.type, m.scope, m.updated_at[:10], title])
    return rows


LIST_HEADERS = ("ID", "STATE", "TYPE", "SCOPE", "UPDATED", "TITLE")


def show_text(item: Any, warnings: Sequence[str] = ()) -> str:
    from memex.index import listing

    return listing.shown_text(item.memory, item.path, warnings)
