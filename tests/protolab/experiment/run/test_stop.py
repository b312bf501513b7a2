"""An A/B run that stops when its verdict is settled (`[stop]`, protolab/experiment/run/stopping.py), on a
real local Ray with real Parquet: it stops early on a planted big effect, runs to the cap on
identical arms, verifies, resumes after Ctrl-C to the same stop and rows on another number of
workers, plays nothing more when resumed stopped; bad `[stop]` keys are one-line errors."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import sim
from analysis.runs import runfolder
from analysis.runs.open import open_runs
from analysis.studies import open_study
from protolab.cli import main
from protolab.experiment.run.plan import make_plan
from protolab.experiment.run.runner import RunOptions, run
from protolab.experiment.spec import SpecError, load_spec

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

SIM_ROOT = Path(sim.__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(SIM_ROOT), os.environ.get("PYTHONPATH")])),
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}

# Fire's cards all worth 0: a big planted effect on Fire's win rate.
PLANTED = """variant = "Fire worth nothing"
""" + "".join(f'\n[[cards]]\nreplaces = "Fire {v}"\nvalue = 0\n' for v in range(1, 6))

SPEC = """
name = "seq"
seed = 5
games = {games}
events = false
[seats]
strategies = ["random", "random"]
swap = true
[draft]
mode = "random"
[stop]
rule = "settled"
protocols = ["Fire"]
precision = {precision}
batch = 200
[[arms]]
name = "official"
[[arms]]
name = "variant"
{cards}
"""


def write_spec(d: Path, games: int, precision: float, planted: bool) -> Path:
    (d / "planted.toml").write_text(PLANTED)
    p = d / "seq.toml"
    p.write_text(SPEC.format(games=games, precision=precision, cards='cards = ["planted.toml"]' if planted else ""))
    return p


def games_rows(run_dir: Path):
    return pq.read_table(run_dir / "games").drop_columns(["run_id"]).sort_by("game_index")


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    d = tmp_path_factory.mktemp("planted")
    spec = write_spec(d, 4000, 0.5, True)
    res = run(str(spec), RunOptions(workers=2, out=str(d / "runs"), show_progress=False))
    return spec, res


@pytest.mark.slow
def test_a_planted_effect_stops_early_and_the_run_verifies(planted):
    _, res = planted
    m = manifest(res.run_dir)
    stop = m["stop"]
    assert res.status == "complete" and m["complete"]
    assert stop["reason"] == "settled" and stop["looks"] < stop["of_looks"] == 20
    assert stop["games_per_arm"] == 200 * stop["looks"] < 4000 and res.games == 2 * stop["games_per_arm"]
    (fire,) = stop["effects"]
    assert fire["protocol"] == "Fire" and fire["settled"] == "sign" and fire["high"] < 0 < fire["low"] + 1
    assert sorted(s["index"] for s in m["shards"]) == list(range(stop["shards"]))
    open_runs([res.run_dir], verify="full").close()  # verify: a stopped run is a whole run
    page = open_study([str(res.run_dir)]).page()
    assert "settled after" in page and "anytime 95% interval" in page


def test_the_report_says_when_and_why_it_stopped(planted, capsys):
    _, res = planted
    assert main(["report", str(res.run_dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Sequential A/B: settled after {manifest(res.run_dir)['stop']['games_per_arm']:,} games per arm" in out


def test_a_stopped_run_resumed_plays_nothing_more(planted):
    _, res = planted
    before = manifest(res.run_dir)
    again = run(None, RunOptions(resume=str(res.run_dir), show_progress=False))
    assert again.status == "complete" and again.games_computed == 0 and again.games == res.games
    assert manifest(res.run_dir)["stop"] == before["stop"]


@pytest.mark.slow
def test_ctrl_c_then_resume_on_one_worker_stops_where_an_uninterrupted_run_does(planted, tmp_path):
    spec, ref = planted
    p = subprocess.Popen(
        [sys.executable, "-m", "protolab", "run", str(spec), "--workers", "1", "--out", str(tmp_path), "--no-progress"],
        env=ENV,
        cwd=spec.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    t0 = time.monotonic()
    while time.monotonic() - t0 < 240:
        assert p.poll() is None, p.communicate()
        dirs = [d for d in tmp_path.iterdir() if d.is_dir()]
        try:
            if dirs and len(runfolder.read_manifest(dirs[0]).shards) >= 1:
                break
        except (runfolder.RunDirError, json.JSONDecodeError, FileNotFoundError):
            pass
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    run_dir = dirs[0]
    assert "stop" not in manifest(run_dir) and not manifest(run_dir)["complete"]
    res = run(None, RunOptions(resume=str(run_dir), workers=2, show_progress=False))
    assert res.status == "complete"
    stop, want = manifest(run_dir)["stop"], manifest(ref.run_dir)["stop"]
    assert {k: v for k, v in stop.items() if k != "at"} == {k: v for k, v in want.items() if k != "at"}
    assert games_rows(run_dir).equals(games_rows(ref.run_dir))


def test_identical_arms_run_to_the_cap(tmp_path):
    spec = write_spec(tmp_path, 600, 0.1, False)
    res = run(str(spec), RunOptions(workers=2, out=str(tmp_path / "runs"), show_progress=False))
    m = manifest(res.run_dir)
    assert res.status == "complete" and m["complete"] and res.games == 1200
    assert m["stop"]["reason"] == "cap" and m["stop"]["looks"] == m["stop"]["of_looks"] == 3
    (fire,) = m["stop"]["effects"]
    assert fire["change"] == 0 and fire["low"] < 0 < fire["high"] and fire["settled"] == ""
    open_runs([res.run_dir], verify="full").close()


@pytest.mark.parametrize(
    "edit, key",
    [
        (("[stop]", "[stop]\nwhen = 1"), "stop.when"),
        (('rule = "settled"', 'rule = "soon"'), "stop.rule"),
        (('protocols = ["Fire"]\n', ""), "stop.protocols"),
        (('protocols = ["Fire"]', "protocols = []"), "stop.protocols"),
        (("batch = 200", "batch = 201"), "stop.batch"),
        (("batch = 200", "batch = 8000"), "stop.batch"),
        (("precision = 0.5", "precision = -1"), "stop.precision"),
        (('mode = "random"', 'mode = "sampled"\nsamples = 3'), "draft.mode"),
        (('[[arms]]\nname = "variant"\ncards = ["planted.toml"]', ""), "stop"),
    ],
)
def test_bad_stop_keys_are_one_line_errors(tmp_path, edit, key):
    spec = write_spec(tmp_path, 4000, 0.5, True)
    text = spec.read_text()
    assert edit[0] in text
    spec.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(SpecError) as e:
        load_spec(spec)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(f"{spec}: key '{key}'"), msg


@pytest.mark.parametrize(
    "edit, key",
    [
        (('protocols = ["Fire"]', 'protocols = ["Fir"]'), "stop.protocols[0]"),
        (("events = false", "events = false\nshard_games = 300"), "stop.batch"),  # a batch of whole shards
    ],
)
def test_stop_keys_checked_against_the_pool_and_shards(tmp_path, edit, key, capsys):
    spec = write_spec(tmp_path, 4000, 0.5, True)
    spec.write_text(spec.read_text().replace(*edit))
    with pytest.raises(SpecError) as e:
        make_plan(load_spec(spec))
    assert "\n" not in str(e.value) and str(e.value).startswith(f"{spec}: key '{key}'"), str(e.value)
    assert main(["run", str(spec), "--out", str(tmp_path / "runs")]) == 2
    assert f"key '{key}'" in capsys.readouterr().err and not (tmp_path / "runs").exists()


def test_a_watched_effect_records_the_estimate_its_interval_is_built_around():
    """200 clusters lost, then 2,000 played alike: the running intersection has left the plain mean
    (-9.1 points) behind; the recorded `estimate` lies inside `low`..`high`, `change` is the mean."""
    import numpy as np

    from protolab.experiment.run.stopping import Effect

    d = np.concatenate([np.full(200, -1.0), np.zeros(2000)])
    e = Effect("variant", "official", "Fire", [d[:1100], d[1100:]]).state(0.05, 2.0)
    assert e["change"] == pytest.approx(-200 / 2200) and not e["low"] <= e["change"] <= e["high"]
    assert e["low"] <= e["estimate"] <= e["high"] and e["settled"] == "sign"
