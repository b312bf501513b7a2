"""The action-value player (strategies/_qlearned.pyx, strategies/qmodel.py): its inputs (shape,
honesty), C inference against the plain computation, determinism, and the model file's checks."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from fixtures_strategies.positions import positions
from strategies._qlearned import ACTION_LENGTH, QLearned, QProbe

from strategies.declared import ACTION_FEATURES, FEATURES
from strategies.model import Model, ModelError
from strategies.qexamples import qexamples
from strategies.qmodel import NIN, QModel
from strategies.seats import play_games
from strategies.spec import StrategyError, make_seat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from play_hash import columns_hash  # noqa: E402


def random_model(seed: int = 0, hidden: tuple[int, ...] = (24, 8)) -> QModel:
    rng = np.random.default_rng(seed)
    sizes = (NIN, *hidden, 1)
    layers = [
        (rng.normal(0, 0.4, (b, a)), rng.normal(0, 0.1, b), "relu" if i < len(hidden) else "linear")
        for i, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False))
    ]
    return QModel.from_arrays(layers)


def action_positions(pool):
    return [g for g in positions(pool) if g.pending().kind == "action" and len(g.pending().options) >= 2]


@pytest.fixture(scope="module")
def qfile(tmp_path_factory):
    path = tmp_path_factory.mktemp("q") / "q.json"
    random_model().save(path)
    return path


def test_inputs_have_the_declared_shape(pool):
    assert ACTION_LENGTH == len(ACTION_FEATURES)
    seen = 0
    for g in action_positions(pool):
        probe = QProbe()
        g.core.decide_with(probe.seat)
        out = probe.result()
        assert out["inputs"].shape == (len(g.pending().options), len(FEATURES) + len(ACTION_FEATURES))
        assert np.isfinite(out["inputs"]).all() and np.abs(out["inputs"]).max() <= 4
        act = out["inputs"][:, len(FEATURES) :]
        refresh = act[:, ACTION_FEATURES.index("action_refresh")] == 1
        assert (act[refresh, 1:] == 0).all()  # a refresh is only its flag
        plays = ~refresh
        lines = act[plays][:, [ACTION_FEATURES.index(f"action_line{i}") for i in range(3)]]
        assert (lines.sum(1) == 1).all()  # a play lands in exactly one line
        seen += 1
    assert seen >= 8


def test_inputs_are_honest(pool):
    """Re-dealing what the deciding seat cannot see (the opponent's hand, both decks, face-down
    identities) changes none of its inputs."""
    checked = 0
    for g in action_positions(pool):
        base = QProbe()
        g.core.decide_with(base.seat)
        for k in range(3):
            probe = QProbe()
            g.core.decide_with(probe.seat, permute_seed=k)
            assert np.array_equal(probe.result()["inputs"], base.result()["inputs"]), (g.seed, k)
        checked += 1
    assert checked >= 8


def test_c_inference_equals_the_plain_computation(pool):
    model = random_model(3)
    player = QLearned([(lay.weights, lay.bias, lay.activation) for lay in model.layers], model.hash, 0.0)
    checked = 0
    for g in action_positions(pool):
        probe = QProbe(player)
        g.core.decide_with(probe.seat)
        out = probe.result()
        assert np.allclose(out["logits"], model.logits(out["inputs"]), rtol=1e-5, atol=1e-5)
        checked += 1
    assert checked >= 8


def test_the_player_is_deterministic_and_plays_whole_games(pool, qfile):
    spec = f"qlearned:model={qfile}"
    a = play_games(pool, range(1, 41), (spec, "greedy"))
    b = play_games(pool, range(1, 41), (spec, "greedy"))
    assert columns_hash(a) == columns_hash(b)
    other = random_model(7)
    path = qfile.parent / "other.json"
    other.save(path)
    c = play_games(pool, range(1, 41), (f"qlearned:model={path}", "greedy"))
    assert columns_hash(c) != columns_hash(a)  # the network decides the games


def test_qlearned_is_honest(pool, qfile):
    seat = make_seat(f"qlearned:model={qfile}", pool)
    for g in positions(pool):
        base = g.core.decide_with(seat)
        for k in range(3):
            assert g.core.decide_with(seat, permute_seed=k) == base, (g.seed, g.pending())


def test_examples_rows(pool):
    rows = qexamples(pool, range(1, 6), ("learned", "greedy"), explore=0.0)
    n = len(rows["seed"])
    assert rows["inputs"].shape == (n, NIN) and n > 100
    learned = rows["player"] == 0
    assert (rows["teacher"][learned] >= 0).all()  # the learned seat tells its value of every action
    assert (rows["teacher"][~learned] == -1).all()  # greedy's evaluations are no win probabilities
    per_decision = np.bincount(rows["decision"], weights=rows["taken"])
    assert (per_decision == 1).all()  # one action played per decision
    again = qexamples(pool, range(1, 6), ("learned", "greedy"), explore=0.0)
    assert all(np.array_equal(rows[k], again[k]) for k in rows)


def _raw() -> dict:
    return json.loads(random_model().to_bytes())


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda r: r.pop("action_digest"), "key 'action_digest': missing"),
        (lambda r: r.update(kind="value"), "key 'kind': expected 'action-value'"),
        (lambda r: r.update(version=2), "key 'version': expected 1"),
        (lambda r: r["action_features"].__setitem__(3, "x"), "key 'action_features[3]'"),
        (lambda r: r["layers"][0]["weights"][0].pop(), "key 'layers[0].weights[0]': expected a row of"),
        (lambda r: r["layers"][-1]["weights"].append(r["layers"][-1]["weights"][0]), "key 'layers[2].weights'"),
        (lambda r: r.update(extra=1), "key 'extra': expected no such key"),
        (lambda r: r["layers"][1]["bias"].__setitem__(0, "nan"), "key 'layers[1].bias[0]'"),
    ],
)
def test_model_file_errors_name_the_file_and_key(tmp_path, change, says):
    raw = _raw()
    change(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(ModelError) as e:
        QModel.load(path)
    assert str(path) in str(e.value) and says in str(e.value) and "\n" not in str(e.value)


def test_the_kinds_are_told_apart(tmp_path, qfile):
    with pytest.raises(ModelError, match="key 'kind': expected no kind"):
        Model.load(qfile)
    with pytest.raises(ModelError, match="key 'kind': missing"):
        QModel.load(Path(__file__).resolve().parents[2] / "datasets/models/learned.json")


def test_spec_errors(pool, qfile):
    with pytest.raises(StrategyError, match="explore"):
        make_seat(f"qlearned:model={qfile},explore=2", pool)
    with pytest.raises(ModelError, match="no such file"):
        make_seat("qlearned:model=/nonexistent/q.json", pool)
