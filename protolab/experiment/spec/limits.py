"""The bounds an experiment spec is checked against: each keeps a typo (games = 10**17) from growing
the driver without bound before any game is played."""

from __future__ import annotations

SPEC_FORMAT = 1  # the stored form's format (Spec.to_dict, run.json's spec)
DEFAULT_SHARD_GAMES = 10_000
MAX_SHARD_GAMES = 50_000  # keeps a worker's peak memory well under 1 GiB
MAX_GAMES = 1_000_000_000  # games per matchup (per arm)
MAX_TOTAL_GAMES = 5_000_000_000  # games of one run, every arm
MAX_SHARDS = 100_000  # run.json keeps about 1 KB per shard
MAX_MATCHUPS = 10_000_000  # per arm; the round robin of 30 protocols has 5,937,750
MAX_TRIOS = 4_400  # draft.trios: every pair of them is a matchup (30 protocols make 4,060 trios)
MAX_ARMS = 32
DEFAULT_ARM = "base"
