"""The `[stop]` table of a spec: an A/B run that plays its arms in batches of paired seeds and stops
once its verdict is settled, `games` being the cap (docs/experiments.md, "Stopping when settled").
Checked with the spec's own checker, so every error names the file and the key; protocol names are
checked against the arms' pools by protolab/experiment/run/plan.py, still before any game is played."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, Field

from sim.schema import Checked, fail, number, texts

if TYPE_CHECKING:
    from protolab.experiment.spec.checker import Checker

STOP_RULES = ("settled",)
DEFAULT_BATCH = 2000
MAX_LOOKS = 1000  # batches per arm: the look after each one is a read of its games


@dataclass(frozen=True)
class Stop:
    """`[stop]` as validated: the verdict's protocols, when it counts as settled, how often to look."""

    rule: str
    protocols: tuple[str, ...]  # the protocols whose win-rate change the verdict is about
    precision: float  # the +- points within which an effect counts as settled
    alpha: float  # the error rate of the anytime-valid intervals
    batch: int  # the games per arm between two looks

    def to_dict(self) -> dict[str, Any]:
        """As stored in run.json and hashed."""
        return {
            "rule": self.rule,
            "protocols": list(self.protocols),
            "precision": self.precision,
            "alpha": self.alpha,
            "batch": self.batch,
        }


class StopTable(Checked):
    """`[stop]`: each key with the values it takes (and its default)."""

    rule: Annotated[
        Any,
        AfterValidator(
            lambda v: (
                v if v in STOP_RULES else fail(f"expected one of {', '.join(repr(r) for r in STOP_RULES)}; got {v!r}")
            )
        ),
    ] = "settled"
    protocols: Annotated[
        texts("protocol names"),
        Field(description='the protocols whose win-rate change the verdict is about, e.g. protocols = ["Fire"]'),
    ]
    precision: number(0.1, 50, "the +- points within which an effect counts as settled") = 2.0
    alpha: number(1e-6, 0.5, "the error rate of the anytime-valid intervals") = 0.05
    batch: Any = DEFAULT_BATCH  # at most the spec's games: checked in parse_stop


def parse_stop(c: Checker, raw: Any, draft_mode: str, arms: int, tiers: bool, games: int, swap: bool) -> Stop:
    """Validate `[stop]` (called by parse_spec with its checker)."""
    t = c.model(raw, "stop", StopTable)
    if draft_mode != "random":
        raise c.error(
            "draft.mode",
            f'expected "random" with [stop] (every batch a random sample of the drafts), got {draft_mode!r}',
        )
    if tiers or arms < 2:
        raise c.error(
            "stop", "expected an A/B spec with two or more [[arms]]: the verdict is each arm against the first"
        )
    if not t.protocols or len({p.lower() for p in t.protocols}) != len(t.protocols):
        raise c.error("stop.protocols", f"expected one or more different protocol names; got {t.protocols!r}")
    batch = c.integer(
        t.batch, "stop.batch", 2, games, f"the games per arm between two looks, at most games ({games:,}, the cap)"
    )
    if swap and batch % 2:
        raise c.error(
            "stop.batch", f"expected an even number when seats.swap = true (a pair shares a seed), got {batch}"
        )
    if -(-games // batch) > MAX_LOOKS:
        raise c.error(
            "stop.batch",
            f"expected at most {MAX_LOOKS} looks: games ({games:,}) / batch ({batch:,}) makes {-(-games // batch):,}",
        )
    return Stop(t.rule, tuple(t.protocols), t.precision, t.alpha, batch)
