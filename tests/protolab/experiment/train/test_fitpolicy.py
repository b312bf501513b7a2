"""The policy target's fit (protolab/experiment/train/fitpolicy.py): on a planted toy problem it learns
both outputs (the policy's held-out cross-entropy falls well below a uniform policy's, the value's
log loss below a constant's), repeats bit for bit for a seed, and its model carries both outputs;
with search_value, the value also learns the search's scores of the policy rows."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from strategies._features import FEATURES

from protolab.experiment.train.fitpolicy import (
    PolicyRows,
    cross_entropy,
    decision_starts,
    fit_policy_mlp,
    search_value_loss,
)
from protolab.experiment.train.trainspec import Fit
from strategies.model import Model

SETTINGS = Fit(epochs=12, batch=64, learning_rate=0.01, l2=1e-4, validation=0.1, patience=4)


def planted(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, PolicyRows]:
    """Values won when feature 0 is high; each decision's visits follow softmax(2 * feature 1) of its actions."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (1500, len(FEATURES))).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.float64)
    held = np.arange(len(y)) % 10 == 0
    lengths = rng.integers(2, 9, 400)
    px = rng.normal(0.0, 1.0, (int(lengths.sum()), len(FEATURES))).astype(np.float32)
    decision = np.repeat(np.arange(len(lengths)), lengths)
    e = np.exp(2.0 * px[:, 1].astype(np.float64))
    share = (e / np.bincount(decision, e)[decision]).astype(np.float32)
    start = decision_starts(decision.astype(np.uint64), np.zeros(len(decision), np.int16), np.zeros(len(decision)))
    return x, y, held, PolicyRows(px, share, start, np.arange(len(lengths)) % 10 == 0)


def test_decision_starts_and_the_cross_entropy_gradient():
    seed = np.array([5, 5, 5, 7, 7, 9], np.uint64)
    assert decision_starts(seed, np.array([1, 1, 2, 1, 1, 1]), np.zeros(6)).tolist() == [0, 2, 3, 5]
    z, share, offsets = np.array([0.3, -1.0, 2.0, 0.5, 0.1]), np.array([0.2, 0.8, 1.0, 0.6, 0.4]), np.array([0, 2, 3])
    loss, grad = cross_entropy(z, share, offsets)
    step = 1e-6
    numeric = [(cross_entropy(z + step * np.eye(5)[i], share, offsets)[0] - loss) / step for i in range(5)]
    assert np.allclose(grad, numeric, atol=1e-5) and abs(grad[2]) < 1e-12  # a one-action decision teaches nothing


def test_the_fit_learns_the_planted_policy_and_value_and_repeats_bit_for_bit():
    x, y, held, pol = planted()
    a, b = (fit_policy_mlp(x, y, held, pol, (8,), "relu", SETTINGS, seed=3) for _ in range(2))
    assert all(
        (la.weights == lb.weights).all() and (la.bias == lb.bias).all()
        for la, lb in zip(a.layers, b.layers, strict=True)
    )
    assert a.layers[-1].weights.shape == (2, 8) and a.layers[-1].activation == "linear"
    assert a.policy["val_loss"] < 0.6 * a.policy["uniform_loss"], a.policy
    assert a.val_loss < a.base_loss / 2 and a.val_accuracy > 0.9
    model = Model.from_arrays([(la.weights, la.bias, la.activation) for la in a.layers], outputs=("value", "policy"))
    rows = np.flatnonzero(np.repeat(pol.held, pol.lengths))
    offsets = np.flatnonzero(np.diff(np.append(-1, np.repeat(np.arange(len(pol.start)), pol.lengths)[rows])))
    loss, _ = cross_entropy(model.policy_logits(pol.x[rows]), pol.share[rows].astype(np.float64), offsets)
    assert abs(loss - a.policy["val_loss"]) < 1e-3  # the saved model's policy is the one measured
    other = fit_policy_mlp(x, y, held, pol, (8,), "relu", SETTINGS, seed=4)
    assert not (other.layers[0].weights == a.layers[0].weights).all()


def test_the_search_value_gradient_weighs_each_row_by_its_share():
    z, score = np.array([0.3, -1.0, 2.0, 0.5, 0.1]), np.array([0.9, 0.1, 0.5, 0.7, 0.0])
    share, offsets = np.array([0.2, 0.8, 1.0, 0.0, 1.0]), np.array([0, 2, 3])
    loss, grad = search_value_loss(z, score, share, offsets)
    step = 1e-6
    numeric = [(search_value_loss(z + step * np.eye(5)[i], score, share, offsets)[0] - loss) / step for i in range(5)]
    assert np.allclose(grad, numeric, atol=1e-5) and grad[3] == 0  # an action never visited teaches nothing


def test_the_search_value_teaches_the_value_the_searchs_scores():
    """Planted: the outcomes follow feature 0, the search's scores of the policy rows feature 2. With a
    weight the value on the held-out policy rows follows the scores; without one it does not."""
    x, y, held, pol = planted()
    score = (1 / (1 + np.exp(-3.0 * pol.x[:, 2].astype(np.float64)))).astype(np.float32)
    scored = replace(pol, score=score)
    rows = np.repeat(pol.held, pol.lengths)
    fits = {
        w: fit_policy_mlp(x, y, held, scored, (8,), "relu", replace(SETTINGS, search_value=w), seed=3) for w in (0, 5)
    }
    corr = {}
    for w, fit in fits.items():
        model = Model.from_arrays(
            [(la.weights, la.bias, la.activation) for la in fit.layers], outputs=("value", "policy")
        )
        corr[w] = np.corrcoef(model.predict(pol.x[rows]), score[rows])[0, 1]
    assert corr[5] > 0.8 and corr[0] < 0.3, corr
    assert "search_value_loss" in fits[5].policy and "search_value_loss" not in fits[0].policy
