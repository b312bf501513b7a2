"""How many games a question needs, and how large an effect a finished run could have missed.

Both come from the spread of the paired differences (one per seed, in [-1, 1]), measured on a pilot
or on the run itself: a paired design whose arms agree on most seeds has a small spread and needs
far fewer games than two independent samples of the same rates would."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis.stats.balance import paired
from analysis.stats.proportions import z_for


def _quantiles(alpha: float, power: float) -> float:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must lie strictly between 0 and 1, got {alpha!r} and {power!r}")
    return z_for(1 - alpha) + z_for(2 * power - 1)


def spread(d: np.ndarray) -> float:
    """The standard deviation of paired differences (ddof 1), the one number both answers need."""
    d = np.asarray(d, dtype=float)
    if d.size < 2:
        raise ValueError("the spread of paired differences needs at least 2 seeds")
    return float(d.std(ddof=1))


def games_needed(sd: float, effect: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Seeds a fixed-size two-sided paired test needs to see `effect` (a difference of means, e.g.
    0.03 for 3 points) with the given power, when the differences spread by `sd`."""
    if effect == 0:
        raise ValueError("an effect of 0 cannot be seen by any number of games")
    if sd < 0:
        raise ValueError(f"a spread is 0 or more, got {sd!r}")
    return max(2, math.ceil((_quantiles(alpha, power) * sd / abs(effect)) ** 2))


def detectable(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest effect a fixed-size paired test of `n` seeds sees with the given power: a run
    that flags nothing could still hide any effect below this."""
    if n < 1:
        raise ValueError(f"a run has at least 1 seed, got {n!r}")
    return _quantiles(alpha, power) * sd / math.sqrt(n)


def protocol_power(
    base: np.ndarray,
    arm: np.ndarray | None,
    names: list[str],
    effect: float,
    games: int,
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """Per protocol, from a pilot's per-game results (analysis.stats.balance.outcomes): how often it plays,
    the spread of its per-game result (of the paired difference arm - base when `arm` is given,
    else of the result itself, for "is it off 50%?"), the games per arm that see `effect` with the
    given power, and the smallest effect `games` per arm would see."""
    rows = []
    n = len(base)
    for p, name in enumerate(names):
        d = paired(arm, base, p) if arm is not None else base[:, p][~np.isnan(base[:, p])].astype(float)
        share = len(d) / n if n else 0.0
        if len(d) < 2 or share == 0:
            rows.append(
                {"protocol": name, "plays": share, "spread": np.nan, "games_needed": np.nan, "detectable": np.nan}
            )
            continue
        sd = spread(d)
        needed = math.ceil(games_needed(sd, effect, alpha, power) / share) if sd > 0 else 2
        seen = detectable(sd, max(1, int(games * share)), alpha, power)
        rows.append({"protocol": name, "plays": share, "spread": sd, "games_needed": needed, "detectable": seen})
    return pd.DataFrame(rows)
