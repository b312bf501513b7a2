"""Balance flags: the protocols and cards a designer should look at, and only those whose win rate
is outside the band around 50% beyond what chance explains once many things are tested at once."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import queries
from analysis.open import Runs
from analysis.stats import CORRECTION_NAMES, add_rate, adjust, band_pvalue

CARD_METRIC = "win rate when played face-up"


def flag_table(items: pd.DataFrame, band: float = 0.05, method: str = "holm", alpha: float = 0.05) -> pd.DataFrame:
    """Test each row (columns kind, name, metric, games, wins) against [50% - band, 50% + band] and
    correct across all rows together. A row is flagged when its adjusted p-value is below alpha:
    uncorrected, that is exactly "the 95% Wilson interval lies wholly outside the band"."""
    df = items.reset_index(drop=True).copy()
    add_rate(df)
    df["p_value"] = band_pvalue(df["wins"].to_numpy(), df["games"].to_numpy(), band)
    df["p_adjusted"] = adjust(df["p_value"].to_numpy(), method)
    df["flagged"] = df["p_adjusted"] < alpha
    df["direction"] = np.where(df["win_rate"] > 0.5 + band, "above",
                               np.where(df["win_rate"] < 0.5 - band, "below", "inside"))
    df = df.sort_values(["flagged", "p_adjusted", "name"], ascending=[False, True, True]).reset_index(drop=True)
    df.attrs.update({"band": band, "method": method, "alpha": alpha, "tests": len(df),
                     "statement": correction_statement(len(df), band, method, alpha)})
    return df


def correction_statement(tests: int, band: float, method: str, alpha: float) -> str:
    return (f"Band {0.5 - band:.0%}-{0.5 + band:.0%}; {tests} protocols and cards tested together, "
            f"{CORRECTION_NAMES[method]} correction at alpha = {alpha:g}")


def balance_flags(runs: Runs, band: float = 0.05, method: str = "holm", alpha: float = 0.05,
                  min_games: int = 1) -> pd.DataFrame:
    """Protocols (win rate as part of a trio) and cards (win rate when played face-up, if the run
    has events), each with its Wilson interval, raw and adjusted p-values and a flag."""
    p = queries.protocol_win_rates(runs)
    items = [pd.DataFrame({"kind": "protocol", "name": p["protocol"], "metric": "win rate",
                           "games": p["games"], "wins": p["wins"]})]
    c = queries.card_impact(runs)
    if not c.empty:
        items.append(pd.DataFrame({"kind": "card", "name": c["card"], "metric": CARD_METRIC,
                                   "games": c["up"], "wins": c["up_wins"]}))
    df = pd.concat(items, ignore_index=True)
    return flag_table(df[df["games"] >= min_games], band, method, alpha)
