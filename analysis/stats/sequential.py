"""Anytime-valid intervals for paired A/B effects, so an experiment can be watched after every batch
and stopped the moment its verdict is settled.

A fixed-size 95% interval is valid once, at the size fixed in advance; looked at after every batch it
excludes a true zero far more often than 5% of the time (tests/analysis/stats/test_sequential.py measures both).
A confidence sequence covers the true mean at every size simultaneously with probability 1 - alpha,
so "stop when the interval excludes the threshold" keeps its error rate however often one looks.

The sequence used here is the predictable plug-in empirical-Bernstein one of Waudby-Smith and
Ramdas ("Estimating means of bounded random variables by betting", JRSS-B 2023), for observations
bounded in [-1, 1]: the per-seed difference of a paired A/B (1 - 0 for a win against a loss, 0.5 for
a draw, or a cluster's mean difference). It adapts to the variance, which is what makes it cheap for
paired designs where most seeds play the same in both arms.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Sequence:
    """The interval after each observation: arrays shaped like the observations."""

    centre: np.ndarray
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True)
class Stop:
    """Where a watched experiment stopped, and why.

    `reason` is "excludes" (the interval left the threshold: an effect, signed by `low`/`high`),
    "within" (the interval lies inside +-margin: any effect is smaller than the margin) or
    "budget" (the last look came and neither happened)."""

    games: int
    reason: str
    centre: float
    low: float
    high: float
    looks: int


def _checked(d: np.ndarray, alpha: float) -> np.ndarray:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    d = np.asarray(d, dtype=float)
    if d.size and (not np.all(np.isfinite(d)) or d.min() < -1 or d.max() > 1):
        raise ValueError("paired differences must be finite and lie in [-1, 1] (a win rate's difference per seed)")
    return d


def confidence_sequence(d: np.ndarray, alpha: float = 0.05) -> Sequence:
    """The (1 - alpha) confidence sequence for the mean of `d` after each observation.

    `d` holds differences in [-1, 1] along its last axis; leading axes are independent experiments
    (vectorised, so a thousand simulated A/Bs are one call). The running intersection is returned,
    which is valid because every member of the sequence is."""
    d = _checked(d, alpha)
    x = (d + 1) / 2  # into [0, 1], where the bound is stated
    t = np.arange(1, x.shape[-1] + 1, dtype=float)
    log_term = np.log(2 / alpha)
    mean = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    prev_mean = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mean[..., :-1]], axis=-1)
    var = (0.25 + np.cumsum((x - mean) ** 2, axis=-1)) / (t + 1)
    prev_var = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), var[..., :-1]], axis=-1)
    lam = np.minimum(np.sqrt(2 * log_term / (prev_var * t * np.log1p(t))), 0.5)
    psi = (-np.log1p(-lam) - lam) / 4
    weight = np.cumsum(lam, axis=-1)
    centre = np.cumsum(lam * x, axis=-1) / weight
    margin = (log_term + np.cumsum(4 * (x - prev_mean) ** 2 * psi, axis=-1)) / weight
    low = np.maximum.accumulate(np.clip(centre - margin, 0, 1), axis=-1)
    high = np.minimum.accumulate(np.clip(centre + margin, 0, 1), axis=-1)
    high = np.maximum(high, low)  # an empty intersection (probability <= alpha) stays a point
    return Sequence(centre=2 * np.clip(centre, low, high) - 1, low=2 * low - 1, high=2 * high - 1)


def watch(d: np.ndarray, batch: int, alpha: float = 0.05, threshold: float = 0.0, margin: float = 0.0) -> Stop:
    """Look after every `batch` observations of one experiment and stop at the first settled look.

    Settled means the interval excludes `threshold` (reason "excludes") or, when `margin` > 0, lies
    wholly inside threshold +- margin (reason "within"). With neither, the experiment runs to the end
    of `d` (reason "budget"): the cap."""
    if batch < 1:
        raise ValueError(f"batch must be at least 1 observation, got {batch!r}")
    if margin < 0:
        raise ValueError(f"margin must be 0 or more, got {margin!r}")
    d = _checked(d, alpha)
    if d.ndim != 1 or not d.size:
        raise ValueError("watch() takes one experiment: a non-empty 1-d array of paired differences")
    seq = confidence_sequence(d, alpha)
    ends = list(range(batch, d.size + 1, batch))
    if not ends or ends[-1] != d.size:
        ends.append(d.size)
    for look, n in enumerate(ends, 1):
        lo, hi, c = seq.low[n - 1], seq.high[n - 1], seq.centre[n - 1]
        if lo > threshold or hi < threshold:
            return Stop(n, "excludes", float(c), float(lo), float(hi), look)
        if margin > 0 and threshold - margin < lo and hi < threshold + margin:
            return Stop(n, "within", float(c), float(lo), float(hi), look)
    return Stop(d.size, "budget", float(c), float(lo), float(hi), len(ends))


def first_exclusion(low: np.ndarray, high: np.ndarray, looks: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    """For each experiment (rows), whether any look (column indices `looks`) excluded `threshold`."""
    lo, hi = np.take(low, looks, axis=-1), np.take(high, looks, axis=-1)
    return np.any((lo > threshold) | (hi < threshold), axis=-1)
