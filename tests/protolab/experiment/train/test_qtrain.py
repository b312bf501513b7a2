"""`protolab train` of an action-value spec (protolab/experiment/train/qtrain.py): the model and its
card written, the same seed giving the same model, the model playing, and bad keys as one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from protolab.cli import main
from strategies.qmodel import QModel
from strategies.seats import play_games

pytest.importorskip("torch")  # the [train] extra (CI installs it with [test])

SPEC = """[qtrain]
name = "tiny_q"
seed = 7
model = "tinyq"
teacher = "learned"
games = 24
explore = 0.05
hidden = [8]
epochs = 2
batch = 32
opponents = ["greedy"]
ladder_games = 8
"""


def write(tmp_path: Path, text: str = SPEC) -> Path:
    path = tmp_path / "q.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("qtrain")
    spec = write(tmp)
    assert main(["train", str(spec), "--models", str(tmp / "m1"), "--no-progress"]) == 0
    return tmp, spec


def test_the_model_and_its_card_are_written(trained, pool):
    tmp, _ = trained
    model = QModel.load(tmp / "m1" / "tinyq.json")
    card = (tmp / "m1" / "tinyq.md").read_text()
    assert model.hash in card and "24 games of `learned`" in card and "Monte Carlo" in card
    assert "| this model vs greedy | 8 |" in card
    assert model.meta["spec"] == "tiny_q" and model.meta["data"]["games"] == 24 and model.meta["seed"] == 7
    assert sorted(p.name for p in (tmp / "m1").iterdir()) == ["tinyq.json", "tinyq.md"]
    assert [lay.weights.shape for lay in model.layers] == [(8, model.layers[0].weights.shape[1]), (1, 8)]
    cols = play_games(pool, range(1, 5), (f"qlearned:model={tmp / 'm1' / 'tinyq.json'}", "greedy"))
    assert len(cols["winner"]) == 4


def test_the_same_seed_gives_the_same_model(trained):
    tmp, spec = trained
    assert main(["train", str(spec), "--models", str(tmp / "m2"), "--no-progress"]) == 0
    a, b = (QModel.load(tmp / m / "tinyq.json") for m in ("m1", "m2"))
    assert a.hash == b.hash


@pytest.mark.parametrize(
    "old, new, key",
    [
        ("games = 24", "games = 1", "qtrain.games"),
        ("hidden = [8]", "hidden = [8, 8, 8, 8]", "qtrain.hidden"),
        ("epochs = 2", "epochs = 2\nepoch = 3", "qtrain.epoch"),
        ('teacher = "learned"', "teacher = 3", "qtrain.teacher"),
        ("seed = 7\n", "", "qtrain.seed"),
        ("epochs = 2", "epochs = 2\nvalidation = 0.9", "qtrain.validation"),
    ],
)
def test_a_bad_spec_is_one_line_naming_file_and_key(tmp_path, capsys, old, new, key):
    path = write(tmp_path, SPEC.replace(old, new, 1))
    code = main(["train", str(path), "--models", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, (code, err)
    assert f"key '{key}'" in err[0] and str(path) in err[0]
    assert not (tmp_path / "m").exists()
