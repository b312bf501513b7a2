"""The Wilson score interval, written once: the ladder's scalar calls and the analysis's columns
(analysis/stats/proportions.py) use the same formula."""

from __future__ import annotations

import numpy as np

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


def wilson_interval(wins: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval per element (sane at small n and near 0 or 1); (0, 1) where n == 0."""
    wins = np.asarray(wins, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, wins / n, 0.5)
        nn = np.where(n > 0, n, 1.0)
        d = 1 + z * z / nn
        centre = (p + z * z / (2 * nn)) / d
        half = z * np.sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / d
    lo = np.where(n > 0, np.maximum(0.0, centre - half), 0.0)
    hi = np.where(n > 0, np.minimum(1.0, centre + half), 1.0)
    return lo, hi


def wilson(wins: float, n: float, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for one proportion."""
    lo, hi = wilson_interval(np.array([wins]), np.array([n]), z)
    return float(lo[0]), float(hi[0])
