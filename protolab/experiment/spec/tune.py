"""The `[tune]` table of a spec: what a balance search may change, what it aims at and what it may
spend (docs/experiments.md, "Balance search"). Checked with the spec's own checker, so every error
names the file and the key; card names are checked against the pool by protolab/experiment/tune/tune.py,
still before any game is played."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator

from sim.cards.knobs import KINDS
from sim.schema import Checked, before, choice, fail, integer, number, text, texts

if TYPE_CHECKING:
    from protolab.experiment.spec.checker import Checker

TUNE_DEFAULTS: dict[str, Any] = {
    "protocol": "",
    "band": [45, 55],
    "cards": [],
    "kinds": list(KINDS),
    "steps": [1],
    "max_changes": 3,
    "trials": 48,
    "generation": 8,
    "batch": 500,
    "games": 6000,
    "precision": 2.0,
    "alpha": 0.05,
    "verify": 3,
    "sampler": "tpe",
}
SAMPLERS = ("tpe", "nsga2")


def _target(v: Any) -> str:
    if not isinstance(v, str) or (v != "" and not v.strip()):
        fail(f"expected the protocol to bring toward 50%, got {v!r}")
    return v.strip()


def _kinds(v: Any) -> Any:
    if not isinstance(v, list):
        fail(f"expected a list of kinds of knob, got {v!r}")
    if not v:
        fail(f"expected at least one kind of knob ({', '.join(KINDS)})")
    return v


Kind = Annotated[
    text("kinds of knob"),
    AfterValidator(lambda k: k if k in KINDS else fail(f"expected one of {', '.join(KINDS)}; got {k!r}")),
]


class TuneTable(Checked):
    """`[tune]`: each key with the values it takes; its default is TUNE_DEFAULTS'."""

    protocol: Annotated[Any, AfterValidator(_target)] = ""  # "" (as stored): no target protocol
    band: before(
        lambda v: (
            tuple(v)
            if isinstance(v, list) and len(v) == 2
            else fail(f"expected [low, high] in percent around 50, e.g. [45, 55]; got {v!r}")
        ),
        tuple[number(0, 50, "the band's low edge in percent"), number(50, 100, "the band's high edge in percent")],
    ) = TUNE_DEFAULTS["band"]
    cards: texts('card names or "Protocol *"') = []
    kinds: before(_kinds, list[Kind]) = TUNE_DEFAULTS["kinds"]
    steps: before(
        lambda v: (
            v
            if isinstance(v, list) and v
            else fail(f"expected a non-empty list of step sizes such as [1, 2]; got {v!r}")
        ),
        list[integer(1, 5, "a step size")],
    ) = TUNE_DEFAULTS["steps"]
    max_changes: integer(1, 12, "the most cards a candidate changes") = TUNE_DEFAULTS["max_changes"]
    max_cards: Any = None  # at most max_changes: checked in parse_tune
    constraints: Any = None  # true (the default) or false: checked in parse_tune
    trials: integer(1, 2000, "candidates the search judges") = TUNE_DEFAULTS["trials"]
    generation: integer(1, 256, "candidates judged side by side") = TUNE_DEFAULTS["generation"]
    batch: integer(20, 1_000_000, "games between two looks at a candidate") = TUNE_DEFAULTS["batch"]
    games: integer(20, 10_000_000, "the most games one candidate may take") = TUNE_DEFAULTS["games"]
    precision: number(0.1, 25, "the +- points at which a candidate's effect counts as settled") = TUNE_DEFAULTS[
        "precision"
    ]
    alpha: number(1e-6, 0.5, "the error rate of the anytime-valid intervals") = TUNE_DEFAULTS["alpha"]
    verify: integer(1, 50, "front candidates re-played on fresh seeds") = TUNE_DEFAULTS["verify"]
    sampler: choice(SAMPLERS) = TUNE_DEFAULTS["sampler"]


def parse_tune(c: Checker, raw: Any, draft_mode: str, arms: int) -> dict[str, Any]:
    """Validate `[tune]` (called by parse_spec with its checker)."""
    t = c.model(raw, "tune", TuneTable)
    if draft_mode != "random":
        raise c.error(
            "draft.mode",
            f'expected "random" with [tune] (every protocol judged across random drafts), got {draft_mode!r}',
        )
    if arms != 1:
        raise c.error("tune", "expected a spec without [[arms]] or tiers: the search makes its own candidates")
    out = {k: getattr(t, k) for k in TUNE_DEFAULTS}
    out["band"] = list(t.band)
    if not out["cards"] and not out["protocol"]:
        raise c.error(
            "tune.cards",
            'expected the cards the search may change (e.g. ["Fire *"]) or tune.protocol, '
            "whose cards are then the change space",
        )
    if t.max_cards is not None:  # several turns of one card count as one changed card (kept out of older hashes)
        out["max_cards"] = c.integer(
            t.max_cards,
            "tune.max_cards",
            1,
            out["max_changes"],
            f"the most cards a candidate changes, at most tune.max_changes ({out['max_changes']})",
        )
    if t.constraints is not None:  # the shipped constraints (kept out of older hashes while on)
        if not isinstance(t.constraints, bool):
            raise c.error(
                "tune.constraints",
                "expected true (a protocol's cards keep distinct values and no card only harms its owner) "
                f"or false; got {t.constraints!r}",
            )
        if not t.constraints:
            out["constraints"] = False
    if out["batch"] > out["games"]:
        raise c.error("tune.batch", f"expected at most tune.games ({out['games']}); got {out['batch']}")
    return out
