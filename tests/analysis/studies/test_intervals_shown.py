"""Every figure a study shows with an interval lies inside that interval, in the JSON of the plain
report, compare, a stopped A/B run's comparison and the tier report (tests/fixtures_analysis/
intervals.py finds them by name); and the two places where it did not hold now do: a stopped run's
watched change (the plain mean beside a running intersection of anytime intervals) and the rank
agreement of two tiers (the estimate above its resampled values' percentiles)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from fixtures_analysis import intervals
from fixtures_analysis.known import T1, T2, known_run
from fixtures_analysis.synth import write_run
from fixtures_analysis.tiers import tier_run

from analysis.runs.open import open_runs
from analysis.stats.cluster_draws import cluster_draws
from analysis.studies.ab.arms import ABResult, comparison_json, render_ab
from analysis.studies.ab.compare import compare_runs
from analysis.studies.ab.stopped import apply_stop, describe
from analysis.studies.balance import queries
from analysis.studies.tiers.report import bootstrap_agreement, kendall_tau
from protolab.cli import main


def _json(capsys, *argv) -> dict:
    assert main([str(a) for a in argv]) == 0
    return json.loads(capsys.readouterr().out)


def paired_runs(tmp_path, seeds: int = 120) -> tuple:
    """Two runs of the same seeds (T1 against T2, seats swapped every other seed); the variant's T1
    wins a few more of them."""
    rng = np.random.default_rng(3)
    sides = []
    for name, p in (("base", 0.5), ("variant", 0.6)):
        rows = []
        for s in range(seeds):
            a, b = (T1, T2) if s % 2 else (T2, T1)
            won = rng.random() < p
            row = {"seed": s, "matchup": 0, "first_player": s % 2, "winner": int(won == (a == T2))}
            row.update({f"seat0_protocol_{k}": x for k, x in zip(("left", "middle", "right"), a, strict=True)})
            row.update({f"seat1_protocol_{k}": x for k, x in zip(("left", "middle", "right"), b, strict=True)})
            rows.append(row)
        sides.append(write_run(tmp_path / name, rows, run_id=f"iv-{name}"))
    return tuple(sides)


def test_the_plain_report_shows_every_figure_inside_its_interval(tmp_path, capsys):
    data = _json(capsys, "report", known_run(tmp_path / "known", cards=True), "--format", "json")
    assert intervals.count(data) > 10 and intervals.outside(data) == []


def test_compare_shows_every_figure_inside_its_interval(tmp_path, capsys):
    base, variant = paired_runs(tmp_path)
    data = _json(capsys, "compare", base, variant, "--format", "json")
    assert data["meta"]["design"] == "paired"
    assert intervals.count(data["table"]) >= 7 and intervals.outside(data) == []


def _stop(change: float, low: float, high: float, **more) -> dict:
    effect = {"arm": "variant", "against": "base", "protocol": "Fire", "change": change, "low": low, "high": high}
    return {
        "rule": "settled",
        "reason": "settled",
        "at": "2026-01-01T00:00:00Z",
        "looks": 2,
        "of_looks": 10,
        "games_per_arm": 120,
        "games": 240,
        "shards": 2,
        "alpha": 0.05,
        "precision": 2.0,
        "effects": [{**effect, "clusters": 120, "settled": "sign", **more}],
    }


@pytest.mark.parametrize("recorded", [{"estimate": -0.03}, {}], ids=["with its estimate", "recorded before it"])
def test_a_stopped_runs_watched_change_is_the_estimate_of_its_anytime_interval(tmp_path, recorded):
    """The watched effect's plain mean (+8 points) lies outside its running-intersection interval
    (-4 to -2): the row shows the interval's own estimate, the interval and the significance it gives."""
    base, variant = paired_runs(tmp_path)
    stop = _stop(0.08, -0.04, -0.02, **recorded)
    c = apply_stop(compare_runs(open_runs([base]), open_runs([variant])), stop, "variant")
    fire = c.table.set_index("name").loc["Fire"]
    assert fire["change"] == pytest.approx(recorded.get("estimate", -0.03)) and bool(fire["significant"])
    assert fire["significant_by"] == "the anytime interval leaves 0"
    data = comparison_json(c)
    assert intervals.count(data["table"]) >= 7 and intervals.outside(data) == []
    line = describe(stop)
    assert "Fire -3.0 points, anytime 95% interval -4.0 to -2.0" in line and "paired differences is +8.0" in line


def test_the_ab_page_says_what_each_row_is_significant_by(tmp_path):
    base, variant = paired_runs(tmp_path)
    runs = open_runs([base]), open_runs([variant])
    c = apply_stop(compare_runs(*runs), _stop(0.08, -0.04, -0.02), "variant")
    overview = pd.concat([queries.overview(r).assign(arm=a) for a, r in zip(("base", "variant"), runs, strict=True)])
    page = render_ab(ABResult(str(base), "iv", ["base", "variant"], overview, [("variant", c)]))
    assert "yes (the anytime interval leaves 0)" in page
    assert set(c.table["significant_by"]) == {"adjusted p < 0.05", "the anytime interval leaves 0"}


def test_the_tier_report_shows_every_figure_inside_its_interval(tmp_path, capsys):
    run = tier_run(tmp_path / "tiers", {"greedy": 170, "search": 100})
    data = _json(capsys, "report", run, "--format", "json")
    assert intervals.count(data["tables"]) > 10 and intervals.outside(data) == []


def test_rank_agreement_is_shown_inside_its_interval_where_percentiles_would_leave_it_outside():
    """Twelve protocols near 50% under two tiers: resampling adds noise, which lowers tau, so the
    estimate lies above the 97.5th percentile of its resamples here; its interval is centred on it."""
    rng = np.random.default_rng(44)
    n = np.ones((300, 12))
    wa = (rng.random((300, 12)) < np.linspace(0.45, 0.55, 12)).astype(float)
    wb = (rng.random((300, 12)) < np.linspace(0.45, 0.55, 12)).astype(float)

    def rate(w):
        return lambda weights: (weights @ w) / (weights @ n)

    tau = kendall_tau(rate(wa)(np.ones(300)), rate(wb)(np.ones(300)))
    resampled = [kendall_tau(rate(wa)(w), rate(wb)(w)) for draws in cluster_draws(300, 200, 0) for w in draws]
    assert tau > np.percentile(resampled, 97.5)  # the case: a percentile interval leaves its estimate out
    got = bootstrap_agreement(rate(wa), rate(wb), 300, resamples=200, seed=0)
    assert got["kendall_tau"] == tau and got["tau_low"] < tau < got["tau_high"]
    assert got["tau_high"] - tau == pytest.approx(tau - got["tau_low"])
    assert intervals.outside(got) == [] and intervals.count(got) == 2
