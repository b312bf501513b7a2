"""Every figure shown with an interval, found in a study's JSON output by the names the outputs use,
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
