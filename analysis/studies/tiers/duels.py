"""The duels of a tier study with `[strength]` (docs/experiments.md, "Measured strength"): each pair of
adjacent tiers played head to head, one arm per pair, the upper tier's strategy on seat 0 of every
even game and seat 1 of its seat-swapped partner. This module names those arms (the spec parser
writes them, the tier report finds them by the same rule) and lists a run's pairs from its manifest."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.runs.manifest import Manifest


@dataclass(frozen=True)
class Duel:
    """One pair of adjacent tiers: `upper` (listed above) against `lower`, in arm `arm`."""

    upper: str
    lower: str
    arm: str


def duel_name(upper: str, lower: str) -> str:
    """The arm of a duel: `duel:UPPER-LOWER` (a ':' no tier name has, so it never names a tier)."""
    return f"duel:{upper}-{lower}"


def duels(manifest: Manifest | None) -> list[Duel]:
    """The pairs of adjacent tiers a run plays head to head, weakest pair first; [] without [strength]."""
    if manifest is None or not isinstance(manifest.spec.stored.get("strength"), dict):
        return []
    tiers = list(manifest.spec.tiers)
    return [Duel(upper, lower, duel_name(upper, lower)) for lower, upper in zip(tiers, tiers[1:], strict=False)]


def strength_games(manifest: Manifest | None) -> int:
    """The games each pair plays ([strength] games); 0 without [strength]."""
    table = manifest.spec.stored.get("strength") if manifest is not None else None
    return int(table.get("games", 0)) if isinstance(table, dict) else 0
