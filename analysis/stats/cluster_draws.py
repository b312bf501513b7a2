"""The seeded bootstrap draw over seed clusters that every tier-study interval shares: each resample
says how many times each cluster (the games sharing one seed: a game or a seat-swapped pair) is
drawn, and every tier gets the same draw, so the pairing of the tiers' games is kept."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

RESAMPLES = 1000
BOOTSTRAP_SEED = 0
BATCH = 50


def cluster_draws(clusters: int, resamples: int = RESAMPLES, seed: int = BOOTSTRAP_SEED) -> Iterator[np.ndarray]:
    """Cluster weights, `resamples` rows of `clusters` draw counts, in batches of up to 50 rows: the
    same seed gives the same draws, batch for batch."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, BATCH):
        yield rng.multinomial(clusters, np.full(clusters, 1.0 / clusters), size=min(BATCH, resamples - start)).astype(
            float
        )
