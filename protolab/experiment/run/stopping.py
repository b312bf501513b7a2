"""An A/B run that stops when its verdict is settled (a spec's `[stop]` table, docs/experiments.md,
"Stopping when settled").

The run's shards are laid out batch by batch (plan.py: every arm's shards of batch k come before
batch k + 1's), and the driver plays one batch at a time: after each, the watched protocols' paired
differences (variant arm minus the first arm, seed cluster by seed cluster) are added in batch order
and each effect's anytime-valid interval (analysis/stats/sequential.py) is looked at. The run stops
scheduling once every watched effect is settled, or after the last batch (the cap). The decision
reads only whole batches in batch order, never which shard finished first, so a resumed run stops
where an uninterrupted one does, on any number of workers; the stop is recorded in run.json
(`stop`: when, why, after how many games, each effect with its interval), which the report, the
A/B page and `--resume` read."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from analysis.runs import runfolder
from analysis.runs.manifest import Manifest, ShardEntry
from analysis.runs.schema import PROTOCOL_COLUMNS
from analysis.stats.sequential import confidence_sequence
from protolab.experiment.run.ledger import Ledger, now
from protolab.experiment.run.plan import Plan, ShardPlan

COLUMNS = ["game_in_matchup", "winner", *PROTOCOL_COLUMNS]


def batches(plan: Plan) -> list[list[ShardPlan]]:
    """The plan's shards grouped by batch, in batch order (a prefix of the shard indices each)."""
    assert plan.spec.stop is not None
    size = plan.spec.stop.batch
    out: dict[int, list[ShardPlan]] = {}
    for s in plan.shards:
        out.setdefault((s.first_game - plan.arm_first[s.arm]) // size, []).append(s)
    return [out[k] for k in sorted(out)]


def planned_shards(manifest: Manifest, shard_count: int) -> int:
    """The shards a run plays: all of its layout, or those up to where it stopped when settled."""
    stop = manifest.stop
    return int(stop["shards"]) if isinstance(stop, dict) and isinstance(stop.get("shards"), int) else shard_count


def scores(table: Any, protocol: str, swap: bool) -> tuple[np.ndarray, np.ndarray]:
    """(cluster, score) of `protocol` in a games table: 1 won, 0 lost, 0.5 drawn, averaged over the
    games of a seed cluster (the two games of a swapped pair), only where the protocol played."""
    game = table.column("game_in_matchup").to_numpy().astype(np.int64)
    winner = table.column("winner").to_numpy().astype(np.int64)
    score = np.full(len(game), np.nan)
    for seat in (0, 1):
        cols = PROTOCOL_COLUMNS[3 * seat : 3 * seat + 3]
        holds = np.zeros(len(game), bool)
        for c in cols:
            holds |= np.asarray(table.column(c).cast("string").to_pylist(), dtype=object) == protocol
        result = np.where(winner == seat, 1.0, np.where(winner == 1 - seat, 0.0, 0.5))
        score = np.where(holds, result, score)
    cluster = game // 2 if swap else game
    keep = ~np.isnan(score)
    ids, inverse = np.unique(cluster[keep], return_inverse=True)
    return ids, np.bincount(inverse, score[keep]) / np.bincount(inverse)


@dataclass
class Effect:
    """One watched effect: a protocol's win-rate change, one arm against the first, so far."""

    arm: str
    against: str
    protocol: str
    diffs: list[np.ndarray]

    def state(self, alpha: float, precision: float) -> dict[str, Any]:
        d = np.concatenate(self.diffs) if self.diffs else np.zeros(0)
        if not d.size:
            return {
                "arm": self.arm,
                "against": self.against,
                "protocol": self.protocol,
                "change": 0.0,
                "estimate": 0.0,
                "low": -1.0,
                "high": 1.0,
                "clusters": 0,
                "settled": "",
            }
        seq = confidence_sequence(d, alpha)
        lo, hi = float(seq.low[-1]), float(seq.high[-1])
        how = "sign" if lo > 0 or hi < 0 else "precise" if (hi - lo) / 2 * 100 <= precision else ""
        return {
            "arm": self.arm,
            "against": self.against,
            "protocol": self.protocol,
            "change": float(d.mean()),
            "estimate": float(seq.centre[-1]),  # what the interval is built around; the mean may lie outside it
            "low": lo,
            "high": hi,
            "clusters": int(d.size),
            "settled": how,
        }


class Watch:
    """The watched effects of a run, fed whole batches in batch order."""

    def __init__(self, plan: Plan):
        spec = plan.spec
        assert spec.stop is not None
        self.spec, self.settings = spec, spec.stop
        self.protocols = [plan.pools[0].protocols[plan.pools[0].protocol(p)] for p in spec.stop.protocols]
        arms = [a.name for a in spec.arms]
        self.effects = [Effect(a, arms[0], p, []) for a in arms[1:] for p in self.protocols]

    def add(self, run_dir: Any, entries: list[ShardEntry]) -> None:
        """One batch: every arm's recorded shards of it (their games files)."""
        tables: dict[str | None, list[Any]] = {}
        for e in entries:
            data = (runfolder.open_location(run_dir) / str(e.games_file)).read_bytes()
            tables.setdefault(e.arm, []).append(pq.read_table(io.BytesIO(data), columns=COLUMNS))
        for eff in self.effects:
            ids_b, base = self._scores(tables[eff.against], eff.protocol)
            ids_v, var = self._scores(tables[eff.arm], eff.protocol)
            both, ib, iv = np.intersect1d(ids_b, ids_v, assume_unique=True, return_indices=True)
            eff.diffs.append(np.clip(var[iv] - base[ib], -1, 1))

    def _scores(self, tables: list[Any], protocol: str) -> tuple[np.ndarray, np.ndarray]:
        parts = [scores(t, protocol, self.spec.swap) for t in tables]
        ids, vals = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        order = np.argsort(ids, kind="stable")
        return ids[order], vals[order]

    def look(self) -> list[dict[str, Any]]:
        return [e.state(self.settings.alpha, self.settings.precision) for e in self.effects]


def play_until_settled(
    plan: Plan, ledger: Ledger, play: Callable[[list[ShardPlan]], None], say: Callable[..., Any]
) -> dict[str, Any]:
    """Play `plan` batch by batch with `play` (which plays the given shards not yet recorded), look
    after each, stop at the first settled look or the last batch; the stop, recorded in run.json."""
    watch = Watch(plan)
    groups = batches(plan)
    played = 0
    rules = plan.spec.stop
    assert rules is not None  # batches(plan) holds the same
    for k, group in enumerate(groups, 1):
        play(group)
        watch.add(ledger.run_dir, [ledger.done[s.index] for s in group])
        played += len(group)
        effects = watch.look()
        settled = all(e["settled"] for e in effects)
        if settled or k == len(groups):
            games = sum(s.games for g in groups[:k] for s in g)
            stop = {
                "rule": rules.rule,
                "reason": "settled" if settled else "cap",
                "at": now(),
                "looks": k,
                "of_looks": len(groups),
                "games_per_arm": games // len(plan.spec.arms),
                "games": games,
                "shards": played,
                "alpha": rules.alpha,
                "precision": rules.precision,
                "effects": effects,
            }
            ledger.manifest.stop = stop
            ledger.planned = played
            if settled and k < len(groups):
                say(
                    f"[green]Settled after look {k} of {len(groups)}[/green]: stopping at "
                    f"{stop['games_per_arm']:,} games per arm"
                )
            return stop
    raise AssertionError("a plan has at least one batch")
