"""Every flag row says why it is or is not flagged (analysis/studies/balance/flags.py, `why`): a
protocol by its interval against the band, and, when the interval alone would flag it, by its
corrected p-value; a card by its difference from its protocol's other cards."""

from __future__ import annotations

import pandas as pd

from analysis.studies.balance.flags import flag_table


def test_each_row_says_why_it_is_or_is_not_flagged():
    protocols = pd.DataFrame(
        {
            "kind": "protocol",
            "name": ["Strong", "Even", "Edge", *[f"P{k}" for k in range(20)]],
            "metric": "win rate",
            "games": [2000, 2000, 400, *[2000] * 20],
            "wins": [1300, 1010, 242, *[1000] * 20],  # Edge: 60.5%, its interval clears 55% only uncorrected
        }
    )
    cards = pd.DataFrame(
        {
            "kind": "card",
            "name": ["Strong 1", "Strong 2"],
            "metric": "face-up",
            "protocol": "Strong",
            "games": [900, 900],
            "wins": [700, 460],
            "baseline_games": [900, 900],
            "baseline_wins": [460, 700],
        }
    )
    f = flag_table(pd.concat([protocols, cards], ignore_index=True)).set_index("name")
    why = f["why"]
    assert f.loc["Strong", "flagged"] and why["Strong"].startswith("flagged: 65.0% (95% CI")
    assert "lies wholly above the band 45%-55%" in why["Strong"] and "Holm" in why["Strong"]
    assert not f.loc["Even", "flagged"] and why["Even"].startswith("not flagged: 50.5%")
    assert "inside the band 45%-55% with an interval that reaches it" in why["Even"]
    assert f.loc["Edge", "win_rate_low"] > 0.55 and not f.loc["Edge", "flagged"]
    assert "lies outside the band 45%-55%, but adjusted p" in why["Edge"] and "is not below 0.05" in why["Edge"]
    assert f.loc["Strong 1", "flagged"] and why["Strong 1"].startswith("flagged: +26.7 points against the other")
    assert all(w.startswith(("flagged: ", "not flagged: ")) for w in why)
