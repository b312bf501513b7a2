"""Does a variant add loop draws? Games the loop bound ended on each side of an A/B comparison, and a
one-sided test that the variant has more: on paired sides a sign test over the seed clusters whose
loop draws differ (the other clusters say nothing about the change), else Fisher's exact test. A
variant whose loop draws rise significantly lets a player force draws, whatever its win rates say."""

from __future__ import annotations

from typing import Any

from scipy.stats import binomtest, fisher_exact

from analysis.runs.open import Runs
from analysis.studies.balance.loops import LOOP

SIDES = ("side_a", "side_b")  # the pair connection's views: base, variant (compare.pair_connection)


def loop_rise_p(more: int, fewer: int) -> float:
    """One-sided sign test that loop draws rose: `more` paired units (seeds, games) with more loop draws on
    the variant's side, `fewer` with fewer; the units where both sides agree say nothing."""
    return float(binomtest(more, more + fewer, 0.5, alternative="greater").pvalue) if more + fewer else 1.0


def _cluster_loops(view: str) -> str:
    return (
        f"select matchup, seed, count(*) as games, count(*) filter (where end_reason::varchar = '{LOOP}') as loops "
        f"from {view} group by matchup, seed"
    )


def loop_change(pc: Runs, paired: bool, alpha: float = 0.05) -> dict[str, Any]:
    """Both sides' games and loop draws, the test's p-value and whether the variant's rise is
    significant at `alpha`, with one sentence that says so."""
    a, b = (_cluster_loops(v) for v in SIDES)
    r = pc.sql(f"""
        select coalesce(sum(a.games), 0)::bigint as games_base, coalesce(sum(a.loops), 0)::bigint as loops_base,
               coalesce(sum(b.games), 0)::bigint as games_variant, coalesce(sum(b.loops), 0)::bigint as loops_variant,
               count(*) filter (where coalesce(b.loops, 0) > coalesce(a.loops, 0)) as more,
               count(*) filter (where coalesce(b.loops, 0) < coalesce(a.loops, 0)) as fewer
        from ({a}) a full join ({b}) b on a.matchup = b.matchup and a.seed = b.seed""").iloc[0]
    out: dict[str, Any] = {k: int(r[k]) for k in ("games_base", "loops_base", "games_variant", "loops_variant")}
    if paired:
        more, fewer = int(r["more"]), int(r["fewer"])
        p = loop_rise_p(more, fewer)
        test = f"sign test over {more + fewer:,} seeds whose loop draws differ"
    else:
        gb, lb, gv, lv = (out[k] for k in ("games_base", "loops_base", "games_variant", "loops_variant"))
        p = fisher_exact([[lv, gv - lv], [lb, gb - lb]], alternative="greater").pvalue if gb and gv else 1.0
        test = "Fisher's exact test"
    out.update(p_value=float(p), test=test, significant=bool(p < alpha and out["loops_variant"] > out["loops_base"]))
    out["statement"] = _statement(out, alpha)
    return out


def _statement(c: dict[str, Any], alpha: float) -> str:
    counts = (
        f"{c['loops_variant']:,} loop draws in {c['games_variant']:,} games against the base's "
        f"{c['loops_base']:,} in {c['games_base']:,}"
    )
    if c["significant"]:
        return (
            f"LOOPS: the variant adds loop draws ({counts}; {c['test']}, one-sided p = {c['p_value']:.2g} < {alpha}): "
            "a player can force a draw with it (report --table loop_draws names the card)"
        )
    return f"Loop draws: {counts} (not significantly more; {c['test']}, p = {c['p_value']:.2g})"
