"""How often bots stall until the turn cap, and which games a change of play touched.

    python benchmarks/turn_cap.py --games 200000 --strategy greedy [--save before.npy]
                                  [--compare before.npy]

Plays one game per seed 1..N (random drafts, all four sets) with the strategy on both seats and
prints the games that ended at the turn cap. --save keeps one digest per game (every record
column of its row); --compare counts the games whose digest differs from a saved run on the same
seeds, i.e. the games a change of the bots played differently."""

from __future__ import annotations

import argparse
import hashlib

import numpy as np
from sim.engine._core import constants

from sim.pool import load_pool
from strategies.seats import play_games

TURN_CAP = {name: code for code, name in constants()["end_reason"].items()}["turn_cap"]
CHUNK = 20000


def game_digests(cols: dict) -> np.ndarray:
    """One 8-byte digest per game (row) over every record column, in name order."""
    n = len(cols["winner"])
    parts = [
        np.ascontiguousarray(cols[name]).reshape(n, -1).view(np.uint8)
        for name in sorted(cols)
        if not isinstance(cols[name], dict)
    ]
    rows = np.concatenate([p.reshape(n, -1) for p in parts], axis=1)
    return np.array(
        [int.from_bytes(hashlib.blake2b(r.tobytes(), digest_size=8).digest(), "little") for r in rows], dtype=np.uint64
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200000)
    ap.add_argument("--strategy", default="greedy")
    ap.add_argument("--save", help="write the per-game digests here (.npy)")
    ap.add_argument("--compare", help="count the games whose digest differs from this file's")
    args = ap.parse_args()
    pool = load_pool()
    capped, digests = 0, []
    for start in range(1, args.games + 1, CHUNK):
        seeds = np.arange(start, min(start + CHUNK, args.games + 1))
        cols = play_games(pool, seeds, strategies=(args.strategy, args.strategy))
        capped += int((cols["end_reason"] == TURN_CAP).sum())
        digests.append(game_digests(cols))
    mine = np.concatenate(digests)
    print(
        f"{args.strategy} vs {args.strategy}, {args.games} games: {capped} at the turn cap "
        f"({100 * capped / args.games:.4f}%)"
    )
    if args.save:
        np.save(args.save, mine)
    if args.compare:
        other = np.load(args.compare)
        print(f"games played differently from {args.compare}: {int((other != mine).sum())}")


if __name__ == "__main__":
    main()
