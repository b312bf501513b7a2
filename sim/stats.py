"""Small statistics helpers shared by summaries and reports."""

from __future__ import annotations

import math


def wilson(wins: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval for a proportion (sensible at small n and near 0 or 1)."""
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))
