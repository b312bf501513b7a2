"""Round-robin ladders between strategies: head-to-head win rates with 95% Wilson intervals and
Bradley-Terry ratings on the Elo scale with bootstrap intervals."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from sim.stats import wilson
from strategies.seats import play_games


def play_pair(
    pool, a: str, b: str, games: int, seed: int = 1, turn_cap: int = 200, draft: str = "random"
) -> dict[str, Any]:
    """`games` games between a and b on paired seeds: each seed is played twice with the seats
    swapped, so seat and draft luck cancel out."""
    half = max(1, games // 2)
    seeds = range(seed, seed + half)
    ab = play_games(pool, seeds, (a, b), draft, turn_cap=turn_cap)
    ba = play_games(pool, seeds, (b, a), draft, turn_cap=turn_cap)
    wins_a = int((ab["winner"] == 0).sum() + (ba["winner"] == 1).sum())
    wins_b = int((ab["winner"] == 1).sum() + (ba["winner"] == 0).sum())
    return pair_row(a, b, wins_a, wins_b, 2 * half)


def pair_row(a: str, b: str, wins_a: int, wins_b: int, games: int) -> dict[str, Any]:
    """One ladder pair as the ladder records it: wins each, draws (counted half to each side), and a's
    win rate with its Wilson interval."""
    draws = games - wins_a - wins_b
    lo, hi = wilson(wins_a + draws / 2, games)
    return {
        "a": a,
        "b": b,
        "games": games,
        "wins_a": wins_a,
        "wins_b": wins_b,
        "draws": draws,
        "win_rate_a": (wins_a + draws / 2) / games,
        "ci_low": lo,
        "ci_high": hi,
    }


def bradley_terry(names: Sequence[str], pairs: Sequence[dict[str, Any]], iters: int = 500) -> np.ndarray:
    """Maximum-likelihood strengths (MM algorithm); draws count half a win to each side, and
    every pair gets half a win each way as a prior so a 100% record stays finite."""
    k = len(names)
    idx = {n: i for i, n in enumerate(names)}
    w = np.full((k, k), 0.0)
    for p in pairs:
        i, j = idx[p["a"]], idx[p["b"]]
        w[i, j] += p["wins_a"] + p["draws"] / 2 + 0.5
        w[j, i] += p["wins_b"] + p["draws"] / 2 + 0.5
    n = w + w.T
    pi = np.ones(k)
    for _ in range(iters):
        denom = (n / (pi[:, None] + pi[None, :])).sum(axis=1)
        new = w.sum(axis=1) / np.maximum(denom, 1e-300)
        new /= math.exp(np.log(new).mean())
        if np.allclose(new, pi, rtol=1e-10, atol=0):
            pi = new
            break
        pi = new
    return 400 * np.log10(pi)


def ratings(names: Sequence[str], pairs: Sequence[dict[str, Any]], boot: int = 200, seed: int = 0) -> list[dict]:
    """Elo-scale Bradley-Terry ratings (mean 0) with 95% parametric-bootstrap intervals."""
    est = bradley_terry(names, pairs)
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(boot):
        resampled = []
        for p in pairs:
            n = p["games"]
            pa = (p["wins_a"] + p["draws"] / 2) / n
            wa = int(rng.binomial(n, pa))
            resampled.append({**p, "wins_a": wa, "wins_b": n - wa, "draws": 0})
        samples.append(bradley_terry(names, resampled, iters=200))
    s = np.array(samples)
    lo, hi = np.percentile(s, [2.5, 97.5], axis=0)
    order = np.argsort(-est)
    return [
        {"strategy": names[i], "elo": float(est[i]), "ci_low": float(lo[i]), "ci_high": float(hi[i])} for i in order
    ]


def run_ladder(
    pool,
    strategies: Sequence[str],
    games: int,
    seed: int = 1,
    turn_cap: int = 200,
    draft: str = "random",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    pairs = []
    for a, b in combinations(strategies, 2):
        if progress:
            progress(f"{a} vs {b}")
        pairs.append(play_pair(pool, a, b, games, seed, turn_cap, draft))
    return {
        "games_per_pair": games,
        "seed": seed,
        "pool_hash": pool.hash,
        "pairs": pairs,
        "ratings": ratings(list(strategies), pairs),
    }
