"""The `[meta]` table of a spec: a metagame loop (protolab/experiment/meta/psro.py) that plays one
round robin per iteration and adds best-response trios until the equilibrium stops moving
(docs/experiments.md). Checked with the spec's own checker, so every error names the file and the key."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from sim.schema import Checked, fail, integer, number

if TYPE_CHECKING:
    from protolab.experiment.spec.checker import Checker
    from protolab.experiment.spec.draft import Draft

MAX_ITERATIONS = 50
DEFAULT_START = 6  # random start trios, unless draft.trios


@dataclass(frozen=True)
class Meta:
    """`[meta]` as validated: how long the loop runs and what a best response must gain."""

    mode: str = "psro"
    iterations: int = 6  # the most runs the loop plays
    responses: int = 2  # best-response trios added per iteration
    epsilon: float = 0.01  # the gain (win rate - 50%) a best response needs to be added
    tolerance: float = 0.02  # the total-variation change below which the equilibrium has stopped moving
    start: int = DEFAULT_START  # the number of start trios (draft.trios' number when they are given)
    prior_games: float = 10.0  # pseudo-games shrinking observed rates toward the model

    def to_dict(self) -> dict[str, Any]:
        """As stored in run.json and hashed (every key, as validated)."""
        return dataclasses.asdict(self)


_DEFAULT = Meta()


class MetaTable(Checked):
    """`[meta]`: each key with the values it takes; its default is Meta's."""

    mode: Annotated[
        Any, AfterValidator(lambda v: v if v == "psro" else fail(f'expected "psro" (the metagame loop), got {v!r}'))
    ] = "psro"
    iterations: integer(1, MAX_ITERATIONS, "the most runs the loop plays") = _DEFAULT.iterations
    responses: integer(1, 20, "best-response trios added per iteration") = _DEFAULT.responses
    epsilon: number(0, 0.5, "the gain (win rate - 50%) a best response needs to be added") = _DEFAULT.epsilon
    tolerance: number(0, 1, "the total-variation change below which the equilibrium has stopped moving") = (
        _DEFAULT.tolerance
    )
    start: Any = None  # the number of start trios, unless draft.trios: parse_meta
    prior_games: number(0, 1e6, "pseudo-games shrinking observed rates toward the model") = _DEFAULT.prior_games


def parse_meta(c: Checker, raw: Any, draft: Draft, arms: int) -> Meta:
    """Validate `[meta]` (called by parse_spec with its checker, so errors name file and key)."""
    t = c.model(raw, "meta", MetaTable)
    if draft.mode != "round_robin":
        raise c.error(
            "draft.mode",
            f'expected "round_robin" with [meta] (the candidate trios: draft.protocols or '
            f"the pool; draft.trios: the start population), got {draft.mode!r}",
        )
    if arms != 1:
        raise c.error(
            "meta", "expected a spec without [[arms]] or tiers: the loop plays one pool and one pair of strategies"
        )
    if t.start is not None and draft.trios and t.start != len(draft.trios):
        raise c.error(
            "meta.start",
            "expected either meta.start (random start trios) or draft.trios, not both "
            f"(with draft.trios the start is their number, {len(draft.trios)})",
        )
    start = (
        len(draft.trios)
        if draft.trios
        else c.integer(DEFAULT_START if t.start is None else t.start, "meta.start", 2, 200, "the number of start trios")
    )
    return Meta(t.mode, t.iterations, t.responses, t.epsilon, t.tolerance, start, t.prior_games)
