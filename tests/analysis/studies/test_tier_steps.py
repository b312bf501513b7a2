"""The strength ladder of verdicts (analysis/studies/tiers/steps.py, issue 35): each step's paired change
between adjacent tiers, made by construction, the line about the two strongest tiers (its yes at
identical tiers, its no at a 5-point step) and the table in the report's terminal, JSON and page."""

import json

import numpy as np
import pytest
from fixtures_analysis.known import T1
from fixtures_analysis.tiers import tier_run

from analysis.studies.tiers.report import tier_study
from analysis.studies.tiers.steps import TITLE, last_step, step_table
from protolab.cli import main


def test_identical_top_tiers_have_converged_and_a_moved_protocol_has_not():
    rng = np.random.default_rng(0)
    items = ["P", "Q"]
    n = np.ones((400, 2))
    top = (rng.random((400, 2)) < 0.5).astype(float)
    same = {"low": n, "mid": n.copy(), "high": n.copy()}
    steps = step_table(items, same, {"low": 1 - top, "mid": top, "high": top.copy()}, ["low", "mid", "high"], 200, 1)
    assert list(steps["step"]) == [1, 1, 2, 2] and list(steps["upper"]) == ["mid", "mid", "high", "high"]
    assert (steps[steps["step"] == 2]["change"] == 0).all()
    assert last_step(steps)["meets_target"] and "converged" in last_step(steps)["line"]
    moved = top.copy()
    moved[np.flatnonzero(top[:, 1] == 0)[:12], 1] = 1  # Q: 12 more wins of 400 under the top tier: +3 points
    steps = step_table(items, same, {"low": 1 - top, "mid": top, "high": moved}, ["low", "mid", "high"], 200, 1)
    last = last_step(steps)
    assert last["largest_step_protocol"] == "Q" and last["largest_step"] == pytest.approx(0.03)
    assert not last["meets_target"] and last["line"].endswith(": no") and "Q +3.0 points" in last["line"]


def test_the_ladder_in_the_report(tmp_path, capsys):
    # greedy's T1 wins 120 of the 200 shared seeds, search's 100, ismcts's 110
    run = tier_run(tmp_path / "tiers-steps", {"greedy": 120, "search": 100, "ismcts": 110})
    study = tier_study(run)
    s = study.tables["steps"]
    for r in s.itertuples():
        sign = 1 if r.protocol in T1 else -1
        assert r.change == pytest.approx(sign * (-0.10 if r.lower == "greedy" else 0.05))
    line = study.meta["steps"]["last"]["line"]
    assert line.startswith("largest step between the two strongest tiers (search to ismcts)")
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out
    assert TITLE in out and line in out.splitlines()
    assert main(["report", str(run), "--format", "json", "--table", "steps"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["meta"]["steps"]["last"]["line"] == line and len(data["tables"]["steps"]) == len(s)
    page = tmp_path / "t.html"
    assert main(["dashboard", str(run), "--out", str(page)]) == 0
    assert "Strength ladder of verdicts" in page.read_text()
