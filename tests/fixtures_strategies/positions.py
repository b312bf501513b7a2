"""Mid-game positions reached by seeded random play: what the honesty and learned-player tests decide at."""

import numpy as np

from sim.state import State


def positions(pool, n_games=6, stops=(6, 15, 30, 45)):
    """Mid-game positions with a pending decision, reached by random play."""
    out = []
    for seed in range(n_games):
        for stop in stops:
            g = State(pool, seed=seed)
            rng = np.random.default_rng(seed * 100 + stop)
            for _ in range(stop):
                d = g.pending()
                if d is None:
                    break
                g.answer(int(rng.integers(len(d.options))))
            if g.pending() is not None and g.pending().kind != "draft":
                out.append(g)
    return out
