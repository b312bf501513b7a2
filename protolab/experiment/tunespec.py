"""The `[tune]` table of a spec: what a balance search may change, what it aims at and what it may
spend (docs/experiments.md, "Balance search"). Checked with the spec's own checker, so every error
names the file and the key; card names are checked against the pool by protolab/experiment/tune.py,
still before any game is played."""

from __future__ import annotations

from typing import Any

from sim.cards.knobs import KINDS

TUNE_DEFAULTS: dict[str, Any] = {
    "protocol": "", "band": [45, 55], "cards": [], "kinds": list(KINDS), "steps": [1], "max_changes": 3,
    "trials": 48, "generation": 8, "batch": 500, "games": 6000, "precision": 2.0, "alpha": 0.05,
    "verify": 3, "sampler": "tpe",
}
SAMPLERS = ("tpe", "nsga2")


def _band(c, raw: Any) -> list[float]:
    if not (isinstance(raw, list) and len(raw) == 2):
        raise c.error("tune.band", f"expected [low, high] in percent around 50, e.g. [45, 55]; got {raw!r}")
    lo = c.number(raw[0], "tune.band[0]", 0, 50, "the band's low edge in percent")
    hi = c.number(raw[1], "tune.band[1]", 50, 100, "the band's high edge in percent")
    return [lo, hi]


def _kinds(c, raw: Any) -> list[str]:
    kinds = c.strings(raw, "tune.kinds", "kinds of knob")
    for i, k in enumerate(kinds):
        if k not in KINDS:
            raise c.error(f"tune.kinds[{i}]", f"expected one of {', '.join(KINDS)}; got {k!r}")
    if not kinds:
        raise c.error("tune.kinds", f"expected at least one kind of knob ({', '.join(KINDS)})")
    return kinds


def _steps(c, raw: Any) -> list[int]:
    if not isinstance(raw, list) or not raw:
        raise c.error("tune.steps", f"expected a non-empty list of step sizes such as [1, 2]; got {raw!r}")
    return [c.integer(s, f"tune.steps[{i}]", 1, 5, "a step size") for i, s in enumerate(raw)]


def parse_tune(c, raw: Any, draft_mode: str, arms: int) -> dict[str, Any]:
    """Validate `[tune]` (called by spec.parse_spec with its checker)."""
    t = c.table(raw, "tune", set(TUNE_DEFAULTS) | {"max_cards"})
    if draft_mode != "random":
        raise c.error("draft.mode", f'expected "random" with [tune] (every protocol judged across random drafts), '
                                    f"got {draft_mode!r}")
    if arms != 1:
        raise c.error("tune", "expected a spec without [[arms]] or tiers: the search makes its own candidates")
    out = dict(TUNE_DEFAULTS)
    if t.get("protocol", "") != "":          # "" (as stored): no target protocol
        out["protocol"] = c.string(t["protocol"], "tune.protocol", "the protocol to bring toward 50%")
    out["band"] = _band(c, t.get("band", TUNE_DEFAULTS["band"]))
    out["cards"] = c.strings(t.get("cards", []), "tune.cards", 'card names or "Protocol *"')
    if not out["cards"] and not out["protocol"]:
        raise c.error("tune.cards", 'expected the cards the search may change (e.g. ["Fire *"]) or tune.protocol, '
                                    "whose cards are then the change space")
    out["kinds"] = _kinds(c, t.get("kinds", TUNE_DEFAULTS["kinds"]))
    out["steps"] = _steps(c, t.get("steps", TUNE_DEFAULTS["steps"]))
    ints = {"max_changes": (1, 12, "the most cards a candidate changes"),
            "trials": (1, 2000, "candidates the search judges"),
            "generation": (1, 256, "candidates judged side by side"),
            "batch": (20, 1_000_000, "games between two looks at a candidate"),
            "games": (20, 10_000_000, "the most games one candidate may take"),
            "verify": (1, 50, "front candidates re-played on fresh seeds")}
    for key, (lo, hi, what) in ints.items():
        out[key] = c.integer(t.get(key, TUNE_DEFAULTS[key]), f"tune.{key}", lo, hi, what)
    if "max_cards" in t:          # several turns of one card count as one changed card (kept out of older hashes)
        out["max_cards"] = c.integer(t["max_cards"], "tune.max_cards", 1, out["max_changes"],
                                     f"the most cards a candidate changes, at most tune.max_changes "
                                     f"({out['max_changes']})")
    out["precision"] = c.number(t.get("precision", TUNE_DEFAULTS["precision"]), "tune.precision", 0.1, 25,
                               "the +- points at which a candidate's effect counts as settled")
    out["alpha"] = c.number(t.get("alpha", TUNE_DEFAULTS["alpha"]), "tune.alpha", 1e-6, 0.5,
                           "the error rate of the anytime-valid intervals")
    out["sampler"] = t.get("sampler", "tpe")
    if out["sampler"] not in SAMPLERS:
        raise c.error("tune.sampler", f"expected one of {', '.join(SAMPLERS)}; got {out['sampler']!r}")
    if out["batch"] > out["games"]:
        raise c.error("tune.batch", f"expected at most tune.games ({out['games']}); got {out['batch']}")
    return out
