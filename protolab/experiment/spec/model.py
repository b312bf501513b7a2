"""An experiment spec as validated (Spec): what a run plays, and the stored form it is kept in
(run.json's spec) and hashed by, so that a resumed run can tell it plays the same experiment."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from protolab.experiment.spec.arms import Arm
from protolab.experiment.spec.draft import Draft
from protolab.experiment.spec.limits import SPEC_FORMAT
from protolab.experiment.spec.meta import Meta
from protolab.experiment.spec.stop import Stop
from protolab.experiment.spec.strength import Strength


@dataclass(frozen=True)
class Spec:
    """An experiment, validated and with its card files read."""

    name: str
    seed: int
    games: int
    turn_cap: int
    shard_games: int
    events: bool | str | float  # true (all games), false (games only), "none" (summaries only), a fraction
    swap: bool
    draft: Draft
    arms: tuple[Arm, ...]
    description: str = ""
    output: str = "runs"
    source: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)
    meta: Meta | None = None  # [meta]: a metagame loop (protolab/experiment/meta/psro.py), else None
    tune: dict[str, Any] | None = None  # [tune]: a balance search (protolab/experiment/tune/tune.py), else None
    stop: Stop | None = None  # [stop]: play until settled (protolab/experiment/run/stopping.py)
    strength: Strength | None = None  # [strength]: adjacent tiers head to head (spec/strength.py)

    def arm_games(self, arm: Arm) -> int:
        """Games per matchup of `arm`: a duel's own, else the spec's."""
        return arm.games or self.games

    def _tables(self) -> dict[str, Any]:
        """The optional tables, as stored: only those the spec has."""
        tiers = [a.name for a in self.arms if a.tier]
        out: dict[str, Any] = {"tiers": tiers} if tiers else {}
        if self.meta:
            out["meta"] = self.meta.to_dict()
        if self.tune:
            out["tune"] = dict(self.tune)
        if self.stop:
            out["stop"] = self.stop.to_dict()
        if self.strength:
            out["strength"] = self.strength.to_dict()
        return out

    def to_dict(self) -> dict[str, Any]:
        """The spec as loaded (JSON-safe): stored in run.json and hashed."""
        return {
            **self._tables(),
            "format": SPEC_FORMAT,
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "games": self.games,
            "turn_cap": self.turn_cap,
            "shard_games": self.shard_games,
            "events": self.events,
            "output": self.output,
            "seats": {"strategies": list(self.arms[0].strategies), "swap": self.swap},
            "draft": self.draft.to_dict(),
            "arms": [a.to_dict() for a in self.arms],
            "source": self.source,
            "overrides": dict(self.overrides),
        }

    @functools.cached_property
    def hash(self) -> str:
        """What the rows depend on: everything but where the spec and the output live (computed
        once per spec: every shard's task carries it)."""
        d = self.to_dict()
        for k in ("output", "source", "overrides", "description"):
            d.pop(k)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def seat_key(spec: Spec, i: int) -> str:
    """Where arm i's strategies are written in the spec (the key its errors name)."""
    arm = spec.arms[i]
    return (
        "strength"
        if arm.duel
        else f"tiers[{i}]"
        if arm.tier
        else f"arms[{i}].strategies"
        if len(spec.arms) > 1
        else "seats.strategies"
    )


def spec_strategies(spec: Spec) -> list[tuple[str, str]]:
    """Every (key, strategy) of an experiment spec's seats, as check_code takes them."""
    return [
        (f"{seat_key(spec, i)}[{j}]", text) for i, arm in enumerate(spec.arms) for j, text in enumerate(arm.strategies)
    ]
