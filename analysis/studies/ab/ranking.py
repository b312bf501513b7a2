"""The A/B page's ranking: every arm's effect on every protocol (and on the first player's edge) in
one table, strongest evidence first, so arms are read against each other rather than one section
at a time. Evidence is the change over its standard error, taken from the comparison's own 95%
interval (paired when the arms share seeds), so a large change from few games ranks below a
small one the run is sure of."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.pages.shell import table_html
from analysis.stats.proportions import Z95
from analysis.studies.ab.compare import Comparison
from analysis.studies.balance.rule_note import notes_html


def ranking(comparisons: list[tuple[str, Comparison]]) -> pd.DataFrame:
    """One row per (arm, protocol or first player) with a change: the arm's rate against the base
    arm's, the change with its 95% interval, evidence (|change| / se) and the adjusted p; the
    protocols each arm changed (its focus) first, then by evidence, strongest first."""
    parts = []
    for arm, c in comparisons:
        t = c.table[c.table["kind"].isin(["game", "protocol"]) & c.table["change"].notna()]
        parts.append(t.assign(arm=arm, name=np.where(t["kind"] == "game", "first player", t["name"])))
    if not parts:
        return pd.DataFrame()
    t = pd.concat(parts, ignore_index=True)
    se = (t["change_high"] - t["change_low"]) / (2 * Z95)
    t["evidence"] = (t["change"].abs() / se.where(se > 0)).fillna(0.0)
    t["moved"] = np.where(t["significant"].fillna(False).astype(bool), np.where(t["change"] > 0, "up", "down"), "")
    t["_p"] = np.where(t["kind"] == "protocol", t["name"], "")
    t["_focus"] = t.get("family", pd.Series("rest", index=t.index)) == "focus"  # the changed protocols first
    t = t.sort_values(["_focus", "evidence", "arm", "name"], ascending=[False, False, True, True])
    return t.drop(columns="_focus").reset_index(drop=True)


def ranking_html(comparisons: list[tuple[str, Comparison]], base: str) -> str:
    """The ranking as the A/B page's first section."""
    t = ranking(comparisons)
    if t.empty:
        return ""
    cols = [
        ("arm", "arm", "text"),
        ("protocol", "name", "text"),
        (f"rate in {base}", "rate_base", "pct"),
        ("rate in the arm", "rate_variant", "pct"),
        ("change, points (95% CI)", "change", "diff"),
        ("evidence, |change| / se", "evidence", "p"),
        ("adj. p", "p_adjusted", "p"),
        ("moved", "moved", "text"),
    ]
    moved = t[t["moved"] != ""]
    per_arm = moved.groupby("arm").size().reindex([a for a, _ in comparisons]).fillna(0).astype(int)
    said = "; ".join(f"{a} moves {n} significantly" for a, n in per_arm.items())
    return (
        f'<section id="ranking"><h2>Arms ranked: every effect against {base}, strongest evidence first</h2>'
        f'<p class="muted">{said}. Evidence is the change over its standard error (from its 95% interval, '
        "paired by seed when the arms share seeds); moved: significant after the correction across all of "
        "the arm's rates.</p>"
        + "".join(notes_html(c.meta.get("rule_notes"), f"arm {a}") for a, c in comparisons)
        + f'<div class="scroll">{table_html(t, cols, "ab-ranking", ("_p", None))}</div></section>'
    )
