"""`protolab train`: a tiny training end to end through the command line on a real local Ray
(folder layout, Parquet read by pandas and DuckDB, the study's report and page), the same seed
giving the same models and data with no Ray at all, a resumed training equal to one run to the
end, a damaged generation played again, and bad spec keys as one line (exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from strategies._features import FEATURES

from protolab.cli import main
from protolab.experiment.spec import examples_dir
from protolab.experiment.train.fit import fit_mlp
from protolab.experiment.train.trainplay import POLICY_KEY_COLUMNS
from protolab.experiment.train.trainspec import Fit, load_train_spec, spec_from_record
from strategies.model import Model

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

SPEC = """name = "tiny"
seed = 5

[pool]
sets = ["Main 1", "Aux 1"]

[train]
generations = {generations}
model = "tiny"

[train.data]
games = 60
shard_games = 20
expert = "greedy"
explore = 0.2
window = 2

[train.net]
hidden = [6]

[train.fit]
epochs = 4
batch = 128
patience = 2

[train.ladder]
opponents = ["greedy"]
games = 20
shard_games = 10
choose = "best"
"""


def write(tmp_path: Path, generations: int = 2, name: str = "tiny.toml", text: str | None = None) -> Path:
    path = tmp_path / name
    path.write_text(text if text is not None else SPEC.format(generations=generations))
    return path


def train(spec: Path, out: Path, models: Path, *extra: str) -> dict:
    code = main(["train", str(spec), "--out", str(out), "--models", str(models), "--no-progress", *extra])
    assert code == 0
    return json.loads((out / "train.json").read_text())


def hashes(record: dict) -> list[str]:
    return [g["model"]["hash"] for g in record["generations"]]


def shards(record: dict) -> list[str]:
    return [s["sha256"] for g in record["generations"] for s in g["examples"]["shards"]]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Two generations on a local Ray with two workers, kept for the tests below; the folders are given
    relative to the working folder, as a user types them (Ray's workers start in another)."""
    tmp = tmp_path_factory.mktemp("train")
    here = os.getcwd()
    os.chdir(tmp)
    try:
        record = train(write(tmp), Path("run"), Path("models"), "--workers", "2")
    finally:
        os.chdir(here)
    return tmp, record


def test_the_folder_holds_each_generation_and_the_model_with_its_card(trained):
    tmp, record = trained
    run = tmp / "run"
    assert [g["generation"] for g in record["generations"]] == [0, 1]
    for g in record["generations"]:
        assert len(list((run / f"gen-{g['generation']}" / "examples").glob("*.parquet"))) == 3
        assert Model.load(run / g["model"]["file"]).hash == g["model"]["hash"]
        assert g["ladder"]["pairs"][0]["games"] == 20 and 0 <= g["ladder"]["pairs"][0]["ci_low"] <= 1
    assert record["generations"][0]["examples"]["players"] == ["greedy", "greedy"]
    assert record["generations"][1]["examples"]["players"] == ["learned:model=gen-0/model.json"] * 2
    assert record["generations"][1]["fit"]["data_generations"] == [0, 1]
    out = record["output"]
    model = Model.load(tmp / "models" / "tiny.json")
    assert model.hash == out["hash"] in hashes(record) and model.meta["pool_hash"] == record["pool_hash"]
    card = (tmp / "models" / "tiny.md").read_text()
    assert out["hash"] in card and record["pool_hash"] in card and "scikit-learn" in card
    assert record["libraries"]["scikit-learn"] and record["libraries"]["ray"]


def test_the_examples_are_parquet_that_pandas_and_duckdb_read(trained):
    tmp, record = trained
    files = sorted((tmp / "run" / "gen-0" / "examples").glob("*.parquet"))
    df = pd.concat([pd.read_parquet(f) for f in files])
    assert len(df) == record["generations"][0]["examples"]["rows"] > 60
    assert set(df["outcome"].unique()) <= {0.0, 0.5, 1.0} and set(df["player"].unique()) == {0, 1}
    assert df["seed"].nunique() == 60 and list(df.columns[:5]) == ["generation", "seed", "turn", "player", "outcome"]
    assert len(df.columns) == 5 + len(FEATURES)
    glob = str(tmp / "run" / "gen-*" / "examples" / "*.parquet")
    n, games = duckdb.sql(f"select count(*), count(distinct seed) from read_parquet('{glob}')").fetchall()[0]
    assert n == sum(g["examples"]["rows"] for g in record["generations"]) and games == 120


def test_the_same_seed_gives_the_same_data_and_models_without_ray(trained, tmp_path):
    _, record = trained
    again = train(write(tmp_path), tmp_path / "run", tmp_path / "models", "--workers", "1")
    assert hashes(again) == hashes(record) and shards(again) == shards(record)


def test_a_resumed_training_equals_one_run_to_the_end(trained, tmp_path):
    _, record = trained
    first = train(write(tmp_path, generations=1), tmp_path / "run", tmp_path / "models", "--workers", "1")
    assert hashes(first) == hashes(record)[:1]
    resumed = train(write(tmp_path, generations=2), tmp_path / "run", tmp_path / "models", "--workers", "1")
    assert hashes(resumed) == hashes(record) and shards(resumed) == shards(record)


def test_a_damaged_generation_is_played_again_on_resume(trained, tmp_path, capsys):
    tmp, record = trained
    shutil.copytree(tmp / "run", tmp_path / "run")
    (tmp_path / "run" / "gen-1" / "model.json").write_text("{}")
    code = main(
        [
            "train",
            "--resume",
            str(tmp_path / "run"),
            "--models",
            str(tmp_path / "models"),
            "--workers",
            "1",
            "--no-progress",
        ]
    )  # no SPEC: the one the folder recorded
    assert code == 0
    again = json.loads((tmp_path / "run" / "train.json").read_text())
    out = capsys.readouterr().out
    assert "generation 1: gen-1/model.json has changed since it was written; playing it again" in out
    assert hashes(again) == hashes(record)


def test_the_training_folder_reads_as_its_study(trained, capsys, tmp_path):
    tmp, record = trained
    assert main(["report", str(tmp / "run"), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [g["model_hash"] for g in data["generations"]] == hashes(record)
    assert data["output"]["hash"] == record["output"]["hash"] and len(data["ladder"]) == 2
    assert main(["report", str(tmp / "run"), "--table", "ladder", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# Produced by run: strategies per arm: generation 0 greedy on both seats")
    assert f"model tiny {record['output']['hash']} (trained on this pool)" in lines[0]
    assert lines[1].startswith("generation,opponent,games,wins")
    assert main(["report", str(tmp / "run")]) == 0
    assert "held-out loss" in capsys.readouterr().out
    page = tmp_path / "page.html"
    assert main(["dashboard", str(tmp / "run"), "--out", str(page)]) == 0
    text = page.read_text()
    assert 'id="generations"' in text and 'id="ladder-fig"' in text and record["output"]["hash"] in text


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        ("hidden = [6]", "hiden = [6]", "train.net.hiden", "unknown key"),
        ("games = 60", "gams = 60", "train.data.gams", "unknown key"),
        ('choose = "best"', 'choose = "top"', "train.ladder.choose", "expected one of last, best"),
        (
            "games = 20\nshard_games = 10",
            "games = 21\nshard_games = 10",
            "train.ladder.games",
            "expected an even number",
        ),
        ('expert = "greedy"', 'expert = "greedyy"', "train.data.expert", "greedyy"),
        ("hidden = [6]", "hidden = [6, 6, 6, 6]", "train.net.hidden", "1 to 3 hidden layer sizes"),
        ("seed = 5", "seed = -1", "seed", "the master seed"),
        ("explore = 0.2", 'improver = "greedy"', "train.data.improver", "expected a search guided"),
        ("explore = 0.2", 'improver = "ismcts:leaf=model,model=learned"', "train.data.improver", "no model="),
        ("explore = 0.2", "policy = true", "train.data.policy", "expected policy = true only with a search"),
        ("explore = 0.2", 'policy = "yes"', "train.data.policy", "true or false"),
        ("patience = 2", "patience = 2\nsearch_value = 1", "train.fit.search_value", "unless train.data.policy"),
        ("patience = 2", "patience = 2\nsearch_value = -1", "train.fit.search_value", "the weight of the search"),
    ],
)
def test_a_bad_training_spec_is_one_line_naming_file_and_key(tmp_path, capsys, old, new, key, words):
    text = SPEC.format(generations=2)
    assert old in text
    path = write(tmp_path, text=text.replace(old, new, 1))
    code = main(["train", str(path), "--out", str(tmp_path / "out"), "--workers", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, (code, err)
    assert f"key '{key}'" in err[0] and words in err[0] and str(path) in err[0]
    assert not (tmp_path / "out").exists()


def test_a_training_spec_given_to_run_says_to_train_it(tmp_path, capsys):
    assert main(["run", str(write(tmp_path)), "--workers", "1"]) == 2
    assert "run it with protolab train" in capsys.readouterr().err


def test_the_fit_folds_the_scaling_into_the_player_and_repeats_bit_for_bit():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 5.0, (2000, len(FEATURES))).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 4.5).astype(np.float64)
    held = np.arange(2000) % 10 == 0
    settings = Fit(epochs=20, batch=64, learning_rate=0.01, l2=1e-4, validation=0.1, patience=5)
    a, b = (fit_mlp(x, y, held, (8,), "relu", settings, seed=3) for _ in range(2))
    pairs = zip(a.layers, b.layers, strict=True)
    assert all((la.weights == lb.weights).all() and (la.bias == lb.bias).all() for la, lb in pairs)
    model = Model.from_arrays([(la.weights, la.bias, la.activation) for la in a.layers])
    p = model.predict(x[held])
    assert np.mean((p > 0.5) == (y[held] > 0.5)) > 0.9 and a.val_loss < a.base_loss / 2


def test_without_the_extra_train_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now raises ImportError
    assert main(["train", str(write(tmp_path)), "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'pip install -e ".[train]"' in err[0]


def test_playing_a_model_never_loads_the_fitting_library():
    probe = (
        "import sys, protolab.commands.train, analysis.studies, strategies.learned, strategies.model; "
        "print('sklearn' in sys.modules, 'threadpoolctl' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_run_with_the_model_on_another_pool_says_so_in_its_provenance(trained, tmp_path, capsys):
    tmp, record = trained
    model = tmp / "models" / "tiny.json"
    spec = tmp_path / "run.toml"
    spec.write_text(
        f'name = "other-pool"\nseed = 2\ngames = 20\nshard_games = 10\n[pool]\nsets = ["Main 1"]\n'
        f'[seats]\nstrategies = ["learned:model={model}", "greedy"]\n'
    )
    assert main(["run", str(spec), "--workers", "1", "--out", str(tmp_path / "runs"), "--no-progress"]) == 0
    run = next((tmp_path / "runs").iterdir())
    entry = json.loads((run / "run.json").read_text())["models"][0]
    assert entry["hash"] == record["output"]["hash"] and entry["same_pool"] is False
    capsys.readouterr()
    assert main(["report", str(run), "--format", "csv"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert f"model {model} {record['output']['hash']} (trained on pool {record['pool_hash']}, not this pool" in head


def test_expert_iteration_plays_each_generation_with_the_search_guided_by_the_previous_model(tmp_path):
    """Issue 35: with `improver`, generation 1's examples are games of the guided search with generation
    0's model on both seats (not the model's self-play)."""
    text = (
        SPEC.format(generations=2)
        .replace("games = 60", "games = 6", 1)
        .replace("shard_games = 20", "shard_games = 3", 1)
    )
    text = text.replace("explore = 0.2", 'improver = "ismcts:iters=4,leaf=model"').replace("games = 20", "games = 2")
    record = train(write(tmp_path, text=text), tmp_path / "run", tmp_path / "models", "--workers", "1")
    one = record["generations"][1]["examples"]
    assert one["players"] == ["ismcts:iters=4,leaf=model,model=gen-0/model.json"] * 2 and one["explore"] == 0
    assert one["rows"] > 0 and (tmp_path / "run" / "gen-1" / "examples" / "shard-00001.parquet").is_file()


QTRAIN = "[qtrain]"  # action-value training specs (qtrain.py): no generations, nothing stored to resume


@pytest.mark.parametrize(
    "path", sorted(p for p in examples_dir().glob("train*.toml") if QTRAIN not in p.read_text()), ids=lambda p: p.stem
)
def test_every_shipped_training_spec_reads_back_from_its_stored_form(path):
    """As train.json holds it (and --resume reads it): the same spec, the same hash."""
    spec = load_train_spec(path)
    stored = json.loads(json.dumps(spec.to_dict()))
    again = spec_from_record(stored, {c.path: c.text for c in spec.cards}, "train.json")
    assert again.hash == spec.hash and json.loads(json.dumps(again.to_dict())) == {**stored, "source": "train.json"}


def policy_spec(tmp_path: Path) -> Path:
    """A tiny training with the policy target: the guided search on every generation, policy = true."""
    text = (
        SPEC.format(generations=2)
        .replace("games = 60", "games = 6", 1)
        .replace("shard_games = 20", "shard_games = 3", 1)
        .replace('expert = "greedy"', 'expert = "ismcts:iters=6,leaf=model"')
        .replace("explore = 0.2", 'improver = "ismcts:iters=6,leaf=model"\npolicy = true')
        .replace("games = 20", "games = 2")
    )
    return write(tmp_path, text=text)


def test_the_policy_target_is_recorded_fitted_and_repeats(tmp_path, capsys):
    """Issue 35: each shard's policy rows beside its examples (a decision's shares sum to 1), a model
    with the policy output, the same hashes and files a second time, a damaged policy file played again."""
    spec = policy_spec(tmp_path)
    record = train(spec, tmp_path / "run", tmp_path / "models", "--workers", "1")
    gen = record["generations"][1]
    receipt = gen["examples"]["shards"][0]["policy"]
    table = pd.read_parquet(tmp_path / "run" / "gen-1" / "policy" / receipt["file"])
    assert tuple(table.columns[:8]) == POLICY_KEY_COLUMNS and list(table.columns[8:]) == [f"f_{f}" for f in FEATURES]
    assert table["score"].between(0, 1).all() and table["score"].nunique() > 2
    sums = table.groupby(["seed", "turn", "player"])["share"].sum()
    assert len(sums) == receipt["decisions"] > 0 and np.allclose(sums, 1, atol=1e-5) and len(table) == receipt["rows"]
    assert Model.load(tmp_path / "run" / "gen-1" / "model.json").outputs == ("value", "policy")
    assert gen["fit"]["policy"]["uniform_loss"] > 0 and gen["examples"]["policy_decisions"] >= receipt["decisions"]
    card = (tmp_path / "models" / "tiny.md").read_text()
    assert "two outputs" in card and "numpy (value log loss + per-decision policy cross-entropy" in card
    assert "later ones by `ismcts:iters=6,leaf=model` guided by the previous" in card
    again = train(spec, tmp_path / "again", tmp_path / "models2", "--workers", "1")
    assert hashes(again) == hashes(record) and shards(again) == shards(record)
    policy_files = [s["policy"]["sha256"] for g in again["generations"] for s in g["examples"]["shards"]]
    assert policy_files == [s["policy"]["sha256"] for g in record["generations"] for s in g["examples"]["shards"]]
    damaged = tmp_path / "run" / "gen-1" / "policy" / receipt["file"]
    damaged.write_bytes(damaged.read_bytes()[:-10])
    capsys.readouterr()
    resumed = train(spec, tmp_path / "run", tmp_path / "models", "--workers", "1")
    assert "generation 1: gen-1/policy/shard-00000.parquet has changed" in capsys.readouterr().out
    assert hashes(resumed) == hashes(record)


def test_the_search_value_target_changes_the_value_and_is_recorded(tmp_path):
    """search_value = 1: the value also learns each root action's search value (the policy rows' score),
    so the model differs from the outcome-only fit of the same data, and the fit reports its held-out loss."""
    plain = policy_spec(tmp_path)
    text = plain.read_text().replace("patience = 2", "patience = 2\nsearch_value = 1")
    weighted = write(tmp_path, name="weighted.toml", text=text)
    a = train(plain, tmp_path / "a", tmp_path / "ma", "--workers", "1")
    b = train(weighted, tmp_path / "b", tmp_path / "mb", "--workers", "1")
    fa, fb = a["generations"][0]["fit"], b["generations"][0]["fit"]
    assert "search_value_loss" not in fa["policy"]
    assert fb["policy"]["search_value"] == 1 and 0 < fb["policy"]["search_value_loss"] < 5
    first = [[s["sha256"] for s in r["generations"][0]["examples"]["shards"]] for r in (a, b)]
    assert first[0] == first[1]  # generation 0: the same games and rows; only the fit differs
    assert hashes(a)[0] != hashes(b)[0]
    assert "value log loss + 1 x the search's values' log loss" in (tmp_path / "mb" / "tiny.md").read_text()


def test_ctrl_c_mid_fit_stops_quietly_and_the_resumed_training_writes_where_it_was_told(tmp_path, monkeypatch):
    """A Ctrl-C while scikit-learn fits (which catches it, warns "Training interrupted by user." and
    goes on) stops the command at once with the stop line only; `--resume` without `--models` writes
    the model into the folder the interrupted command was given, not the default datasets/models."""
    import signal
    import time

    text = SPEC.format(generations=1).replace("epochs = 4", "epochs = 100").replace("patience = 2", "patience = 100")
    spec = write(tmp_path, text=text.replace("hidden = [6]", "hidden = [64, 64]"))  # a fit of seconds
    models, run = tmp_path / "mine", tmp_path / "run"
    argv = [sys.executable, "-m", "protolab", "train", str(spec), "--out", str(run), "--models", str(models)]
    p = subprocess.Popen(
        [*argv, "--workers", "1", "--no-progress"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert p.stdout is not None
    for line in p.stdout:  # "... examples in N s; fitting": the fit has begun
        if "fitting" in line:
            break
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and time.monotonic() - t0 < 4, err  # before the stop deadline cuts it short
    assert "Training interrupted by user" not in err and "warn" not in err.lower(), err
    assert err.strip().splitlines()[-1].startswith("protolab: stopped; the finished generations are kept in")
    assert json.loads((run / "train.json").read_text())["models"] == str(models)
    monkeypatch.chdir(tmp_path)  # where the default datasets/models would be
    code = main(["train", "--resume", str(run), "--workers", "1", "--no-progress"])
    assert code == 0 and (models / "tiny.json").is_file() and (models / "tiny.md").is_file()
    assert not (tmp_path / "datasets").exists()
