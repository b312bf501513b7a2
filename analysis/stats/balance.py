"""What a balance search measures: each protocol's result per game, paired differences between a
candidate and the baseline on the same seeds, and the two objectives a search trades (how far from
balance, how much changed). Pure numpy over the engine's game columns, so a worker, the search
and a test compute them alike."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from analysis.stats.proportions import wilson_interval, z_for
from analysis.stats.sequential import confidence_sequence


def outcomes(protocols: np.ndarray, winner: np.ndarray, n_protocols: int) -> np.ndarray:
    """games x protocols: 1 where the protocol's player won, 0 where it lost, 0.5 for a draw (turn
    cap), NaN where the protocol was not in the game. `protocols` is the engine's (games, 6) column:
    seat 0's trio, then seat 1's."""
    n = len(winner)
    out = np.full((n, n_protocols), np.nan, dtype=np.float32)
    rows = np.repeat(np.arange(n), 3)
    for seat in (0, 1):
        score = np.where(winner == seat, 1.0, np.where(winner == 1 - seat, 0.0, 0.5)).astype(np.float32)
        out[rows, protocols[:, 3 * seat : 3 * seat + 3].reshape(-1)] = np.repeat(score, 3)
    return out


@dataclass(frozen=True)
class Rates:
    """Each protocol's win rate (draws count half) with its 95% Wilson interval and games."""

    rate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    games: np.ndarray


def rates(out: np.ndarray) -> Rates:
    present = ~np.isnan(out)
    games = present.sum(axis=0)
    wins = np.nansum(out, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(games > 0, wins / np.maximum(games, 1), np.nan)
    low, high = wilson_interval(wins, games)
    return Rates(rate, np.where(games > 0, low, np.nan), np.where(games > 0, high, np.nan), games)


def paired(candidate: np.ndarray, base: np.ndarray, p: int) -> np.ndarray:
    """Protocol p's per-game difference (candidate - base) over the games (same seeds, so the same
    drafts) in which it played."""
    n = min(len(candidate), len(base))
    d = candidate[:n, p] - base[:n, p]
    return d[~np.isnan(d)].astype(float)


def effect(candidate: np.ndarray, base: np.ndarray, p: int, alpha: float) -> tuple[float, float, float, int]:
    """Protocol p's change of win rate for a search that looks after every batch: the anytime-valid
    interval (the running intersection, in seed order) with its own estimate (the confidence
    sequence's centre, which lies inside it; the plain mean need not), and its games."""
    d = paired(candidate, base, p)
    if not d.size:
        return 0.0, -1.0, 1.0, 0
    seq = confidence_sequence(d, alpha)
    return float(seq.centre[-1]), float(seq.low[-1]), float(seq.high[-1]), int(d.size)


@dataclass(frozen=True)
class Change:
    """A paired change of win rate read once at a size fixed in advance: the mean of the per-game
    differences and its (1 - alpha) normal interval, centred on it."""

    change: float
    low: float
    high: float
    games: int


def paired_change(candidate: np.ndarray, base: np.ndarray, p: int, alpha: float) -> Change:
    """Protocol p's paired change on games looked at once (a search's fresh verification seeds):
    mean +- z * sd / sqrt(games) of the per-game differences, clipped to [-1, 1]; the whole range
    with fewer than two games."""
    d = paired(candidate, base, p)
    if d.size < 2:
        return Change(float(d.mean()) if d.size else 0.0, -1.0, 1.0, int(d.size))
    mean = float(d.mean())
    half = z_for(1 - alpha) * float(d.std(ddof=1)) / np.sqrt(d.size)
    return Change(mean, float(max(-1.0, mean - half)), float(min(1.0, mean + half)), int(d.size))


def outside(rate: np.ndarray, band: tuple[float, float]) -> np.ndarray:
    """Each protocol's distance outside the band (0 inside it), in win-rate units."""
    lo, hi = band
    return np.maximum(0.0, rate - hi) + np.maximum(0.0, lo - rate)


def paired_noise(candidate: np.ndarray, base: np.ndarray, z: float = 2.0) -> np.ndarray:
    """Each protocol's noise in a paired change: `z` standard errors of its per-game differences
    (0 where it played no game in both)."""
    n = min(len(candidate), len(base))
    d = candidate[:n] - base[:n]
    games = (~np.isnan(d)).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.nanmean((d - np.nanmean(d, axis=0)) ** 2, axis=0))
    return np.where(games > 1, z * np.nan_to_num(sd) / np.sqrt(np.maximum(games, 1)), 0.0)


def imbalance(
    rate: np.ndarray,
    base_rate: np.ndarray,
    target: int | None,
    band: tuple[float, float],
    noise: np.ndarray | None = None,
) -> float:
    """The first objective, smaller is better, in win-rate units.

    With a target protocol: its distance from 50%, plus, for every other protocol, how much further
    outside the band it ends than it was at baseline, beyond its own noise (`noise`, e.g.
    `paired_noise`). A protocol that stays inside the band costs nothing, so lifting a weak protocol
    (which must take wins from the others) and lowering a strong one (which gives them wins) are
    charged alike: only for pushing another protocol out of balance. Without a target: the total
    distance of all protocols outside the band."""
    if target is None:
        return float(np.nansum(outside(rate, band)))
    allowance = np.zeros_like(rate) if noise is None else noise
    worse = np.maximum(0.0, outside(rate, band) - outside(base_rate, band) - allowance)
    worse[target] = 0.0
    return float(abs(rate[target] - 0.5) + np.nansum(worse))


def front(points: list[tuple[float, int]]) -> list[int]:
    """Indices of the points no other point dominates (both objectives minimised), best first."""
    keep = [
        i for i, (a, b) in enumerate(points) if not any((x <= a and y <= b) and (x < a or y < b) for x, y in points)
    ]
    return sorted(keep, key=lambda i: points[i])
