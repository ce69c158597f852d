"""How memories look to people: tables, one-liners, the `show` layout."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
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
    laid = Table(headers, columns)
    laid.measure(rows)
    return "".join(laid.lines(rows))


def _cells(row: Sequence[Any]) -> list[str]:
    return ["" if c is None else str(c) for c in row]


class Table:
    """`table`'s layout of rows given twice: `measure` takes them once for the widths
    (keeping nothing per row), `lines` lays them out; a listing of any length holds one
    row at a time."""

    def __init__(self, headers: Sequence[str], columns: int | None = None) -> None:
        self.headers = list(headers)
        self.columns = columns if columns is not None else _terminal_columns()
        self.widths = [width(h) + 2 for h in headers]
        self.room: int | None = None  # the last column's cut (None: not cut)
        # For the last column's width once cut (what `clip` makes of each cell):
        self._seen: set[int] = set()  # the widths of its cells
        self._ascii = 0  # the widest of its ASCII cells
        self._ends: set[int] = set()  # r: a wider cell has a prefix r - 1 columns wide

    def measure(self, rows: Iterable[Sequence[Any]]) -> int:
        """Take ROWS' widths (once, before `lines`); how many rows there were."""
        widths, last, cut = self.widths, len(self.headers) - 1, bool(self.columns)
        seen, ends = self._seen, self._ends
        count = 0
        for row in rows:
            count += 1
            cells = _cells(row)
            for i, cell in enumerate(cells):
                w = width(cell)
                if w > widths[i]:
                    widths[i] = w
            if cut:
                text = cells[last]
                w = width(text)
                seen.add(w)
                if text.isascii():
                    self._ascii = max(self._ascii, w)
                else:  # the column each character ends at, but the last
                    used = 0
                    for char in text:
                        used += width(char)
                        if used + 1 < w:
                            ends.add(used + 1)
        if self.columns and count:
            self._fit(self.columns)
        return count

    def _fit(self, columns: int) -> None:
        """The last column's cut and width at COLUMNS: `clip` of every cell to the
        room, as `measure` saw them."""
        widths, head = self.widths, width(self.headers[-1]) + 2
        room = columns - sum(widths[:-1]) - 2 * (len(widths) - 1)
        if room >= widths[-1]:
            return
        room = max(room, head, 10)
        self.room = room
        # clip(cell, room) is the cell when it fits; else its longest prefix of at most
        # room - 1 columns and `…`: room columns when it has a prefix that wide (any
        # ASCII cell does), room - 1 when a wide character spans that column.
        best = max((w for w in self._seen if w <= room), default=0)
        if any(w > room for w in self._seen):
            best = max(best, room if self._ascii > room or room in self._ends else room - 1)
        widths[-1] = max(head, best)

    def lines(self, rows: Iterable[Sequence[Any]]) -> Iterator[str]:
        """The table's text in pieces ("".join of them is `table`'s text): the headers,
        the rule, then each row, each after a newline."""
        widths, room = self.widths, self.room

        def line(values: Sequence[str]) -> str:
            return "  ".join(v + " " * (w - width(v)) for v, w in zip(values, widths,
                                                                       strict=True)).rstrip()

        yield line(self.headers)
        yield "\n" + "  ".join("-" * w for w in widths)
        for row in rows:
            cells = _cells(row)
            if room is not None:
                cells[-1] = clip(cells[-1], room)
            yield "\n" + line(cells)


def memory_rows(items: Sequence[Any]) -> list[list[str]]:
    return [list_row(m.id, m.review_state, m.status, m.type, m.scope, m.updated_at,
                     m.title, "" if m.title else m.summary)
            for m in (item.memory for item in items)]


def list_row(memory_id: str, review_state: str | None, status: str, mtype: str, scope: str,
             updated_at: str, title: str, summary: str) -> list[str]:
    """A memory's row of a LIST_HEADERS table from its fields (SUMMARY: its summary,
    read only when TITLE is empty)."""
    state = model.label_of(review_state, scope) + ("" if status == "active" else f" {status}")
    title = model.escape_controls(title) if title else summary
    if len(title) > 70:
        title = title[:69] + "\u2026"
    return [short(memory_id), state, mtype, scope, updated_at[:10], title]


LIST_HEADERS = ("ID", "STATE", "TYPE", "SCOPE", "UPDATED", "TITLE")


def show_text(item: Any, warnings: Sequence[str] = ()) -> str:
    from memex.index import listing

    return listing.shown_text(item.memory, item.path, warnings)
