"""How figures look in terminal tables: percentages, intervals, counts, paths, and the table itself."""

from __future__ import annotations

import math
from pathlib import Path

from rich.table import Table


def missing(x: object) -> bool:
    """No figure: None or NaN (a rate of nothing, a table's empty cell)."""
    return x is None or (isinstance(x, float) and math.isnan(x))


def pct(x: float | None, blank: str = "-") -> str:
    """A rate as a percentage, one decimal (0.123 -> 12.3%); `blank` where there is none."""
    return blank if x is None or missing(x) else f"{x:.1%}"


def pts(x: float | None, blank: str = "-") -> str:
    """A change of rate in signed percentage points, one decimal (0.012 -> +1.2); `blank` where there is none."""
    return blank if x is None or missing(x) else f"{x * 100:+.1f}"


def ci(lo: float, hi: float) -> str:
    return "-" if lo is None or math.isnan(lo) else f"{lo:.1%}-{hi:.1%}"


def num(x: float) -> str:
    return "-" if missing(x) else f"{int(x):,}"


def shown_path(path: str | Path) -> str:
    """A path as printed: relative to the current folder when it lies under it, else as recorded."""
    p = Path(path)
    if p.is_absolute():
        try:
            return str(p.relative_to(Path.cwd()))
        except ValueError:
            return str(p)
    return str(p)


def table(title: str, cols: list[str], rows: list[list[str]], caption: str | None = None):
    t = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    for i, c in enumerate(cols):
        t.add_column(c, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*r)
    return t


def matrix_tables(title: str, cols: list[str], rows: list[list[str]], width: int) -> list[Table]:
    """A matrix (first column: the row labels) as tables of as many columns as fit `width`
    terminal columns each, every one with the row labels: a 30 x 30 matchup matrix stays readable
    in 120 columns instead of shrinking to cells of "...". Each column takes its widest cell plus
    3 (padding and rule)."""
    widths = [max(len(x) for x in [c, *(r[i] for r in rows)]) + 3 for i, c in enumerate(cols)]
    blocks: list[list[int]] = []
    block: list[int] = []
    room, used = width - widths[0] - 1, 0
    for i in range(1, len(cols)):
        if block and used + widths[i] > room:
            blocks.append(block)
            block, used = [], 0
        block.append(i)
        used += widths[i]
    blocks.append(block)
    if len(blocks) == 1:
        return [table(title, cols, rows)]
    return [
        table(
            f"{title} (columns {b[0]}-{b[-1]} of {len(cols) - 1})",
            [cols[0]] + [cols[i] for i in b],
            [[r[0]] + [r[i] for i in b] for r in rows],
        )
        for b in blocks
    ]
