"""A seeded round robin of disjoint trios, written without the engine: rows for the trio, matchup and
metagame tables."""

from __future__ import annotations

import itertools
import random

PROTOCOLS = ("Apathy", "Darkness", "Death", "Fire", "Gravity", "Hate", "Life", "Light")


def round_robin_rows() -> list[dict]:
    """Every pair of disjoint trios of 8 protocols (280 matchups), two games each (seats swapped), with
    seeded winners, first players and a few draws."""
    rng = random.Random(5)
    trios = list(itertools.combinations(PROTOCOLS, 3))
    pairs = [(a, b) for i, a in enumerate(trios) for b in trios[i + 1 :] if not set(a) & set(b)]
    rows = []
    for m, (a, b) in enumerate(pairs):
        first = rng.randrange(2)
        for k, (s0, s1) in enumerate(((a, b), (b, a))):
            strength = {p: i for i, p in enumerate(PROTOCOLS)}
            edge = sum(strength[p] for p in s0) - sum(strength[p] for p in s1) + rng.uniform(-6, 6)
            winner = -1 if rng.random() < 0.05 else (0 if edge > 0 else 1)
            row = {
                "matchup": m,
                "game_in_matchup": k,
                "first_player": first,
                "winner": winner,
                "end_reason": "turn_cap" if winner < 0 else "compiled",
            }
            for s, trio in ((0, s0), (1, s1)):
                row.update({f"seat{s}_protocol_{p}": x for p, x in zip(("left", "middle", "right"), trio, strict=True)})
            rows.append(row)
    return rows
