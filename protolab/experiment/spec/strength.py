"""The `[strength]` table of a tier study: the run also plays each pair of adjacent tiers head to head
(tier i+1's strategy against tier i's), `games` games each, seats swapped on paired seeds, on the
tiers' pool and random drafts (docs/experiments.md, "Measured strength"). Each pair is one more arm
(a duel, named by analysis.studies.tiers.duels.duel_name), laid out, seeded, sharded and verified like the
tiers; the tier report reads the duels apart and never pools them into a tier's findings.

Checked with the spec's own checker, so every error names the file and the key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from analysis.studies.tiers.duels import duel_name
from sim.schema import Strict

if TYPE_CHECKING:
    from protolab.experiment.spec.arms import Arm
    from protolab.experiment.spec.checker import Checker


@dataclass(frozen=True)
class Strength:
    """`[strength]` as validated: the games each pair of adjacent tiers plays head to head."""

    games: int

    def to_dict(self) -> dict[str, Any]:
        """As stored in run.json and hashed."""
        return {"games": self.games}


class StrengthTable(Strict):
    """`[strength]`: the games of each duel (at most the spec's games per matchup: checked in parse_strength)."""

    games: Annotated[
        Any,
        Field(description="the games each pair of adjacent tiers plays head to head, an even number, e.g. games = 400"),
    ]


def parse_strength(
    c: Checker, raw: Any, arms: tuple[Arm, ...], draft_mode: str, swap: bool, max_games: int
) -> tuple[Strength, tuple[Arm, ...]]:
    """Validate `[strength]` (called by parse_spec with its checker, `arms` its tiers); returns the
    table and the duel arms, one per pair of adjacent tiers, each the upper tier's arm with its own
    name, strategies and games."""
    t = c.model(raw, "strength", StrengthTable)
    tiers = [a for a in arms if a.tier]
    if not tiers:
        raise c.error(
            "strength",
            "expected a tier study (tiers = [...]): [strength] plays each pair of adjacent tiers head to head",
        )
    games = c.integer(t.games, "strength.games", 2, max_games, "the games each pair of adjacent tiers plays")
    if games % 2:
        raise c.error("strength.games", f"expected an even number (the seats swap on paired seeds), got {games}")
    if not swap:
        raise c.error("seats.swap", "expected true with [strength]: each pair of tiers plays both seats of every seed")
    if draft_mode != "random":
        raise c.error(
            "draft.mode", f'expected "random" with [strength] (the pairs play random drafts), got {draft_mode!r}'
        )
    for i, a in enumerate(tiers):
        if a.strategies[0] != a.strategies[1]:
            raise c.error(
                f"tiers[{i}]",
                "expected one strategy on both seats with [strength] (a head-to-head game "
                f"plays one tier's strategy against another's), got {list(a.strategies)}",
            )
    duels = tuple(
        dataclasses.replace(
            upper,
            name=duel_name(upper.name, lower.name),
            tier=False,
            games=games,
            strategies=(upper.strategies[0], lower.strategies[0]),
        )
        for lower, upper in zip(tiers, tiers[1:], strict=False)
    )
    return Strength(games), duels
