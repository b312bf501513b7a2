"""The strength ladder of verdicts (issue 35): how far each protocol's verdict moves at each step up
the tiers of a tier study (listed weakest first). A step is a pair of adjacent tiers; its change is
the upper tier's win rate minus the lower's, in points, with the paired 95% percentile bootstrap of
the gaps table (analysis/studies/tiers/gaps.py: the same seed clusters drawn once for both tiers).
The line the study is read by: the largest change between the two strongest tiers, judged against
the convergence target (no protocol moves more than 2 points, every interval within +-1.5): the
verdict has stopped moving with strength when the last step is that small."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analysis.stats.cluster_draws import BOOTSTRAP_SEED, RESAMPLES
from analysis.studies.tiers.gaps import EXACT, gap_table

TOLERANCE = 0.02  # the convergence target: no protocol moves more than this at the last step
INTERVAL = 0.015  # with every paired interval at most this wide (half-width)
TITLE = "Strength ladder of verdicts: each step's paired change"
COLUMNS = [
    "step",
    "lower",
    "upper",
    "protocol",
    "lower_win_rate",
    "upper_win_rate",
    "change",
    "change_low",
    "change_high",
    "half_width",
    "games",
]


def step_table(
    items: list[str],
    n: dict[str, np.ndarray],
    w: dict[str, np.ndarray],
    tiers: list[str],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> pd.DataFrame:
    """One row per (step, protocol), steps weakest first, protocols in `items` order; `n`, `w` as
    gap_table takes them (decided appearances and wins per seed cluster and protocol)."""
    parts = []
    for k, (lower, upper) in enumerate(zip(tiers, tiers[1:], strict=False)):
        g = gap_table(items, n, w, [upper, lower], resamples, seed).set_index("protocol").reindex(items)
        parts.append(
            pd.DataFrame(
                {
                    "step": k + 1,
                    "lower": lower,
                    "upper": upper,
                    "protocol": items,
                    "lower_win_rate": g["reference_win_rate"].to_numpy(dtype=float),
                    "upper_win_rate": g["win_rate"].to_numpy(dtype=float),
                    "change": g["difference"].to_numpy(dtype=float),
                    "change_low": g["difference_low"].to_numpy(dtype=float),
                    "change_high": g["difference_high"].to_numpy(dtype=float),
                    "half_width": g["half_width"].to_numpy(dtype=float),
                    "games": np.minimum(g["games"].to_numpy(), g["reference_games"].to_numpy()),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)[COLUMNS] if parts else pd.DataFrame(columns=COLUMNS)


def last_step(steps: pd.DataFrame, tolerance: float = TOLERANCE, interval: float = INTERVAL) -> dict[str, Any]:
    """The step between the two strongest tiers: its largest |change| (protocol, interval), its widest
    interval, whether the convergence target is met, and the one line the report prints."""
    if steps.empty:
        return {"line": "strength ladder: fewer than two tiers", "meets_target": False}
    top = steps[steps["step"] == steps["step"].max()]
    measured = top[np.isfinite(top["change"].to_numpy(dtype=float))]
    lower, upper = top["lower"].iloc[0], top["upper"].iloc[0]
    if measured.empty:
        return {
            "lower": lower,
            "upper": upper,
            "meets_target": False,
            "line": f"largest step between the two strongest tiers ({lower} to {upper}): no protocol measured",
        }
    size = measured["change"].abs()
    wide = measured["half_width"].fillna(math.inf)
    big, widest = measured.loc[size.idxmax()], measured.loc[wide.idxmax()]
    within = bool((size <= tolerance + EXACT).all()) and len(measured) == len(top)
    narrow = bool((wide <= interval + EXACT).all()) and len(measured) == len(top)
    line = (
        f"largest step between the two strongest tiers ({lower} to {upper}): {big['protocol']} "
        f"{big['change'] * 100:+.1f} points (95% paired {big['change_low'] * 100:+.1f} to "
        f"{big['change_high'] * 100:+.1f}); {int((size > tolerance + EXACT).sum())} of {len(top)} protocols move "
        f"more than {tolerance * 100:.3g} points; widest interval ±{wide.max() * 100:.1f} ({widest['protocol']}); "
        f"converged (every protocol within {tolerance * 100:.3g} points, intervals within "
        f"±{interval * 100:.3g}): {'yes' if within and narrow else 'no'}"
    )
    return {
        "lower": lower,
        "upper": upper,
        "largest_step": float(size.max()),
        "largest_step_protocol": big["protocol"],
        "moved": int((size > tolerance + EXACT).sum()),
        "protocols": len(top),
        "widest_half_width": float(wide.max()),
        "tolerance": tolerance,
        "interval": interval,
        "meets_target": within and narrow,
        "line": line,
    }


def headers(tiers: list[str]) -> list[str]:
    return ["protocol", *tiers, *(f"{a} to {b}, points (95% paired)" for a, b in zip(tiers, tiers[1:], strict=False))]


def rows(steps: pd.DataFrame, tiers: list[str]) -> list[list[str]]:
    """Per protocol: each tier's win rate, then each step's change with its interval (the wide layout),
    protocols by the size of the last step, largest first."""
    if steps.empty:
        return []
    last = steps[steps["step"] == steps["step"].max()].set_index("protocol")["change"].abs()
    out = []
    for protocol in last.sort_values(ascending=False, na_position="last", kind="stable").index:
        mine = steps[steps["protocol"] == protocol].sort_values("step")
        rates = [mine["lower_win_rate"].iloc[0], *mine["upper_win_rate"]]
        out.append(
            [
                protocol,
                *("-" if pd.isna(r) else f"{r:.1%}" for r in rates),
                *(
                    "-"
                    if pd.isna(r.change)
                    else f"{r.change * 100:+.1f} ({r.change_low * 100:+.1f} to {r.change_high * 100:+.1f})"
                    for r in mine.itertuples(index=False)
                ),
            ]
        )
    return out


def statement(resamples: int, seed: int) -> str:
    return (
        f"Each step's change: the upper tier's protocol win rate minus the lower's on the same seeds and drafts, in "
        f"points; 95% paired percentile bootstrap over seed clusters ({resamples:,} draws, seed {seed}); protocols "
        f"by the size of the last step"
    )
