"""Paired protocol gaps of a tier study: does a cheaper tier give the same protocol verdicts as the
strongest one? For every tier other than the reference (the last tier listed: the strongest) and
every protocol, the tier's win rate minus the reference's, in points, with a paired 95% percentile
bootstrap interval over seed clusters: each resample draws the clusters once and both tiers are read
on that draw, since both played the same seeds and drafts (analysis/stats/cluster_draws.py), so what the
drafts and seeds do to both tiers alike cancels out of the difference. One line per tier says the
largest gap, the widest interval and whether the agreement target is met: every protocol within
`tolerance` (3 points) with every interval within `interval` (+-2 points)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from analysis.stats.cluster_draws import BOOTSTRAP_SEED, RESAMPLES, cluster_draws

TOLERANCE = 0.03  # the largest gap a protocol may show and still agree
INTERVAL = 0.02  # the widest half-width a paired interval may have for the answer to count
EXACT = 1e-12  # a gap of exactly the tolerance is within it, whatever the float rounding
COLUMNS = [
    "tier",
    "reference",
    "protocol",
    "win_rate",
    "reference_win_rate",
    "difference",
    "difference_low",
    "difference_high",
    "half_width",
    "games",
    "reference_games",
]
HEADERS = [
    "tier vs top",
    "protocol",
    "tier win rate",
    "top win rate",
    "tier minus top, points (95% paired CI)",
    "games (tier / top)",
]
TITLE = "Protocol win rate against the top tier (paired)"


def _rates(n: np.ndarray, w: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, w / np.where(n > 0, n, 1), np.nan)


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the percentile interval of the finite values (NaN for a column without any)."""
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    low, high = np.full(values.shape[1], np.nan), np.full(values.shape[1], np.nan)
    for j in range(values.shape[1]):
        v = values[:, j][np.isfinite(values[:, j])]
        if len(v):
            low[j], high[j] = np.percentile(v, q)
    return low, high


def gap_table(
    items: list[str],
    n: dict[str, np.ndarray],
    w: dict[str, np.ndarray],
    tiers: list[str],
    resamples: int = RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per (tier other than the last, protocol). `n[tier]` and `w[tier]` are the decided
    appearances and wins per seed cluster (rows, in the same order for every tier) and protocol
    (columns, `items`). `difference` is the tier's win rate minus the reference's; its interval is
    the percentile interval of that difference over `resamples` paired cluster resamples; the
    `half_width` is the larger distance from the difference to either bound (so `+-half_width`
    covers the interval). Rows: tiers in order, each by |difference|, largest first."""
    if len(tiers) < 2 or not items:
        return pd.DataFrame(columns=COLUMNS)
    reference, others = tiers[-1], tiers[:-1]
    clusters = n[reference].shape[0]
    diffs: dict[str, list[np.ndarray]] = {t: [] for t in others}
    for draws in cluster_draws(clusters, resamples, seed):
        ref = _rates(draws @ n[reference], draws @ w[reference])
        for t in others:
            diffs[t].append(_rates(draws @ n[t], draws @ w[t]) - ref)
    ref_games, ref_rate = n[reference].sum(axis=0), _rates(n[reference].sum(axis=0), w[reference].sum(axis=0))
    parts = []
    for t in others:
        games = n[t].sum(axis=0)
        rate = _rates(games, w[t].sum(axis=0))
        d = rate - ref_rate
        low, high = _percentiles(np.vstack(diffs[t]), level)
        part = pd.DataFrame(
            {
                "tier": t,
                "reference": reference,
                "protocol": items,
                "win_rate": rate,
                "reference_win_rate": ref_rate,
                "difference": d,
                "difference_low": low,
                "difference_high": high,
                "half_width": np.fmax(d - low, high - d),
                "games": games.astype(int),
                "reference_games": ref_games.astype(int),
            }
        )
        parts.append(
            part.assign(gap=part["difference"].abs()).sort_values(
                ["gap", "protocol"], ascending=[False, True], na_position="last", kind="stable"
            )
        )
    return pd.concat(parts, ignore_index=True)[COLUMNS]


def _points(x: float) -> str:
    return f"{x * 100:.1f}"


def _target(x: float) -> str:
    """A target in points as a designer writes it: 3, 2.5."""
    return f"{x * 100:.4g}"


def _yes(ok: bool) -> str:
    return "yes" if ok else "no"


def summary(gaps: pd.DataFrame, tolerance: float = TOLERANCE, interval: float = INTERVAL) -> list[dict[str, Any]]:
    """Per tier of `gaps` (gap_table's rows): the largest |difference| and its protocol, the widest
    interval half-width and its protocol, whether every protocol is within `tolerance` and every
    interval within `interval` (a protocol without games under both tiers is within neither: it was
    not measured), and the one line the report prints."""
    out = []
    for tier, g in gaps.groupby("tier", sort=False):
        measured = g[np.isfinite(g["difference"].to_numpy(dtype=float))]
        unmeasured = len(g) - len(measured)
        if measured.empty:
            out.append(
                {
                    "tier": tier,
                    "reference": g["reference"].iloc[0],
                    "protocols": 0,
                    "unmeasured": unmeasured,
                    "largest_gap": math.nan,
                    "largest_gap_protocol": None,
                    "widest_half_width": math.nan,
                    "widest_protocol": None,
                    "tolerance": tolerance,
                    "interval": interval,
                    "within_tolerance": False,
                    "intervals_within": False,
                    "meets_target": False,
                    "line": f"{tier} vs {g['reference'].iloc[0]}: no protocol measured under both tiers",
                }
            )
            continue
        gap = measured["difference"].abs()
        widest = measured["half_width"].fillna(math.inf)
        big, wide = measured.loc[gap.idxmax()], measured.loc[widest.idxmax()]
        within = bool((gap <= tolerance + EXACT).all()) and unmeasured == 0
        narrow = bool((widest <= interval + EXACT).all()) and unmeasured == 0
        line = (
            f"{tier} vs {big['reference']}: largest gap {_points(gap.max())} points ({big['protocol']}), widest "
            f"interval ±{_points(widest.max())} points ({wide['protocol']}); within {_target(tolerance)} points "
            f"everywhere: {_yes(within)}; intervals within ±{_target(interval)} points: {_yes(narrow)}"
        )
        if unmeasured:
            line += f"; {unmeasured} protocol{'s' if unmeasured > 1 else ''} without games under both tiers"
        out.append(
            {
                "tier": tier,
                "reference": big["reference"],
                "protocols": len(measured),
                "unmeasured": unmeasured,
                "largest_gap": float(gap.max()),
                "largest_gap_protocol": big["protocol"],
                "widest_half_width": float(widest.max()),
                "widest_protocol": wide["protocol"],
                "tolerance": tolerance,
                "interval": interval,
                "within_tolerance": within,
                "intervals_within": narrow,
                "meets_target": within and narrow,
                "line": line,
            }
        )
    return out


def statement(resamples: int, seed: int, tolerance: float = TOLERANCE, interval: float = INTERVAL) -> str:
    return (
        f"Each tier's protocol win rate minus the top tier's (the last listed), in points, on the same seeds and "
        f"drafts; 95% paired percentile bootstrap over seed clusters, the same {resamples:,} draws for both tiers, "
        f"seed {seed}. Target: every protocol within {_target(tolerance)} points, every interval within "
        f"±{_target(interval)} points"
    )


def meta(
    gaps: pd.DataFrame, resamples: int, seed: int, tolerance: float = TOLERANCE, interval: float = INTERVAL
) -> dict[str, Any]:
    """meta.gaps of the tier report: the reference tier, the target, the statement and one summary per tier."""
    return {
        "reference": gaps["reference"].iloc[0] if not gaps.empty else None,
        "tolerance": tolerance,
        "interval": interval,
        "statement": statement(resamples, seed, tolerance, interval),
        "summary": summary(gaps, tolerance, interval),
    }


def _cell(x: float, fmt: str) -> str:
    return "-" if pd.isna(x) else fmt.format(x)


def rows(gaps: pd.DataFrame) -> list[list[str]]:
    """The table's cells as shown (terminal and page)."""
    return [
        [
            f"{r.tier} vs {r.reference}",
            r.protocol,
            _cell(r.win_rate, "{:.1%}"),
            _cell(r.reference_win_rate, "{:.1%}"),
            f"{_cell(r.difference * 100, '{:+.1f}')} ({_cell(r.difference_low * 100, '{:+.1f}')} to "
            f"{_cell(r.difference_high * 100, '{:+.1f}')})",
            f"{r.games:,} / {r.reference_games:,}",
        ]
        for r in gaps.itertuples(index=False)
    ]
