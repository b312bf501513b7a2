"""Balance flags: the protocols and cards a designer should look at, and only those that differ
beyond what chance explains once many things are tested at once.

* A protocol is flagged when its win rate (as part of a trio) is outside the band around 50%.
* A card is flagged when it differs from the rest of its own protocol: its face-up win rate against
  the pooled face-up win rate of its protocol's other cards (a two-proportion test). A card is never
  flagged because its protocol is strong: in a strong protocol every card wins often when played, and
  a band test would flag all six while saying nothing about which card does it.

Win rate when drawn is not a finding: nearly every card of a held protocol is drawn in nearly every
game, so it is the protocol's win rate again. It stays a column of card impact, not a flag."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.runs.open import Runs
from analysis.stats.proportions import CORRECTION_NAMES, add_rate, adjust, band_pvalue, newcombe_diff, two_proportion_p
from analysis.studies.balance import queries

CARD_METRIC = "win rate when played face-up"
CARD_FLAG_METRIC = "face-up win rate vs its protocol's other cards"


def protocol_items(protocols: pd.DataFrame) -> pd.DataFrame:
    """One row per protocol (protocol win-rate rows: protocol, games, wins), as the flags and `compare` test it."""
    p = protocols
    return pd.DataFrame(
        {"kind": "protocol", "name": p["protocol"], "metric": "win rate", "games": p["games"], "wins": p["wins"]}
    )


def card_items(cards: pd.DataFrame, min_games: int = 1) -> pd.DataFrame:
    """One flag row per card (card impact rows: card, protocol, up, up_wins): its face-up games and
    wins, and as `baseline_games` / `baseline_wins` the pooled face-up games and wins of the other
    cards of its protocol (a seat-game in which two sibling cards were played face-up counts for each)."""
    c = cards[["card", "protocol", "up", "up_wins"]].copy()
    totals = c.groupby("protocol")[["up", "up_wins"]].transform("sum")
    out = pd.DataFrame(
        {
            "kind": "card",
            "name": c["card"],
            "metric": CARD_FLAG_METRIC,
            "protocol": c["protocol"],
            "games": c["up"].astype(np.int64),
            "wins": c["up_wins"].astype(np.int64),
            "baseline_games": (totals["up"] - c["up"]).astype(np.int64),
            "baseline_wins": (totals["up_wins"] - c["up_wins"]).astype(np.int64),
        }
    )
    return out[(out["games"] >= min_games) & (out["baseline_games"] >= min_games)]


def _sibling_tests(df: pd.DataFrame) -> None:
    """p-value, difference and its 95% Newcombe interval of each row against its baseline."""
    w1, n1 = df["baseline_wins"].to_numpy(float), df["baseline_games"].to_numpy(float)
    w2, n2 = df["wins"].to_numpy(float), df["games"].to_numpy(float)
    df["p_value"] = two_proportion_p(w1, n1, w2, n2)
    with np.errstate(invalid="ignore", divide="ignore"):
        df["baseline_rate"] = np.where(n1 > 0, w1 / np.where(n1 > 0, n1, 1), np.nan)
    d, lo, hi = newcombe_diff(w1, n1, w2, n2)
    df["difference"], df["difference_low"], df["difference_high"] = d, lo, hi
    df["direction"] = np.where(d > 0, "above", np.where(d < 0, "below", "inside"))
    df["versus"] = "other cards of " + df["protocol"].astype(str)


def flag_table(items: pd.DataFrame, band: float = 0.05, method: str = "holm", alpha: float = 0.05) -> pd.DataFrame:
    """Test each row (columns kind, name, metric, games, wins) and correct across all rows together.
    Rows with `baseline_games` / `baseline_wins` (cards) are tested against that baseline; the others
    (protocols) against [50% - band, 50% + band]: flagged, uncorrected, exactly when the 95% Wilson
    interval lies wholly outside the band. A row is flagged when its adjusted p-value is below alpha."""
    df = items.reset_index(drop=True).copy()
    add_rate(df)
    against = df["baseline_games"].notna() if "baseline_games" in df else pd.Series(False, index=df.index)
    df["p_value"] = band_pvalue(df["wins"].to_numpy(), df["games"].to_numpy(), band)
    df["direction"] = np.where(
        df["win_rate"] > 0.5 + band, "above", np.where(df["win_rate"] < 0.5 - band, "below", "inside")
    )
    df["versus"] = f"band {0.5 - band:.0%}-{0.5 + band:.0%}"
    for col in ("baseline_rate", "difference", "difference_low", "difference_high"):
        df[col] = np.nan
    if against.any():
        sub = df.loc[against].copy()
        _sibling_tests(sub)
        df.loc[against, sub.columns] = sub
    df["p_adjusted"] = adjust(df["p_value"].to_numpy(dtype=float), method)
    df["flagged"] = df["p_adjusted"] < alpha
    tests = f"{CORRECTION_NAMES[method]} correction over {len(df)} tests"
    df["why"] = [reason(x, band, alpha, tests) for _, x in df.iterrows()]
    df = df.sort_values(["flagged", "p_adjusted", "name"], ascending=[False, True, True]).reset_index(drop=True)
    kinds = df["kind"].value_counts()
    df.attrs.update(
        {
            "band": band,
            "method": method,
            "alpha": alpha,
            "tests": len(df),
            "statement": correction_statement(
                int(kinds.get("protocol", 0)), int(kinds.get("card", 0)), band, method, alpha
            ),
        }
    )
    return df


def reason(x: pd.Series, band: float, alpha: float, tests: str) -> str:
    """Why a row is or is not flagged, in one sentence: its interval against what it was tested
    against, and its adjusted p-value against alpha when the interval alone would flag it."""
    p = f"adjusted p {x['p_adjusted']:.2g} ({tests})"
    if x["kind"] == "card" and pd.notna(x.get("baseline_rate")):
        diff = (
            f"{x['difference'] * 100:+.1f} points against the other cards of {x['protocol']} "
            f"(95% CI {x['difference_low'] * 100:+.1f} to {x['difference_high'] * 100:+.1f})"
        )
        if x["flagged"]:
            return f"flagged: {diff}; {p} is below {alpha:g}"
        if x["difference_low"] <= 0 <= x["difference_high"]:
            return f"not flagged: {diff}, an interval that includes 0 (no difference)"
        return f"not flagged: {diff} leaves out 0, but {p} is not below {alpha:g}"
    lo, hi = 0.5 - band, 0.5 + band
    ci = f"{x['win_rate']:.1%} (95% CI {x['win_rate_low']:.1%}-{x['win_rate_high']:.1%}, {int(x['games']):,} games)"
    if x["flagged"]:
        side = "below" if x["win_rate_high"] < lo else "above"
        return f"flagged: {ci} lies wholly {side} the band {lo:.0%}-{hi:.0%}; {p} is below {alpha:g}"
    if x["win_rate_low"] <= hi and x["win_rate_high"] >= lo:
        where = "inside" if lo <= x["win_rate"] <= hi else "outside"
        return f"not flagged: {ci}, {where} the band {lo:.0%}-{hi:.0%} with an interval that reaches it"
    return f"not flagged: {ci} lies outside the band {lo:.0%}-{hi:.0%}, but {p} is not below {alpha:g}"


def correction_statement(protocols: int, cards: int, band: float, method: str, alpha: float) -> str:
    what = f"Protocols: win rate against the band {0.5 - band:.0%}-{0.5 + band:.0%}"
    if cards:
        what += (
            "; cards: face-up win rate against the pooled face-up win rate of the other cards of their "
            "protocol (two-proportion test)"
        )
    return (
        f"{what}; {protocols} protocols and {cards} cards tested together, "
        f"{CORRECTION_NAMES[method]} correction at alpha = {alpha:g}"
    )


def balance_flags(
    runs: Runs, band: float = 0.05, method: str = "holm", alpha: float = 0.05, min_games: int = 1
) -> pd.DataFrame:
    """Protocols (win rate as part of a trio, against the band) and cards (face-up win rate against
    their protocol's other cards, if the run has events), each with its Wilson interval, raw and
    adjusted p-values and a flag."""
    items = [protocol_items(queries.protocol_win_rates(runs))]
    c = queries.card_impact(runs)
    if not c.empty:
        items.append(card_items(c, min_games))
    df = pd.concat(items, ignore_index=True)
    return flag_table(df[df["games"] >= min_games], band, method, alpha)
