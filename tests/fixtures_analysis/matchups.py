"""Trio-against-trio results drawn from known effects, for the metagame payoff model and verdict tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.studies.balance import meta as M


def synthetic_matchups(games: int = 40, seed: int = 2) -> tuple[pd.DataFrame, M.Universe, dict]:
    """Every disjoint pair of trios of 8 protocols with known effects: protocol strengths, one synergy
    (Fire with Water) and one counter (Hate beats Life)."""
    u = M.Universe.of(["Apathy", "Darkness", "Death", "Fire", "Hate", "Life", "Light", "Water"])
    rng = np.random.default_rng(seed)
    truth = {
        "main": np.array([-0.6, -0.3, 0.0, 0.2, 0.1, -0.1, 0.3, 0.4]),
        "synergy": ("Fire", "Water", 0.8),
        "counter": ("Hate", "Life", 0.9),
    }
    pairs = [
        (a, b)
        for a in range(len(u.trios))
        for b in range(a + 1, len(u.trios))
        if not set(u.members[a]) & set(u.members[b])
    ]
    ia, ib = np.array(pairs).T
    pos = {p: i for i, p in enumerate(u.protocols)}

    def strength(t: int) -> float:
        names = {u.protocols[i] for i in u.members[t]}
        syn = truth["synergy"][2] if {"Fire", "Water"} <= names else 0.0
        return truth["main"][u.members[t]].sum() + syn

    z = np.array([strength(a) - strength(b) for a, b in pairs])
    for x, y in ((ia, ib), (ib, ia)):
        hit = np.array([pos["Hate"] in u.members[a] and pos["Life"] in u.members[b] for a, b in zip(x, y, strict=True)])
        z += np.where(hit, truth["counter"][2] if x is ia else -truth["counter"][2], 0)
    wins = rng.binomial(games, 1 / (1 + np.exp(-z)))
    truth["logit"] = z
    df = pd.DataFrame(
        {"trio_a": np.array(u.trios)[ia], "trio_b": np.array(u.trios)[ib], "games": games, "wins": wins, "draws": 0}
    )
    return df, u, truth
