"""How figures look in terminal tables: percentages, intervals, counts, and the table itself."""

from __future__ import annotations

import math

from rich.table import Table


def pct(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def ci(lo: float, hi: float) -> str:
    return "-" if lo is None or math.isnan(lo) else f"{lo:.1%}-{hi:.1%}"


def num(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{int(x):,}"


def table(title: str, cols: list[str], rows: list[list[str]], caption: str | None = None):
    t = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    for i, c in enumerate(cols):
        t.add_column(c, justify="left" if i == 0 else "right")
    for r in rows:
        t.add_row(*r)
    return t
