"""The size of a run, checked before its matchups and shards are listed (protolab/experiment/run/plan.py):
a spec that parses may still name more games, matchups or shards than one run can lay out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from protolab.experiment.spec.checker import SpecError
from protolab.experiment.spec.limits import MAX_MATCHUPS, MAX_SHARDS, MAX_TOTAL_GAMES

if TYPE_CHECKING:
    from protolab.experiment.spec.model import Spec


def check_matchups(spec: Spec, count: int) -> None:
    """Refuse a draft with more than MAX_MATCHUPS matchups (`count` may be an upper bound), before
    they are listed."""
    if count > MAX_MATCHUPS:
        raise SpecError(
            f"{spec.source}: key 'draft': up to {count:,} matchups; expected at most {MAX_MATCHUPS:,} "
            '(fewer protocols or trios, or mode = "sampled")'
        )


def check_size(spec: Spec, matchups: int, shard_games: int, arm_matchups: list[int] | None = None) -> None:
    """Refuse a run too large to lay out (games in all, shards of `shard_games`) before its shards
    are listed; `arm_matchups`: each arm's matchups where they differ from `matchups` (Arm.holds)."""
    counts = arm_matchups or [max(1, matchups)] * len(spec.arms)
    sizes = [n * spec.arm_games(a) for n, a in zip(counts, spec.arms, strict=True)]
    total = sum(sizes)
    key = "--games" if "games" in spec.overrides else "games"
    if total > MAX_TOTAL_GAMES:
        duels = [a for a in spec.arms if a.duel]
        pairs = f" + {len(duels)} head-to-head pairs x {duels[0].games:,}" if duels else ""
        raise SpecError(
            f"{spec.source}: key '{key}': {spec.games:,} games per matchup x {max(1, matchups):,} "
            f"matchups x {len(spec.arms) - len(duels)} arms{pairs} = {total:,} games; expected at most "
            f"{MAX_TOTAL_GAMES:,} games in one run"
        )
    shards = sum(-(-n // shard_games) for n in sizes)
    if shards > MAX_SHARDS:
        raise SpecError(
            f"{spec.source}: key '{key}': {total:,} games in shards of {shard_games:,} make "
            f"{shards:,} shards; expected at most {MAX_SHARDS:,} (fewer games, or larger shards: "
            "shard_games, docs/experiments.md)"
        )
