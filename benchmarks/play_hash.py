"""Hash of the full record and event columns of fixed batches (greedy, styles, search): a change
that keeps every choice keeps these hashes. `--set players` hashes the model players' batches
(learned, qlearned, the search with rollouts and with the model at its leaves) instead: what a
change to their C code must keep."""

from __future__ import annotations

import argparse
import hashlib
import sys

import numpy as np

from sim.batch import LATER_COLUMNS
from sim.pool import load_pool
from strategies.seats import play_games

BATCHES = (
    (("greedy", "greedy"), 20000),
    (("rush", "control"), 3000),
    (("disrupt", "greedy"), 3000),
    (("search:sims=8,depth=1", "greedy"), 200),
)
PLAYERS = (
    (("learned", "greedy"), 300),
    (("qlearned", "greedy"), 1000),
    (("ismcts:iters=200", "greedy"), 100),
    (("ismcts:iters=100,leaf=model", "greedy"), 100),
)
SETS = {"engine": BATCHES, "players": PLAYERS}


def columns_hash(cols: dict) -> str:
    """sha256 over every column (events included), in name order, with dtype and shape; a column added
    later (sim/batch.py LATER_COLUMNS) only where some game differs from its value before it."""
    h = hashlib.sha256()
    for name in sorted(cols):
        if name in LATER_COLUMNS and np.all(cols[name] == LATER_COLUMNS[name]):
            continue
        value = cols[name]
        if isinstance(value, dict):
            for sub in sorted(value):
                arr = np.ascontiguousarray(value[sub])
                h.update(f"{name}.{sub}:{arr.dtype}:{arr.shape}".encode())
                h.update(arr.tobytes())
        else:
            arr = np.ascontiguousarray(value)
            h.update(f"{name}:{arr.dtype}:{arr.shape}".encode())
            h.update(arr.tobytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--divide", type=int, default=1, help="play each batch's games / DIVIDE (a quick look)")
    ap.add_argument("--set", choices=sorted(SETS), default="engine", help="which batches (default: engine)")
    a = ap.parse_args()
    pool = load_pool()
    for strategies, full in SETS[a.set]:
        games = max(1, full // a.divide)
        cols = play_games(pool, np.arange(1, games + 1), strategies=strategies, events=True)
        print(f"{'-'.join(strategies):32s} {games:6d} {columns_hash(cols)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
