"""What an A/B run that stopped once settled (run.json `stop`, protolab/experiment/run/stopping.py) says
of itself: when and why it stopped, in one line, and its watched effects' anytime-valid intervals
put in place of the fixed-size ones in the comparison (a fixed-size interval read at a size chosen
by looking is not a 95% interval; the anytime one is)."""

from __future__ import annotations

from typing import Any

import numpy as np

from analysis.pages.cells import pts
from analysis.runs.manifest import Manifest
from analysis.studies.ab.compare import Comparison

ANYTIME = "anytime-valid (sequential)"  # the design of a watched row: its change is the anytime estimate


def stop_record(manifest: Manifest | dict[str, Any] | None) -> dict[str, Any] | None:
    """The run's `stop` entry, from its typed manifest (or a raw run.json); None if it has none."""
    stop = manifest.get("stop") if isinstance(manifest, dict) else getattr(manifest, "stop", None)
    return stop if isinstance(stop, dict) and isinstance(stop.get("effects"), list) else None


def anytime_estimate(e: dict[str, Any]) -> float:
    """The estimate an effect's anytime interval is built around (the confidence sequence's centre,
    inside the interval); a stop recorded before it was kept gives the interval's midpoint. The mean
    of the paired differences (`change`) is not it: the interval is a running intersection in seed
    order, which the final mean can lie outside."""
    return float(e["estimate"]) if "estimate" in e else (float(e["low"]) + float(e["high"])) / 2


def effect_text(e: dict[str, Any], alpha: float, arms: bool) -> str:
    who = f" ({e['arm']} - {e['against']})" if arms else ""
    how = {"sign": "", "precise": ", within the precision"}.get(e.get("settled") or "", ", open")
    return (
        f"{e['protocol']}{who} {pts(anytime_estimate(e))} points, anytime {1 - alpha:.0%} interval "
        f"{pts(e['low'])} to {pts(e['high'])}{how} (the sequence's estimate; the mean of the paired "
        f"differences is {pts(e['change'])})"
    )


def describe(stop: dict[str, Any]) -> str:
    """'settled after 6,400 games per arm (4 of 25 looks): Fire -4.1 points, anytime 95% interval ...'."""
    effects = stop["effects"]
    arms = len({e["arm"] for e in effects}) > 1
    what = "; ".join(effect_text(e, float(stop.get("alpha", 0.05)), arms) for e in effects)
    looks = f"{stop['looks']} of {stop['of_looks']} looks"
    if stop["reason"] == "settled":
        return f"settled after {stop['games_per_arm']:,} games per arm ({looks}, stopped {stop['at']}): {what}"
    return (
        f"cap reached: {stop['games_per_arm']:,} games per arm ({looks}, stopped {stop['at']}) without a "
        f"settled verdict: {what}"
    )


def apply_stop(c: Comparison, stop: dict[str, Any], variant: str) -> Comparison:
    """The comparison of `variant` with its watched protocols' changes made anytime-valid (the
    interval and the estimate it is built around, so the figure lies inside its interval), and the
    stop said first in its summary."""
    t = c.table
    for e in stop["effects"]:
        if e["arm"] != variant:
            continue
        row = (t["kind"] == "protocol") & (t["name"] == e["protocol"])
        t.loc[row, ["change", "change_low", "change_high"]] = [anytime_estimate(e), e["low"], e["high"]]
        t.loc[row, "design"] = ANYTIME
        t.loc[row, "significant"] = bool(e["low"] > 0 or e["high"] < 0)
        t.loc[row, "significant_by"] = "the anytime interval leaves 0"
        t.loc[row, "p_adjusted"] = np.nan
    watched = tuple(
        f"- {e['protocol']} {verb} " for e in stop["effects"] if e["arm"] == variant for verb in ("rose", "fell")
    )
    # the fixed-size interval of a watched protocol is not valid at a size chosen by looking: said once, anytime
    c.summary = [s for s in c.summary if not (s.startswith(watched) and "95% CI" in s)]
    c.summary.insert(0, f"- Sequential run, {describe(stop)}")
    # every effect names the estimate of its interval, a stop recorded before it was kept too
    c.meta["stop"] = {**stop, "effects": [{**e, "estimate": anytime_estimate(e)} for e in stop["effects"]]}
    return c
