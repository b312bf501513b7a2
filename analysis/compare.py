"""`protolab compare BASE VARIANT`: what a change (a card variant, a new strategy, another pool)
did to win rates, with intervals, one corrected test across everything compared, and a summary a
designer can read without the table."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import queries
from analysis.flags import CARD_METRIC
from analysis.open import Runs
from analysis.stats import CORRECTION_NAMES, adjust, newcombe_diff, two_proportion_p


@dataclass
class Comparison:
    table: pd.DataFrame
    summary: list[str]
    meta: dict = field(default_factory=dict)


def _items(runs: Runs) -> pd.DataFrame:
    p = queries.protocol_win_rates(runs)
    parts = [pd.DataFrame({"kind": "protocol", "name": p["protocol"], "metric": "win rate",
                           "games": p["games"], "wins": p["wins"]})]
    c = queries.card_impact(runs)
    if not c.empty:
        parts.append(pd.DataFrame({"kind": "card", "name": c["card"], "metric": CARD_METRIC,
                                   "games": c["up"], "wins": c["up_wins"]}))
    o = queries.overview(runs).iloc[0]
    parts.append(pd.DataFrame({"kind": ["game"], "name": ["first player"], "metric": ["win rate"],
                               "games": [o["decided"]], "wins": [o["first_wins"]]}))
    return pd.concat(parts, ignore_index=True)


def compare_runs(base: Runs, variant: Runs, method: str = "holm", alpha: float = 0.05) -> Comparison:
    """Per protocol, per card and for the first player: base and variant rates, the change with a
    95% Newcombe interval, a two-proportion z-test, and the p-value corrected across all rows."""
    a, b = _items(base), _items(variant)
    df = a.merge(b, on=["kind", "name", "metric"], how="outer", suffixes=("_base", "_variant"))
    for c in ("games_base", "wins_base", "games_variant", "wins_variant"):
        df[c] = df[c].fillna(0).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["rate_base"] = df["wins_base"] / df["games_base"].where(df["games_base"] > 0)
        df["rate_variant"] = df["wins_variant"] / df["games_variant"].where(df["games_variant"] > 0)
    d, lo, hi = newcombe_diff(df["wins_base"], df["games_base"], df["wins_variant"], df["games_variant"])
    df["change"], df["change_low"], df["change_high"] = d, lo, hi
    tested = (df["games_base"] > 0) & (df["games_variant"] > 0)
    df["p_value"] = two_proportion_p(df["wins_base"], df["games_base"], df["wins_variant"], df["games_variant"])
    df["p_adjusted"] = np.nan
    df.loc[tested, "p_adjusted"] = adjust(df.loc[tested, "p_value"].to_numpy(), method)
    df["significant"] = df["p_adjusted"] < alpha
    order = {"game": 0, "protocol": 1, "card": 2}
    df = df.assign(_o=df["kind"].map(order), _a=-df["change"].abs()).sort_values(["significant", "_o", "_a"],
                                                                                   ascending=[False, True, True])
    df = df.drop(columns=["_o", "_a"]).reset_index(drop=True)
    meta = {"base": base.label, "variant": variant.label, "correction": method, "alpha": alpha,
            "tests": int(tested.sum()), "warnings": base.warnings + variant.warnings}
    return Comparison(df, summarize(df, base, variant, method, alpha, int(tested.sum())), meta)


def _pts(x: float) -> str:
    return f"{x * 100:+.1f}"


def _line(r: pd.Series) -> str:
    what = r["name"] if r["kind"] != "card" else f"{r['name']} ({CARD_METRIC})"
    if r["kind"] == "game":
        what = "The first player's win rate"
    verb = "rose" if r["change"] > 0 else "fell"
    return (f"{what} {verb} from {r['rate_base']:.1%} to {r['rate_variant']:.1%} "
            f"({_pts(r['change'])} points, 95% CI {_pts(r['change_low'])} to {_pts(r['change_high'])}; "
            f"adjusted p = {r['p_adjusted']:.2g}; {int(r['games_base']):,} vs {int(r['games_variant']):,} games).")


def summarize(df: pd.DataFrame, base: Runs, variant: Runs, method: str, alpha: float, tests: int) -> list[str]:
    """Plain sentences: what moved significantly, else the largest (non-significant) change."""
    ob, ov = queries.overview(base).iloc[0], queries.overview(variant).iloc[0]
    out = [f"Base {base.label}: {int(ob['games']):,} games; variant {variant.label}: {int(ov['games']):,} games. "
           f"{tests} rates compared, {CORRECTION_NAMES[method]} correction at alpha = {alpha:g}."]
    sig = df[df["significant"].fillna(False).astype(bool)]
    if sig.empty:
        rest = df[df["p_adjusted"].notna()]
        if rest.empty:
            out.append("Nothing could be compared (no rate has games in both runs).")
        else:
            r = rest.loc[rest["change"].abs().idxmax()]
            out.append(f"Nothing moved significantly. The largest change was {r['name']} "
                       f"({_pts(r['change'])} points, 95% CI {_pts(r['change_low'])} to {_pts(r['change_high'])}, "
                       f"adjusted p = {r['p_adjusted']:.2g}): within what chance explains at these game counts.")
    else:
        n_p = int((sig["kind"] == "protocol").sum())
        n_c = int((sig["kind"] == "card").sum())
        out.append(f"{n_p} protocol(s) and {n_c} card(s) moved significantly:")
        out += ["- " + _line(r) for _, r in sig.iterrows()]
    dt = ov["mean_turns"] - ob["mean_turns"]
    out.append(f"Games last {ov['mean_turns']:.1f} turns on average in the variant vs {ob['mean_turns']:.1f} "
               f"in the base ({dt:+.1f}); draws {int(ob['draws']):,} -> {int(ov['draws']):,}.")
    return out


def print_comparison(c: Comparison, console, limit: int = 25) -> None:
    from analysis.report import _table, pct

    for w in c.meta.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {w}")
    t = c.table
    rows = []
    for _, r in t.head(limit).iterrows():
        rows.append([r["name"], r["kind"], pct(r["rate_base"]), f"{int(r['games_base']):,}", pct(r["rate_variant"]),
                     f"{int(r['games_variant']):,}",
                     f"{_pts(r['change'])} ({_pts(r['change_low'])}, {_pts(r['change_high'])})",
                     "-" if np.isnan(r["p_adjusted"]) else f"{r['p_adjusted']:.2g}",
                     "yes" if r["significant"] else ""])
    console.print(_table(f"Changes in win rate (points, 95% CI); {limit if len(t) > limit else len(t)} of {len(t)} "
                         "rows, most significant and largest first",
                         ["name", "kind", "base", "games", "variant", "games", "change", "adj. p", "significant"],
                         rows))
    for line in c.summary:
        console.print(line)
