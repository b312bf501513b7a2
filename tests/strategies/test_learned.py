"""The learned player (strategies/_learned.pyx): its features (honest, one declaration), its
examples (the trainer's rows), its model files (strict, one-line errors) and its play
(deterministic; a card made strictly stronger is not measured weaker)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures_strategies.positions import positions
from strategies._features import FEATURE_DIGEST, FEATURES, VECTOR_LENGTH, FeatureProbe

from sim.pool import load_pool
from strategies.learned import examples, features_of
from strategies.model import Model, ModelError, load_model
from strategies.seats import play_games
from strategies.spec import StrategyError, make_seat


@pytest.fixture(scope="module")
def rows(pool):
    return examples(pool, np.arange(1, 301), ("greedy", "greedy"), explore=0.1)


@pytest.fixture(scope="module")
def fitted(rows, tmp_path_factory):
    """The loop closes: a logistic fit (Newton steps in numpy) of the examples' outcomes on their
    features is a model the player loads and plays."""
    x = np.hstack([rows["features"].astype(np.float64), np.ones((len(rows["outcome"]), 1))])
    y = rows["outcome"].astype(np.float64)
    w = np.zeros(x.shape[1])
    for _ in range(8):
        p = 1 / (1 + np.exp(-x @ w))
        hess = (x * (p * (1 - p))[:, None]).T @ x + 1e-2 * np.eye(len(w))
        w -= np.linalg.solve(hess, x.T @ (p - y))
    model = Model.from_arrays(
        [(w[None, :-1].astype(np.float32), w[-1:].astype(np.float32), "linear")],
        {"made_by": "tests/strategies/test_learned.py (logistic fit, 300 greedy games)"},
    )
    path = tmp_path_factory.mktemp("model") / "fit.json"
    model.save(path)
    return path, model


def test_features_are_declared_once_and_match_the_c_vector(pool):
    assert len(FEATURES) == VECTOR_LENGTH == len(set(FEATURES))
    g = positions(pool, n_games=1)[0]
    probe = FeatureProbe(g.pending().player)
    g.core.decide_with(probe.seat)
    assert probe.written() == len(FEATURES)
    v = features_of(g, g.pending().player)
    assert v.shape == (len(FEATURES),) and v.dtype == np.float32 and np.isfinite(v).all()
    assert len(FEATURE_DIGEST) == 16


def test_features_see_only_the_seats_view(pool):
    """Re-dealing what the deciding seat cannot see never changes its vector; its opponent's
    vector (which reads that opponent's hand) does change somewhere: the check can fail."""
    changed = 0
    for g in positions(pool):
        p = g.pending().player
        mine = features_of(g, p)
        for k in range(3):
            np.testing.assert_array_equal(features_of(g, p, permute_seed=k), mine)
            changed += not np.array_equal(features_of(g, 1 - p, permute_seed=k), features_of(g, 1 - p))
    assert changed > 0


def test_examples_are_rows_of_turn_ends(rows, pool):
    n = len(rows["seed"])
    assert n > 300 * 10
    assert rows["features"].shape == (n, len(FEATURES)) and rows["features"].dtype == np.float32
    assert rows["seed"].dtype == np.uint64 and rows["turn"].dtype == np.int16 and rows["player"].dtype == np.int8
    assert set(np.unique(rows["outcome"])) <= {0.0, 0.5, 1.0}
    # both views of each turn end, and their results add up to one
    assert (rows["player"][0::2] == 0).all() and (rows["player"][1::2] == 1).all()
    np.testing.assert_array_equal(rows["outcome"][0::2] + rows["outcome"][1::2], 1.0)
    again = examples(pool, np.arange(1, 21), ("greedy", "greedy"), explore=0.1)
    first = rows["seed"] <= 20
    np.testing.assert_array_equal(again["features"], rows["features"][first])
    plain = examples(pool, np.arange(1, 21), ("greedy", "greedy"))
    assert len(plain["seed"]) != len(again["seed"]) or not np.array_equal(plain["features"], again["features"])


def test_a_fitted_model_predicts_and_plays(fitted, rows, pool):
    path, model = fitted
    p = model.predict(rows["features"])
    y = rows["outcome"]
    late = rows["turn"] > 20
    assert ((p[late] > 0.5) == (y[late] > 0.5)).mean() > 0.6
    spec = f"learned:model={path}"
    out = play_games(pool, range(40), (spec, "random"))
    assert (out["winner"] == 0).mean() > 0.7


def test_model_round_trips_to_the_same_bytes(fitted, tmp_path):
    path, model = fitted
    again = Model.load(path)
    again.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert again.hash == model.hash and len(again.hash) == 12
    assert load_model("learned").hash  # the shipped model loads


def _broken(fitted, tmp_path, change):
    raw = json.loads(fitted[0].read_text())
    change(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    return path


@pytest.mark.parametrize(
    "change, key",
    [
        (lambda r: r.update(extra=1), "extra"),
        (lambda r: r.pop("layers"), "layers"),
        (lambda r: r["layers"][0]["weights"][0].pop(), "layers[0].weights[0]"),
        (lambda r: r["layers"][0]["bias"].__setitem__(0, "x"), "layers[0].bias[0]"),
        (lambda r: r["layers"][0].update(activation="gelu"), "layers[0].activation"),
        (lambda r: r["features"].__setitem__(3, "peek"), "features[3]"),
        (lambda r: r.update(feature_digest="0" * 16), "feature_digest"),
    ],
)
def test_a_bad_model_file_is_one_line_naming_file_and_key(fitted, tmp_path, change, key):
    path = _broken(fitted, tmp_path, change)
    with pytest.raises(ModelError) as e:
        Model.load(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg and f"key '{key}'" in msg


def test_non_finite_corrupt_and_missing_model_files(fitted, tmp_path):
    text = fitted[0].read_text()
    bad = _broken(fitted, tmp_path, lambda r: r["layers"][0]["bias"].__setitem__(0, float("nan")))
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text(text[: len(text) // 2])
    for path, words in ((bad, "finite"), (corrupt, "not valid JSON"), (tmp_path / "none.json", "no such file")):
        with pytest.raises(ModelError) as e:
            Model.load(path)
        assert words in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(StrategyError):
        make_seat(f"learned:model={tmp_path / 'none.json'}", None)


def test_a_bad_model_through_the_cli_is_one_line_and_exit_2(fitted, tmp_path):
    path = _broken(fitted, tmp_path, lambda r: r["layers"][0]["weights"].pop())
    proc = subprocess.run(
        [sys.executable, "-m", "protolab", "bench", "--strategy", f"learned:model={path}", "--games", "10"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "layers[0].weights" in lines[0]


def test_learned_play_is_deterministic(pool):
    a = play_games(pool, range(30), ("learned", "greedy"))
    b = play_games(pool, range(30), ("learned", "greedy"))
    for k in ("winner", "turns", "plays_up", "plays_down", "compile_turn"):
        np.testing.assert_array_equal(a[k], b[k])


def test_a_card_made_stronger_is_not_measured_weaker(tmp_path):
    """Fire 1 worth 3 (datasets/experiments/variants): Fire's win rate under learned play against
    greedy, on paired seeds and fixed matchups, does not drop significantly."""
    variant = Path(__file__).resolve().parents[2] / "datasets/experiments/variants/fire1_worth_3.toml"
    rates = []
    matchups = [
        [["Fire", "Water", "Death"], ["Light", "Life", "Gravity"]],
        [["Fire", "Speed", "Hate"], ["Psychic", "Spirit", "Metal"]],
    ]
    for cards in ((), (str(variant),)):
        p = load_pool(cards=cards)
        ab = play_games(p, range(150), ("learned", "learned"), protocols=matchups)
        rates.append(((ab["winner"] == 0) + 0.5 * (ab["winner"] == 2)).astype(float))
    diff = rates[1] - rates[0]
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    assert diff.mean() > -2 * se, (diff.mean(), se)


def test_the_model_plans_the_choices_before_its_action_and_on_the_opponents_turn(pool):
    """Issue 35: at each turn's start (the engine's turn hook) the learned seat plans the choices it
    will be asked before its action (Start-phase effects, the line to compile) and on the opponent's
    turn, and the real game follows that plan: without the hook both counts stay 0."""
    from sim.engine._core import SeatConfig

    from sim.batch import play_columns
    from strategies.spec import learned_player

    player, seat = learned_player({}), SeatConfig()
    player.install(seat)
    play_columns(pool, np.arange(1, 41, dtype=np.uint64), (seat, make_seat("greedy", pool)))
    before, theirs = player.turn_plan_counts()
    assert before > 0 and theirs > 0
