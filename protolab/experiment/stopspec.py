"""The `[stop]` table of a spec: an A/B run that plays its arms in batches of paired seeds and stops
once its verdict is settled, `games` being the cap (docs/experiments.md, "Stopping when settled").
Checked with the spec's own checker, so every error names the file and the key; protocol names are
checked against the arms' pools by protolab/experiment/run/plan.py, still before any game is played."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from sim.schema import Checked, fail, number, texts

STOP_RULES = ("settled",)
STOP_DEFAULTS: dict[str, Any] = {"rule": "settled", "protocols": [], "precision": 2.0, "batch": 2000, "alpha": 0.05}
MAX_LOOKS = 1000  # batches per arm: the look after each one is a read of its games


class StopTable(Checked):
    """`[stop]`: each key with the values it takes; its default is STOP_DEFAULTS'."""

    rule: Annotated[
        Any,
        AfterValidator(
            lambda v: (
                v if v in STOP_RULES else fail(f"expected one of {', '.join(repr(r) for r in STOP_RULES)}; got {v!r}")
            )
        ),
    ] = STOP_DEFAULTS["rule"]
    protocols: Annotated[
        texts("protocol names"),
        Field(description='the protocols whose win-rate change the verdict is about, e.g. protocols = ["Fire"]'),
    ]
    precision: number(0.1, 50, "the +- points within which an effect counts as settled") = STOP_DEFAULTS["precision"]
    alpha: number(1e-6, 0.5, "the error rate of the anytime-valid intervals") = STOP_DEFAULTS["alpha"]
    batch: Any = STOP_DEFAULTS["batch"]  # at most the spec's games: checked in parse_stop


def parse_stop(c, raw: Any, draft_mode: str, arms: int, tiers: bool, games: int, swap: bool) -> dict[str, Any]:
    """Validate `[stop]` (called by spec.parse_spec with its checker)."""
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
    out = {"rule": t.rule, "protocols": t.protocols, "precision": t.precision, "alpha": t.alpha}
    out["batch"] = c.integer(
        t.batch, "stop.batch", 2, games, f"the games per arm between two looks, at most games ({games:,}, the cap)"
    )
    if swap and out["batch"] % 2:
        raise c.error(
            "stop.batch", f"expected an even number when seats.swap = true (a pair shares a seed), got {out['batch']}"
        )
    if -(-games // out["batch"]) > MAX_LOOKS:
        raise c.error(
            "stop.batch",
            f"expected at most {MAX_LOOKS} looks: games ({games:,}) / batch "
            f"({out['batch']:,}) makes {-(-games // out['batch']):,}",
        )
    return out
