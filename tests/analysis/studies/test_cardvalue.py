"""`protolab cardvalue`: card value by restricted play (docs/strategies.md, "Card value").

One small run on a local Ray (module fixture) backs the end-to-end tests; the statistic, the
restriction check and the draft are also tested on synthetic numbers with known answers."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.runs.manifest import Manifest
from analysis.studies.balance import card_values as cv
from protolab.cli import main
from protolab.experiment.run.plan import holding_matchups
from protolab.experiment.spec import SpecError, parse_spec

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

GAMES = 10  # per card and restriction: 5 seat-swapped pairs


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def fire_run(tmp_path_factory, monkeypatch_module):
    """`protolab cardvalue Fire --games 10` once: (run folder, its JSON output)."""
    out = tmp_path_factory.mktemp("cardvalue")
    code = main(
        [
            "cardvalue",
            "Fire",
            "--games",
            str(GAMES),
            "--workers",
            "2",
            "--out",
            str(out),
            "--format",
            "json",
            "--no-progress",
        ]
    )
    assert code == 0
    [run] = list(out.iterdir())
    return run


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    yield mp
    mp.undo()


# -- the statistic on known numbers -------------------------------------------------------------------


def test_paired_difference_known_answer():
    units = [1, 0, 0.5, -0.5, 1, 0]  # mean 1/3; squared deviations sum to 66/36
    se = math.sqrt(66 / 36 / 5 / 6)
    r = cv.paired_difference(np.array(units))
    assert r["value"] == pytest.approx(1 / 3)
    assert r["value_low"] == pytest.approx(1 / 3 - 1.959963984540054 * se)
    assert r["value_high"] == pytest.approx(1 / 3 + 1.959963984540054 * se)
    assert r["p_value"] == pytest.approx(math.erfc((1 / 3) / se / math.sqrt(2)))  # 0.1775
    assert r["p_value"] == pytest.approx(0.1775, abs=5e-4)


def test_paired_difference_without_spread():
    assert cv.paired_difference(np.zeros(4)) == {"value": 0, "value_low": 0, "value_high": 0, "p_value": 1.0}
    assert cv.paired_difference(np.full(4, 0.5))["p_value"] == 0.0
    assert math.isnan(cv.paired_difference(np.array([]))["value"])


def _design(*tested: tuple[str, str, str]) -> cv.Design:
    return cv.Design(
        "greedy", "baseline", tuple(cv.Tested(a, c, k, f"greedy+{k}:{c}") for a, c, k in tested), ("Fire", "Water"), 3
    )


def test_summarise_pairs_by_matchup_of_the_cards_block_and_applies_holm():
    d = _design(("avoid-F1", "Fire 1", "avoid"), ("noup-W2", "Water 2", "noup"))
    rows = [("avoid-F1", "Fire", m, 2, b, r) for m, b, r in ((0, 2, 0), (1, 1, 0), (2, 2, 1))]
    rows += [("avoid-F1", "Water", 3, 2, 0, 2)]  # another block: not Fire 1's games
    rows += [("noup-W2", "Water", m, 2, b, r) for m, b, r in ((3, 1, 1), (4, 0, 0.5), (5, 2, 2))]
    pm = pd.DataFrame(rows, columns=["arm", "protocol", "matchup", "n", "base", "restricted"])
    t = cv.summarise(pm, d, {"fire 1": "Fire", "water 2": "Water"})
    fire, water = t.iloc[0], t.iloc[1]
    assert fire["games"] == 6 and fire["pairs"] == 3
    assert fire["value"] == pytest.approx(np.mean([1, 0.5, 0.5]))  # per-matchup means of the differences
    assert fire["win_rate_unrestricted"] == pytest.approx(5 / 6) and fire["win_rate_restricted"] == pytest.approx(1 / 6)
    assert water["value"] == pytest.approx(np.mean([0, -0.25, 0]))
    p = t["p_value"].to_numpy()
    assert t["p_adjusted"].tolist() == pytest.approx([min(1, 2 * p.min()), max(min(1, 2 * p.min()), p.max())])


# -- the restriction check ------------------------------------------------------------------------------


def _plays(*rows: tuple) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["arm", "card", "up", "by_effect", "strategy", "block", "n"])


def test_restriction_check_counts_only_the_restricted_seat_and_flags_violations():
    d = _design(("avoid-F1", "Fire 1", "avoid"), ("noup-F1", "Fire 1", "noup"), ("avoid-F2", "Fire 2", "avoid"))
    plays = _plays(
        ("avoid-F1", "fire 1", False, True, "greedy+avoid:Fire 1", 0, 3),  # forced by an effect: fine
        ("avoid-F1", "fire 1", True, False, "greedy", 1, 9),  # the opponent: not counted
        ("noup-F1", "fire 1", False, False, "greedy+noup:Fire 1", 0, 7),  # face-down: allowed
        ("noup-F1", "fire 1", True, True, "greedy+noup:Fire 1", 0, 1),  # face-up: violated
        ("avoid-F2", "fire 2", False, False, "greedy+avoid:Fire 2", 0, 2),  # played by action: violated
        ("baseline", "fire 1", True, False, "greedy", 0, 11),
        ("baseline", "fire 1", True, False, "greedy", 1, 5),
    )  # Water's block: not counted
    c = cv.restriction_counts(plays, d, {"fire 1": "Fire", "fire 2": "Fire"})
    assert c["restriction_held"].tolist() == [True, False, False]
    assert c.loc[
        0, ["restricted_up_plays", "restricted_down_action_plays", "restricted_down_effect_plays"]
    ].tolist() == [0, 0, 3]
    assert c.loc[0, "baseline_up_plays"] == 11
    table = pd.concat(
        [pd.DataFrame({"card": ["Fire 1", "Fire 1", "Fire 2"], "restriction": ["avoid", "noup", "avoid"]}), c], axis=1
    )
    problems = cv.restriction_problems(table)
    assert len(problems) == 2 and problems[0].startswith("Fire 1 (noup)") and "face-up" in problems[0]
    assert problems[1].startswith("Fire 2 (avoid)")


# -- the draft ------------------------------------------------------------------------------------------

NAMES = sorted(
    [
        "Apathy",
        "Darkness",
        "Death",
        "Fire",
        "Gravity",
        "Hate",
        "Life",
        "Light",
        "Love",
        "Metal",
        "Plague",
        "Psychic",
        "Speed",
        "Spirit",
        "Water",
    ]
)


def test_holding_draft_holds_the_protocol_and_extends_with_samples():
    m = holding_matchups(7, ["Fire", "Water"], NAMES, 40)
    fire, water = m[:40], m[40:]
    assert all("Fire" in a for a, _ in fire) and all("Water" in a for a, _ in water)
    assert all(len(set(a) | set(b)) == 6 and set(a) | set(b) <= set(NAMES) for a, b in m)
    assert {a.index("Fire") for a, _ in fire} == {0, 1, 2}  # every line occurs
    assert holding_matchups(7, ["Fire"], NAMES, 25) == fire[:25]  # a prefix; independent of Water
    assert holding_matchups(8, ["Fire"], NAMES, 40) != fire  # the seed matters


def test_holding_spec_keys_are_checked():
    base = {"name": "x", "seed": 1, "games": 2, "seats": {"swap": True}}
    with pytest.raises(SpecError, match="key 'draft.samples': missing"):
        parse_spec({**base, "draft": {"mode": "holding", "protocols": ["Fire"]}}, "s.toml", Path("."))
    with pytest.raises(SpecError, match="key 'draft.protocols'"):
        parse_spec({**base, "draft": {"mode": "holding", "protocols": [], "samples": 3}}, "s.toml", Path("."))
    with pytest.raises(SpecError, match="key 'draft.trios': not used"):
        parse_spec(
            {**base, "draft": {"mode": "holding", "protocols": ["Fire"], "samples": 3, "trios": []}},
            "s.toml",
            Path("."),
        )


def test_holds_names_a_block_of_the_holding_draft():
    base = {"name": "x", "seed": 1, "games": 2, "seats": {"swap": True}}
    draft = {"mode": "holding", "protocols": ["Fire", "Water"], "samples": 3}
    arms = [{"name": "all"}, {"name": "fire", "holds": "fire"}]
    spec = parse_spec({**base, "draft": draft, "arms": arms}, "s.toml", Path("."))
    assert [a.holds for a in spec.arms] == ["", "fire"] and spec.to_dict()["arms"][1]["holds"] == "fire"
    assert "holds" not in spec.to_dict()["arms"][0]  # other runs' run.json read back as before
    with pytest.raises(SpecError, match=r"key 'arms\[1\].holds': expected one of draft.protocols"):
        parse_spec({**base, "draft": draft, "arms": [arms[0], {"name": "l", "holds": "Life"}]}, "s.toml", Path("."))
    with pytest.raises(SpecError, match=r"key 'arms\[1\].holds': expected only with draft mode 'holding'"):
        parse_spec({**base, "arms": arms}, "s.toml", Path("."))


# -- one command, end to end ----------------------------------------------------------------------------


@pytest.mark.slow
def test_two_protocols_share_one_baseline_and_match_a_single_protocol_run(fire_run, tmp_path, capsys):
    """Each card's arms play only their protocol's block: games = baseline (both blocks) + 2 arms x
    GAMES per card; the first block's card has the paired estimate a run of its protocol alone gives
    (same seed: same matchup numbers, so same seeds); a game of the second block's restricted arm
    replays exactly (its seeds are the baseline's second block's)."""
    code, shown, _ = run_cli(
        capsys, "cardvalue", "Fire 1", "Water 1", "--games", str(GAMES), "--workers", "2",
        "--out", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert code == 0
    [run] = list(tmp_path.iterdir())
    manifest = json.loads((run / "run.json").read_text())
    per_arm: dict[str, int] = {}
    for s in manifest["shards"]:
        per_arm[s["arm"]] = per_arm.get(s["arm"], 0) + s["games"]
    restricted = ("avoid-Fire_1", "noup-Fire_1", "avoid-Water_1", "noup-Water_1")
    assert per_arm == {"baseline": 2 * GAMES, **dict.fromkeys(restricted, GAMES)} and manifest["games"] == 6 * GAMES
    assert f"Games played: {6 * GAMES} (baseline {2 * GAMES} over every" in " ".join(shown.split())
    _, both, _ = run_cli(capsys, "report", str(run), "--format", "json", "--table", "card_value")
    _, alone, _ = run_cli(capsys, "report", str(fire_run), "--format", "json", "--table", "card_value")

    def fire_1(rows: list[dict]) -> list[dict]:  # p_adjusted: Holm over this run's rows
        return [{k: v for k, v in r.items() if k != "p_adjusted"} for r in rows if r["card"] == "Fire 1"]

    assert fire_1(json.loads(both)["tables"]["card_value"]) == fire_1(json.loads(alone)["tables"]["card_value"]) != []
    assert main(["replay", f"{run}#avoid-Water_1", "--game", "3"]) == 0
    replayed = capsys.readouterr().out
    assert f"game {4 * GAMES + 3} (arm 'avoid-Water_1' game 3: matchup {GAMES // 2 + 1}," in replayed
    assert "Checked: the replay matches" in replayed


def test_cardvalue_reports_all_six_cards_with_intervals(fire_run, capsys):
    capsys.readouterr()
    code, out, _ = run_cli(capsys, "report", str(fire_run), "--format", "json", "--table", "card_value")
    assert code == 0
    rows = json.loads(out)["tables"]["card_value"]
    assert [(r["card"], r["restriction"]) for r in rows] == [
        (f"Fire {v}", k) for v in range(6) for k in ("avoid", "noup")
    ]
    for r in rows:
        assert r["games"] == GAMES and r["pairs"] == GAMES // 2 and r["protocol"] == "Fire"
        assert r["value_low"] <= r["value"] <= r["value_high"]
        assert r["value"] == pytest.approx(r["win_rate_unrestricted"] - r["win_rate_restricted"])
        assert 0 <= r["p_value"] <= r["p_adjusted"] <= 1
        assert r["restriction_held"] is True and r["restricted_up_plays"] == 0
        if r["restriction"] == "avoid":
            assert r["restricted_down_action_plays"] == 0
    assert sum(r["baseline_up_plays"] for r in rows) > 0  # the counts see plays when there are some
    assert sum(r["restricted_down_action_plays"] for r in rows if r["restriction"] == "noup") > 0


def test_cardvalue_run_folder_is_an_ordinary_run(fire_run, capsys):
    manifest = json.loads((fire_run / "run.json").read_text())
    assert manifest["complete"] and manifest["arms"] == 13 and manifest["spec"]["draft"]["mode"] == "holding"
    assert "card-value" in (fire_run / "dashboard.html").read_text()
    code, out, _ = run_cli(capsys, "report", str(fire_run))
    assert code == 0 and "Card value under greedy" in out and "Fire 5" in out


def test_cardvalue_resume_of_a_finished_run_prints_the_same_table(fire_run, capsys):
    _, before, _ = run_cli(capsys, "report", str(fire_run), "--format", "csv", "--table", "card_value")
    code, out, _ = run_cli(capsys, "cardvalue", "--resume", str(fire_run), "--format", "csv")
    assert code == 0 and out == before


# -- bad input: one line, exit status 2, nothing written ------------------------------------------------


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["Fir"], "'Fir': not a protocol or card of the pool"),
        (["Fire 9"], "'Fire 9': not a protocol or card"),
        (["Fire", "--strategy", "greed"], "--strategy: unknown strategy 'greed'"),
        (["Fire", "--strategy", "greedy+avoid"], "--strategy: restriction 'avoid' needs a card"),
        (["Fire", "--games", "3"], "--games: expected an even number"),
        (["Fire", "--games", "0"], "--games: expected an even number"),
        (["Fire", "--set", "Main 9"], "--set/--cards: unknown set 'Main 9'"),
        ([], "expected at least one PROTOCOL or CARD"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, expected, tmp_path, capsys):
    code, out, err = run_cli(capsys, "cardvalue", *argv, "--out", str(tmp_path / "runs"))
    assert code == 2 and out == ""
    assert err.startswith("protolab: error: ") and expected in err and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()


def test_resume_refuses_a_run_that_is_not_a_card_value_run(fire_run, tmp_path, capsys):
    other = tmp_path / "other"
    shutil.copytree(fire_run, other)
    m = json.loads((other / "run.json").read_text())
    m["spec"]["draft"]["mode"] = "sampled"
    (other / "run.json").write_text(json.dumps(m))
    code, _, err = run_cli(capsys, "cardvalue", "--resume", str(other))
    assert code == 2 and "not a card-value run" in err and err.count("\n") == 1
    code, _, err = run_cli(capsys, "cardvalue", "Fire", "--resume", str(fire_run))
    assert code == 2 and "--resume: a run keeps its own cards" in err


def test_design_of_other_runs_is_none():
    ab = {
        "spec": {
            "draft": {"mode": "holding", "protocols": ["Fire"], "samples": 2},
            "seats": {"swap": True},
            "arms": [
                {"name": "official", "strategies": ["greedy", "greedy"]},
                {"name": "variant", "strategies": ["greedy", "greedy"]},
            ],
        }
    }

    def typed(m: dict) -> Manifest:
        return Manifest.of(
            {"run_id": "r", "format": 1, "complete": True, "spec_hash": "h", "games": 0, "shards": [], **m}, "run.json"
        )

    assert cv.design_of(typed(ab)) is None
    ab["spec"]["arms"][1]["strategies"] = ["greedy+nodown", "greedy"]
    assert cv.design_of(typed(ab)) is None
    ab["spec"]["arms"][1]["strategies"] = ["greedy+noup:Fire 1", "greedy"]
    assert cv.design_of(typed(ab)).tested[0].card == "Fire 1"
