"""Every figure shown with an interval, found in a study's JSON output by the names the outputs use
(or in a page's text and tables as it writes them: `written`),
so a test can hold each to lie inside its own interval.

The names: a key `X_low` (or `X_low_S`, a side suffix such as `_base`) beside `X_high` (`X_high_S`)
is the interval of `X` (`X_S`); `tau_low`/`rho_low` are those of `kendall_tau`/`spearman_rho`; a
mapping with `low` and `high` is the interval of its `estimate` when it has one (a sequential
stop's effect, whose `change` is the plain mean, named so), else of its `win_rate` or `change`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

ALIASES = {"tau": "kendall_tau", "rho": "spearman_rho"}
OWN = ("estimate", "win_rate", "change")  # what a bare low/high is the interval of, first found
LOW = re.compile(r"^(?P<x>.+)_low(?P<side>_[a-z]+)?$")
SLACK = 1e-12  # float rounding of a bound computed apart from its figure


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) else None


def _triples(d: dict[str, Any]) -> Iterator[tuple[str, Any, Any, Any]]:
    if "low" in d and "high" in d:
        own = next((k for k in OWN if k in d), None)
        if own is not None:
            yield own, d[own], d["low"], d["high"]
    for key in d:
        m = LOW.match(key)
        if not m:
            continue
        x, side = m["x"], m["side"] or ""
        high = f"{x}_high{side}"
        figure = f"{ALIASES.get(x, x)}{side}"
        if high in d and figure in d:
            yield figure, d[figure], d[key], d[high]


def shown(data: Any, path: str = "") -> Iterator[tuple[str, float, float, float]]:
    """(where, figure, low, high) for every figure with its interval anywhere in `data`."""
    if isinstance(data, dict):
        for name, est, lo, hi in _triples(data):
            e, a, b = _number(est), _number(lo), _number(hi)
            if e is not None and a is not None and b is not None:
                yield f"{path}.{name}", e, a, b
        for k, v in data.items():
            yield from shown(v, f"{path}.{k}")
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from shown(v, f"{path}[{i}]")


def outside(data: Any) -> list[str]:
    """Every figure that lies outside its own interval, said with where it is."""
    return [
        f"{where}: {est!r} outside {lo!r} to {hi!r}"
        for where, est, lo, hi in shown(data)
        if not lo - SLACK <= est <= hi + SLACK
    ]


def count(data: Any) -> int:
    """How many figures with intervals `data` holds (a test of an output says it checked some)."""
    return sum(1 for _ in shown(data))


# -- the same check on a page (the dashboard's views): figures as they are written -------------------

PCT = r"(-?\d+(?:\.\d+)?)%"
PTS = r"([+-]\d+(?:\.\d+)?)"
WRITTEN = (  # a figure, a few words at most, then its interval, as the pages write them
    re.compile(PCT + r"[^%()<>]{0,40}?\(?95% CI " + PCT + "-" + PCT),
    re.compile(PTS + r"[^%()<>+-]{0,60}?\((?:95% CI )?" + PTS + " to " + PTS),
)


class _Page:
    """The visible text of a page and its tables' cells (values as data-v when given), parsed once."""

    def __init__(self, page: str) -> None:
        from html.parser import HTMLParser

        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []  # rows of cells; the first row: the headers
        parent = self

        class Parser(HTMLParser):
            skip = 0

            def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
                if tag in ("script", "style"):
                    self.skip += 1
                elif tag == "table":
                    parent.tables.append([])
                elif tag == "tr" and parent.tables:
                    parent.tables[-1].append([])
                elif tag in ("td", "th") and parent.tables and parent.tables[-1]:
                    parent.tables[-1][-1].append(dict(attrs).get("data-v") or "")
                elif tag in ("br", "p", "div", "td", "th", "li", "dd", "tr"):
                    parent.text.append("\n")

            def handle_endtag(self, tag: str) -> None:
                if tag in ("script", "style"):
                    self.skip -= 1

            def handle_data(self, data: str) -> None:
                if self.skip:
                    return
                parent.text.append(data)
                row = parent.tables[-1][-1] if parent.tables and parent.tables[-1] else None
                if row is not None and row and len(parent.tables[-1]) == 1:
                    row[-1] += data  # a header's text

        Parser().feed(page)


def written(page: str) -> Iterator[tuple[str, float, float, float]]:
    """(where, figure, low, high) for every figure a page writes with its 95% interval: in its text
    ("45.0% (95% CI 40.1%-50.2%)", "+3.1 (-0.4 to +6.6)") and in its tables' rows (a column
    followed by "95% CI low" and "95% CI high", read from the cells' exact values)."""
    parsed = _Page(page)
    text = " ".join("".join(parsed.text).split())
    for pattern in WRITTEN:
        for m in pattern.finditer(text):
            yield m.group(0), float(m[1]), float(m[2]), float(m[3])
    for t in parsed.tables:
        head = [h.strip() for h in t[0]] if t else []
        if "95% CI low" not in head or "95% CI high" not in head:
            continue
        lo, hi = head.index("95% CI low"), head.index("95% CI high")
        for row in t[1:]:
            cells = [_number(_float(c)) for c in (row[lo - 1], row[lo], row[hi])]
            if all(c is not None for c in cells):
                yield f"{head[lo - 1]} row {row[0]}", *cells  # type: ignore[misc]


def _float(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def outside_page(page: str) -> list[str]:
    """Every figure a page writes outside its own interval, said with where it is."""
    return [
        f"{w}: {e!r} outside {lo!r} to {hi!r}" for w, e, lo, hi in written(page) if not lo - SLACK <= e <= hi + SLACK
    ]
