"""Who says no to "may": per card, the share of optional steps a player declines, for the learned
player against the fixed rule (greedy: "say yes to may"), and the Fire 3 A/B (its optional
discard made 2 cards: datasets/experiments/variants/fire3_discard_2.toml).

    python benchmarks/may_share.py --games 2000

Each player plays itself on the same seeds (random drafts on the default pool, then a set of
matchups holding Fire for the Fire 3 rows); both seats' answers are counted."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from strategies._learned import MayTally

from sim.batch import play_columns
from sim.pool import Pool, load_pool
from strategies.seats import make_seats

FIRE3_VARIANT = Path(__file__).resolve().parents[1] / "datasets/experiments/variants/fire3_discard_2.toml"
FIRE_MATCHUPS = [
    [["Fire", "Water", "Death"], ["Light", "Life", "Gravity"]],
    [["Speed", "Hate", "Psychic"], ["Fire", "Spirit", "Metal"]],
    [["Fire", "Darkness", "Plague"], ["Apathy", "Love", "Water"]],
    [["Life", "Death", "Light"], ["Fire", "Gravity", "Speed"]],
]


def tally(pool: Pool, strategy: str, seeds: np.ndarray, protocols=None) -> dict[int, tuple[int, int]]:
    """{card id: (asked, declined)} over both seats of `strategy` playing itself."""
    seats = make_seats(pool, (strategy, strategy))
    counters = [MayTally(s) for s in seats.configs]
    play_columns(pool, seeds, seats.configs, protocols=protocols)
    out: dict[int, list[int]] = {}
    for c in counters:
        for d, (asked, declined) in c.counts().items():
            row = out.setdefault(d, [0, 0])
            row[0] += asked
            row[1] += declined
    return {d: (a, n) for d, (a, n) in out.items()}


def share(counts: dict[int, tuple[int, int]], d: int) -> str:
    asked, declined = counts.get(d, (0, 0))
    return f"{declined / asked:6.1%} of {asked:5d}" if asked else "      -        "


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--learned", default="learned")
    args = ap.parse_args()
    seeds = np.arange(args.seed, args.seed + args.games, dtype=np.uint64)
    pool = load_pool()
    players = (args.learned, "greedy")
    counts = {s: tally(pool, s, seeds) for s in players}
    cards = sorted(set(counts[players[0]]) | set(counts[players[1]]), key=lambda d: pool.cards[d].name)
    print(f"declined 'may' steps per card, self-play, {args.games} games, random drafts")
    print(f"{'card':<14} {players[0]:>22} {players[1]:>22}")
    for d in cards:
        print(f"{pool.cards[d].name:<14} {share(counts[players[0]], d):>22} {share(counts[players[1]], d):>22}")
    print(f"\nFire 3 A/B: {args.games} games on {len(FIRE_MATCHUPS)} matchups holding Fire")
    print(f"{'pool':<26} {players[0]:>22} {players[1]:>22}")
    for name, cards_ in (("original (discard 1)", ()), ("fire3_discard_2 (discard 2)", (str(FIRE3_VARIANT),))):
        p = load_pool(cards=cards_)
        fire3 = p.card("Fire 3").id
        row = [share(tally(p, s, seeds, FIRE_MATCHUPS), fire3) for s in players]
        print(f"{name:<26} {row[0]:>22} {row[1]:>22}")


if __name__ == "__main__":
    main()
