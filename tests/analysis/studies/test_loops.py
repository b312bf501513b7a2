"""Loop draws: the report's table per protocol and per card whose text repeated (read from a real played
game the loop bound ended, and from a run written before the games table named the card), an A/B
comparison that flags a variant whose loop draws rise on the same seeds (and not one that adds a single
loop), and tune's refusal of a candidate that adds them."""

from __future__ import annotations

import numpy as np
from fixtures_analysis.synth import write_run

from analysis.runs.open import open_runs
from analysis.studies.ab.compare import compare_runs
from analysis.studies.balance.dashboard import render
from analysis.studies.balance.loops import loop_draws
from analysis.studies.balance.report import build_report
from protolab.experiment.tune.tune import loop_rejection
from protolab.play.game import LiveGame
from protolab.play.playtest import create, spec_of

LOOP = """variant = "Speed 3 shifts 2"

[[cards]]
replaces = "Speed 3"
middle.text = "Shift 2 of your other cards."
middle.do = [ { shift = 2, whose = "you", other = true } ]
"""


def looped_playtest(tmp_path):
    """A real run folder of one game the loop bound ended (tests/protolab/play/test_play_endings.py)."""
    variant = tmp_path / "speed3.toml"
    variant.write_text(LOOP)
    trios = [["Speed", "Water", "Darkness"], ["Fire", "Light", "Life"]]
    playtest = create(str(tmp_path / "pt"), spec_of("random", 2, 1, trios, [str(variant)], None))
    live = LiveGame(playtest, playtest.record(0, {}))
    while not live.over:
        live.decide(0)
    return tmp_path / "pt"


def test_the_report_and_dashboard_name_the_card_whose_text_repeated(tmp_path):
    runs = open_runs([looped_playtest(tmp_path)])
    report = build_report(runs)
    t = report.tables["loop_draws"]
    card = t[t["kind"] == "card"].iloc[0]
    assert (card["name"], card["protocol"], card["loops"], card["games"]) == ("Speed 3", "Speed", 1, 1)
    protocols = t[t["kind"] == "protocol"].set_index("name")
    assert sorted(protocols.index) == sorted(["Speed", "Water", "Darkness", "Fire", "Light", "Life"])
    assert (protocols["loops"] == 1).all() and (protocols["loop_rate"] == 1.0).all()
    assert 'id="loop-table"' in render(report)


def paired(tmp_path, loops: int, games: int = 200):
    base = write_run(tmp_path / "base", [{"seed": s} for s in range(games)], run_id="base")
    rows = [{"seed": s} | ({"winner": -1, "end_reason": "loop_guard"} if s < loops else {}) for s in range(games)]
    return base, write_run(tmp_path / f"variant{loops}", rows, run_id=f"variant{loops}")


def test_a_variant_whose_loop_draws_rise_is_flagged_and_one_loop_is_not(tmp_path):
    base, variant = paired(tmp_path, loops=12)
    c = compare_runs(open_runs([base]), open_runs([variant]))
    assert c.meta["loops"]["significant"] and c.meta["loops"]["loops_variant"] == 12
    assert c.summary[0].startswith("LOOPS: the variant adds loop draws (12 loop draws in 200 games")
    one = compare_runs(open_runs([base]), open_runs([paired(tmp_path, loops=1)[1]]))
    assert not one.meta["loops"]["significant"] and not one.summary[0].startswith("LOOPS")
    # a run from before the games table named the loop's card: protocols only
    t = loop_draws(open_runs([variant]))
    assert set(t["kind"]) == {"protocol"} and (t["loops"] == 12).all() and (t["games"] == 200).all()


def test_tune_never_proposes_a_candidate_that_adds_loop_draws():
    baseline = np.zeros(400, bool)
    looping = baseline.copy()
    looping[:9] = True
    assert "adds loop draws: 9 of 400 fresh games" in loop_rejection(looping, baseline, 0.05)
    assert loop_rejection(baseline, baseline, 0.05) == ""
    once = baseline.copy()
    once[0] = True
    assert loop_rejection(once, baseline, 0.05) == ""  # one loop in 400 is no evidence
