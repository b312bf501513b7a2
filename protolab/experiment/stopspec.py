"""The `[stop]` table of a spec: an A/B run that plays its arms in batches of paired seeds and stops
once its verdict is settled, `games` being the cap (docs/experiments.md, "Stopping when settled").
Checked with the spec's own checker, so every error names the file and the key; protocol names are
checked against the arms' pools by protolab/experiment/plan.py, still before any game is played."""

from __future__ import annotations

from typing import Any

STOP_RULES = ("settled",)
STOP_DEFAULTS: dict[str, Any] = {"rule": "settled", "protocols": [], "precision": 2.0, "batch": 2000, "alpha": 0.05}
MAX_LOOKS = 1000                   # batches per arm: the look after each one is a read of its games


def parse_stop(c, raw: Any, draft_mode: str, arms: int, tiers: bool, games: int, swap: bool) -> dict[str, Any]:
    """Validate `[stop]` (called by spec.parse_spec with its checker)."""
    t = c.table(raw, "stop", set(STOP_DEFAULTS))
    if draft_mode != "random":
        raise c.error("draft.mode", f'expected "random" with [stop] (every batch a random sample of the drafts), '
                                    f"got {draft_mode!r}")
    if tiers or arms < 2:
        raise c.error("stop", "expected an A/B spec with two or more [[arms]]: the verdict is each arm against the "
                              "first")
    rule = t.get("rule", "settled")
    if rule not in STOP_RULES:
        raise c.error("stop.rule", f"expected one of {', '.join(repr(r) for r in STOP_RULES)}; got {rule!r}")
    if "protocols" not in t:
        raise c.error("stop.protocols", 'missing; expected the protocols whose win-rate change the verdict is '
                                        'about, e.g. protocols = ["Fire"]')
    protocols = c.strings(t["protocols"], "stop.protocols", "protocol names")
    if not protocols or len({p.lower() for p in protocols}) != len(protocols):
        raise c.error("stop.protocols", f"expected one or more different protocol names; got {protocols!r}")
    out = {"rule": rule, "protocols": protocols}
    out["precision"] = c.number(t.get("precision", STOP_DEFAULTS["precision"]), "stop.precision", 0.1, 50,
                               "the +- points within which an effect counts as settled")
    out["alpha"] = c.number(t.get("alpha", STOP_DEFAULTS["alpha"]), "stop.alpha", 1e-6, 0.5,
                           "the error rate of the anytime-valid intervals")
    out["batch"] = c.integer(t.get("batch", STOP_DEFAULTS["batch"]), "stop.batch", 2, games,
                             f"the games per arm between two looks, at most games ({games:,}, the cap)")
    if swap and out["batch"] % 2:
        raise c.error("stop.batch", f"expected an even number when seats.swap = true (a pair shares a seed), "
                                    f"got {out['batch']}")
    if -(-games // out["batch"]) > MAX_LOOKS:
        raise c.error("stop.batch", f"expected at most {MAX_LOOKS} looks: games ({games:,}) / batch "
                                    f"({out['batch']:,}) makes {-(-games // out['batch']):,}")
    return out
