"""Per-game seeds that depend only on (master seed, matchup, game), never on sharding or workers.

Scheme 1 (documented in docs/experiments.md; a change would be scheme 2):

    mix(x)   = the splitmix64 finaliser on 64-bit unsigned integers
    key      = splitmix64(master) = mix(master + gamma), gamma splitmix64's golden-ratio increment
    seed     = mix(mix(key ^ ((matchup + 1) * 0xD1B54A32D192ED03)) ^ ((pair + 1) * 0x8CB92BA72F3D8DD7))

where `pair` is the game's index within its matchup, or that index // 2 when seats are swapped
(the two games of a pair share one seed). Arms of an A/B study share seeds on purpose: the same
matchup and game number get the same seed in every arm (common random numbers).

splitmix64 itself is the engine's (sim/engine/rng.pxd, the one definition the games use too)."""

from __future__ import annotations

import numpy as np
from sim.engine._core import mix64_array, splitmix64_array

SEED_SCHEME = 1
_U = np.uint64
_K_MATCHUP = _U(0xD1B54A32D192ED03)
_K_PAIR = _U(0x8CB92BA72F3D8DD7)
_K_SAMPLE = _U(0xA0761D6478BD642F)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, vectorised over uint64 arrays (wrapping arithmetic)."""
    return mix64_array(x)


def master_key(master_seed: int) -> np.uint64:
    """The experiment's key: splitmix64 of the master seed."""
    return splitmix64_array(np.array([master_seed], dtype=_U))[0]


def game_seeds(master_seed: int, matchup: np.ndarray, game: np.ndarray, swap: bool) -> np.ndarray:
    """The engine seed of each game, given its matchup and its index within the matchup."""
    matchup = np.asarray(matchup, dtype=_U)
    pair = np.asarray(game, dtype=_U)
    if swap:
        pair = pair // _U(2)
    with np.errstate(over="ignore"):
        k = mix64(master_key(master_seed) ^ ((matchup + _U(1)) * _K_MATCHUP))
        return mix64(k ^ ((pair + _U(1)) * _K_PAIR))


def sample_order(master_seed: int, n: int, first: int | None = None) -> np.ndarray:
    """A seeded permutation of range(n): candidate j's rank is its hashed key (ties by j).

    Taking the first k gives a sample without replacement, and a larger k extends a smaller one
    (the first k matchups, and so their seeds, stay the same). `first`: only the permutation's first
    `first` entries, the same ones, without sorting all n keys (a sample of millions of matchups)."""
    j = np.arange(n, dtype=_U)
    with np.errstate(over="ignore"):
        keys = mix64(master_key(master_seed) ^ ((j + _U(1)) * _K_SAMPLE))
    if first is None or first >= n:
        return np.argsort(keys, kind="stable")
    if first <= 0:
        return np.zeros(0, dtype=np.intp)
    cut = np.partition(keys, first - 1)[first - 1]  # the first-th smallest key
    chosen = np.flatnonzero(keys <= cut)  # in j order: a stable sort of them breaks ties as argsort does
    return chosen[np.argsort(keys[chosen], kind="stable")][:first]
