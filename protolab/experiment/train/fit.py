"""Fitting the value network: scikit-learn's MLPClassifier (log loss, Adam) on the examples'
features, one epoch at a time, stopped on the loss of held-out games; the weights come out as the
player's layers (weights [out][in], bias, activation), with the features' standardisation folded
into the first layer so that the player reads raw features.

scikit-learn is the optional extra `pip install -e ".[train]"`: it is imported inside `fit_mlp`,
so that nothing but `protolab train` ever loads it (playing a model needs only numpy and the C
player). The fit runs on one thread (threadpoolctl), so a seed gives the same weights bit for bit
on the same machine and library versions."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protolab.experiment import stopnote
from strategies.model import Layer

EXTRA_HINT = 'protolab train needs the optional extra: pip install -e ".[train]" (or pip install scikit-learn)'


class FitUnavailable(ImportError):
    """scikit-learn is not installed."""


@dataclass
class FitResult:
    layers: list[Layer]
    epochs: int  # epochs run (the best one's weights are kept)
    best_epoch: int
    train_loss: float  # the best epoch's mean training log loss (Adam's running)
    val_loss: float  # log loss on the held-out games
    val_accuracy: float
    base_loss: float  # log loss of always predicting the training mean
    curve: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    rows: dict[str, int] = field(default_factory=dict)
    # a fit with the policy target (fitpolicy.py): the held-out policy cross-entropy, that of a uniform
    # policy, and the mean visit share of the action the policy ranks first
    policy: dict[str, float] = field(default_factory=dict)


def libraries() -> dict[str, str]:
    """The versions the fit depends on (recorded in train.json and the model card)."""
    try:
        import sklearn
        import threadpoolctl
    except ImportError:
        raise FitUnavailable(EXTRA_HINT) from None
    return {"scikit-learn": sklearn.__version__, "threadpoolctl": threadpoolctl.__version__, "numpy": np.__version__}


def _with_draws(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Draws (0.5) count half: each draw row is taken once as a win and once as a loss."""
    draw = y == 0.5
    if not draw.any():
        return x, y.astype(np.int64)
    return (
        np.concatenate([x[~draw], x[draw], x[draw]]),
        np.concatenate([y[~draw], np.ones(draw.sum()), np.zeros(draw.sum())]).astype(np.int64),
    )


def log_losses(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each row's log loss of probability p against target y (0 to 1: a draw or a soft target)."""
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(log_losses(p, y)))


def _export(clf: Any, mu: np.ndarray, sd: np.ndarray, activation: str) -> list[Layer]:
    """The classifier's layers as [out][in], with x -> (x - mu) / sd folded into the first one."""
    layers = []
    n = len(clf.coefs_)
    for i, (w, b) in enumerate(zip(clf.coefs_, clf.intercepts_, strict=True)):
        w, b = np.asarray(w, np.float64).T.copy(), np.asarray(b, np.float64).copy()
        if i == 0:
            b = b - w @ (mu / sd)
            w = w / sd[None, :]
        layers.append(Layer(w, b, "linear" if i == n - 1 else activation))
    return layers


def _classifier(hidden: tuple[int, ...], activation: str, settings: Any, seed: int):
    try:
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise FitUnavailable(EXTRA_HINT) from None
    return MLPClassifier(
        hidden_layer_sizes=hidden,
        activation=activation,
        solver="adam",
        alpha=settings.l2,
        batch_size=settings.batch,
        learning_rate_init=settings.learning_rate,
        max_iter=1,
        shuffle=True,
        random_state=seed % 2**32,
    )


def _epoch(clf: Any, x: np.ndarray, y: np.ndarray) -> None:
    """One epoch of partial_fit. scikit-learn catches a Ctrl-C inside it, warns "Training
    interrupted by user." and returns as if the epoch had ended: the warning is silenced and the
    stop, noted by protolab's handler (stopnote), raised again here, so the command stops."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Training interrupted by user")
        clf.partial_fit(x, y, classes=np.array([0, 1]))
    if stopnote.stop_requested():
        raise KeyboardInterrupt


def fit_mlp(
    x: np.ndarray, y: np.ndarray, held: np.ndarray, hidden: tuple[int, ...], activation: str, settings: Any, seed: int
) -> FitResult:
    """Fit on the rows not `held`, one epoch per partial_fit, keeping the weights of the epoch with
    the lowest held-out log loss and stopping after `settings.patience` epochs without a new best."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        raise FitUnavailable(EXTRA_HINT) from None
    t0 = time.monotonic()
    x = np.asarray(x, np.float64)
    xt, yt = _with_draws(x[~held], y[~held])
    xv, yv = x[held], y[held].astype(np.float64)
    mu = xt.mean(axis=0)
    sd = xt.std(axis=0)
    sd[sd < 1e-9] = 1.0
    # scikit-learn keeps float32 input in float32: half the work of float64, and as repeatable
    xt_s, xv_s = ((xt - mu) / sd).astype(np.float32), ((xv - mu) / sd).astype(np.float32)
    clf = _classifier(hidden, activation, settings, seed)
    best: tuple[float, int, float, float, list[Layer]] | None = None
    curve: list[dict[str, float]] = []
    with threadpool_limits(limits=1):
        for epoch in range(1, settings.epochs + 1):
            _epoch(clf, xt_s, yt)
            p = clf.predict_proba(xv_s)[:, 1]
            loss = log_loss(p, yv)
            acc = float(np.mean((p > 0.5) == (yv > 0.5))[()]) if len(yv) else float("nan")
            curve.append({"epoch": epoch, "train_loss": float(clf.loss_), "val_loss": loss})
            if best is None or loss < best[0] - 1e-6:
                best = (loss, epoch, float(clf.loss_), acc, _export(clf, mu, sd, activation))
            elif epoch - best[1] >= settings.patience:
                break
    assert best is not None
    base = log_loss(np.full(len(yv), float(np.mean(yt))), yv)
    return FitResult(
        best[4],
        len(curve),
        best[1],
        best[2],
        best[0],
        best[3],
        base,
        curve,
        round(time.monotonic() - t0, 2),
        {"train": int(len(yt)), "held_out": int(len(yv))},
    )
