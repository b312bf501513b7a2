"""Mid-game positions reached by seeded random play: what the honesty and learned-player tests decide at."""

import numpy as np

from sim.state import State


def played(pool, seed: int, stop: int) -> State:
    """The game of `seed` after `stop` random decisions (fewer if it ends first), the random choices
    seeded by `seed` and `stop`."""
    g = State(pool, seed=seed)
    rng = np.random.default_rng(seed * 100 + stop)
    for _ in range(stop):
        d = g.pending()
        if d is None:
            break
        g.answer(int(rng.integers(len(d.options))))
    return g


def positions(pool, n_games=6, stops=(6, 15, 30, 45)):
    """Mid-game positions with a pending decision, reached by random play."""
    out = []
    for seed in range(n_games):
        for stop in stops:
            g = played(pool, seed, stop)
            if g.pending() is not None and g.pending().kind != "draft":
                out.append(g)
    return out


def action_positions(pool, n_games=5, stops=(8, 20, 34)):
    """Mid-game positions pending at an action decision with several options (three or more): random
    play, then the first option until such a decision."""
    out = []
    for seed in range(n_games):
        for stop in stops:
            g = played(pool, seed, stop)
            while g.pending() is not None and (g.pending().kind != "action" or len(g.pending().options) < 3):
                g.answer(0)
            if g.pending() is not None:
                out.append(g)
    return out
