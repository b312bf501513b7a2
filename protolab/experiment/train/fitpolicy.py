"""Fitting the value and the policy outputs together (a spec with `train.data.policy = true`): one
network, its hidden layers shared, its last layer two logits per position, the value ("the viewing
seat wins") and the policy logit of the line ending there. The loss is the value's log loss over the
examples plus the cross-entropy, per recorded decision, between the softmax of the policy logits of
its root actions and the search's visit shares of them; with `search_value` (a weight), plus the
value's log loss on the root actions' rows against the search's mean result after each (its score, a
soft target), each decision's rows weighted by their visit shares: the value of the lines the search
weighed, as it valued them, beside the noisier outcome of the one game played.

scikit-learn's MLP has one loss, so this fit is written in numpy: Adam on minibatches (each step a
batch of value rows and the decisions that keep the two passes in step, so an epoch passes over both),
the weights initialised and the rows shuffled from a numpy Generator seeded by the trainer, float32
sums on one BLAS thread (threadpoolctl): the same seed gives the same weights bit for bit on the same
machine and library versions. As fit.py does, it keeps the epoch of the lowest held-out loss (here
value + policy) and folds the features' standardisation into the first layer."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from protolab.experiment.train.fit import EXTRA_HINT, FitResult, FitUnavailable, log_loss, log_losses
from strategies.model import Layer

BETA1, BETA2, EPSILON = 0.9, 0.999, 1e-8  # Adam's (scikit-learn's defaults)
CHUNK = 1 << 18  # rows per forward pass when scoring the held-out rows


@dataclass(frozen=True)
class PolicyRows:
    """The policy target: one row per root action of each recorded decision, a decision's rows
    together (`start`: each decision's first row), each row's visit share of its decision."""

    x: np.ndarray  # rows x features, float32
    share: np.ndarray  # rows, the shares of a decision sum to 1
    start: np.ndarray  # decisions: the index of each one's first row
    held: np.ndarray  # decisions: held out (their game's seed is, as for the value rows)
    score: np.ndarray | None = None  # rows: the search's mean result after the action (read for search_value)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(np.append(self.start, len(self.x)))


def decision_starts(seed: np.ndarray, turn: np.ndarray, player: np.ndarray) -> np.ndarray:
    """The first row of each decision in a policy file (its rows are together: same seed, turn, player)."""
    change = (seed[1:] != seed[:-1]) | (turn[1:] != turn[:-1]) | (player[1:] != player[:-1])
    return np.flatnonzero(np.concatenate([[len(seed) > 0], change]))


def gather(pol: PolicyRows, decisions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of these decisions, in their order, and where each decision starts among them."""
    lengths = pol.lengths[decisions]
    offsets = np.cumsum(lengths) - lengths
    rows = np.repeat(pol.start[decisions] - offsets, lengths) + np.arange(int(lengths.sum()))
    return rows, offsets


def log_softmax(z: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """log softmax of z within each decision (`offsets`: where each starts in z)."""
    counts = np.diff(np.append(offsets, len(z)))
    shifted = z - np.repeat(np.maximum.reduceat(z, offsets), counts)
    return shifted - np.repeat(np.log(np.add.reduceat(np.exp(shifted), offsets)), counts)


def cross_entropy(z: np.ndarray, share: np.ndarray, offsets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean over decisions of -sum(share * log softmax(z)); and dLoss/dz."""
    logp = log_softmax(z.astype(np.float64), offsets)
    loss = -float(np.sum(share * logp)) / len(offsets)
    counts = np.diff(np.append(offsets, len(z)))
    mass = np.repeat(np.add.reduceat(share, offsets), counts)  # 1 (up to the shares' float32 rounding)
    return loss, (np.exp(logp) * mass - share) / len(offsets)


def search_value_loss(
    z: np.ndarray, score: np.ndarray, share: np.ndarray, offsets: np.ndarray
) -> tuple[float, np.ndarray]:
    """Mean over decisions of the share-weighted log loss of the value logits z against the search's
    scores (soft targets, 0 to 1); and dLoss/dz."""
    p = 1 / (1 + np.exp(-z))
    return float(np.sum(share * log_losses(p, score))) / len(offsets), share * (p - score) / len(offsets)


def top_share(z: np.ndarray, share: np.ndarray, offsets: np.ndarray) -> float:
    """Mean over decisions of the visit share of the action with the highest policy logit."""
    segment = np.repeat(np.arange(len(offsets)), np.diff(np.append(offsets, len(z))))
    order = np.lexsort((-z, segment))  # by decision, then the highest logit first
    return float(np.mean(share[order[offsets]]))


class Network:
    """The MLP's weights ([in][out], float32) with Adam's moments."""

    def __init__(self, sizes: list[int], activation: str, rng: np.random.Generator):
        self.activation = activation
        self.w: list[np.ndarray] = []
        self.b: list[np.ndarray] = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            bound = np.sqrt(6.0 / (fan_in + fan_out))  # Glorot's uniform, as scikit-learn's MLP
            self.w.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
            self.b.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
        self.moments = [(np.zeros_like(p), np.zeros_like(p)) for p in self.params()]
        self.steps = 0

    def params(self) -> list[np.ndarray]:
        return [*self.w, *self.b]

    def forward(self, x: np.ndarray) -> list[np.ndarray]:
        """Every layer's output, the input first; the last is the two logits."""
        outs = [x]
        for i, (w, b) in enumerate(zip(self.w, self.b, strict=True)):
            a = outs[-1] @ w + b
            if i < len(self.w) - 1:
                a = np.maximum(a, 0) if self.activation == "relu" else np.tanh(a)
            outs.append(a)
        return outs

    def logits(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate(
            [self.forward(x[i : i + CHUNK])[-1] for i in range(0, len(x), CHUNK)] or [np.zeros((0, 2))]
        )

    def step(self, outs: list[np.ndarray], dz: np.ndarray, l2: float, n: int, lr: float) -> None:
        """Back-propagate dLoss/dlogits, add the L2 penalty's gradient (alpha W / n), one Adam step."""
        gw: list[np.ndarray] = [np.empty(0)] * len(self.w)
        gb: list[np.ndarray] = [np.empty(0)] * len(self.w)
        d = dz.astype(np.float32)
        for i in range(len(self.w) - 1, -1, -1):
            gw[i] = outs[i].T @ d + (l2 / n) * self.w[i]
            gb[i] = d.sum(axis=0)
            if i:
                d = d @ self.w[i].T
                d = d * (outs[i] > 0) if self.activation == "relu" else d * (1 - outs[i] ** 2)
        self.steps += 1
        rate = lr * np.sqrt(1 - BETA2**self.steps) / (1 - BETA1**self.steps)
        for p, g, (m, v) in zip(self.params(), [*gw, *gb], self.moments, strict=True):
            m *= BETA1
            m += (1 - BETA1) * g
            v *= BETA2
            v += (1 - BETA2) * g * g
            p -= (rate * m / (np.sqrt(v) + EPSILON)).astype(np.float32)

    def export(self, mu: np.ndarray, sd: np.ndarray) -> list[Layer]:
        """The player's layers ([out][in], float64), the standardisation folded into the first."""
        layers = []
        for i, (w, b) in enumerate(zip(self.w, self.b, strict=True)):
            w, b = np.asarray(w, np.float64).T.copy(), np.asarray(b, np.float64).copy()
            if i == 0:
                b = b - w @ (mu / sd)
                w = w / sd[None, :]
            layers.append(Layer(w, b, "linear" if i == len(self.w) - 1 else self.activation))
        return layers


def standardised(x: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """(x - mu) / sd as float32, a block of rows at a time (no float64 copy of the whole)."""
    out = np.empty(x.shape, np.float32)
    for i in range(0, len(x), CHUNK):
        out[i : i + CHUNK] = (x[i : i + CHUNK] - mu) / sd
    return out


def held_out_losses(net: Network, xv: np.ndarray, yv: np.ndarray, pol: PolicyRows, px: np.ndarray) -> dict[str, float]:
    """The value's log loss on the held-out examples and the policy's on the held-out decisions."""
    z = net.logits(xv)[:, 0].astype(np.float64) if len(xv) else np.zeros(0)
    value = log_loss(1 / (1 + np.exp(-z)), yv) if len(yv) else float("nan")
    decisions = np.flatnonzero(pol.held)
    rows, offsets = gather(pol, decisions)
    if not len(decisions):
        none = float("nan")
        return {"value": value, "policy": none, "uniform": none, "top_share": none, "search_value": none}
    both = net.logits(px[rows]).astype(np.float64)
    zp = both[:, 1]
    share = pol.share[rows].astype(np.float64)
    policy, _ = cross_entropy(zp, share, offsets)
    uniform = float(np.mean(np.log(pol.lengths[decisions])))  # every action alike (the shares sum to 1)
    searched = (
        search_value_loss(both[:, 0], pol.score[rows].astype(np.float64), share, offsets)[0]
        if pol.score is not None
        else float("nan")
    )
    return {
        "value": value,
        "policy": policy,
        "uniform": uniform,
        "top_share": top_share(zp, share, offsets),
        "search_value": searched,
    }


def train_step(
    net: Network,
    xv: np.ndarray,
    yv: np.ndarray,
    xp: np.ndarray,
    share: np.ndarray,
    offsets: np.ndarray,
    settings: Any,
    score: np.ndarray | None = None,
) -> float:
    """One Adam step on a batch: examples `xv` with results `yv` (the value's log loss) and the policy
    rows `xp` of whole decisions, cut at `offsets`, with their visit shares (the policy's cross-entropy)
    and, with `score` (given when the fit has a search_value weight), the search's values of those rows
    (the value's second loss); returns the batch's loss."""
    outs = net.forward(np.concatenate([xv, xp]))
    z = outs[-1].astype(np.float64)
    nv = len(xv)
    p = 1 / (1 + np.exp(-z[:nv, 0]))
    dz = np.zeros_like(z)
    dz[:nv, 0] = (p - yv) / nv
    loss = log_loss(p, yv)
    if len(offsets):
        policy, dz[nv:, 1] = cross_entropy(z[nv:, 1], share, offsets)
        loss += policy
        if score is not None:
            searched, grad = search_value_loss(z[nv:, 0], score, share, offsets)
            dz[nv:, 0] = settings.search_value * grad
            loss += settings.search_value * searched
    net.step(outs, dz, settings.l2, nv, settings.learning_rate)
    return loss


@dataclass(frozen=True)
class _Rows:
    """A fit's rows, standardised by the training value rows' mean and spread (`mu`, `sd`)."""

    xt: np.ndarray  # the training value rows
    yt: np.ndarray  # their results
    xv: np.ndarray  # the held-out value rows
    yv: np.ndarray  # their results
    px: np.ndarray  # every policy row
    share: np.ndarray  # their visit shares
    score: np.ndarray | None  # their search values, with a search_value weight (else None)
    train_decisions: np.ndarray  # the decisions not held out
    mu: np.ndarray
    sd: np.ndarray


def _standardised_rows(x: np.ndarray, y: np.ndarray, held: np.ndarray, pol: PolicyRows, weight: float) -> _Rows:
    xt = np.asarray(x[~held], np.float64)
    mu, sd = xt.mean(axis=0), xt.std(axis=0)
    sd[sd < 1e-9] = 1.0
    return _Rows(
        standardised(xt, mu, sd),
        np.asarray(y[~held], np.float64),
        standardised(x[held], mu, sd),
        np.asarray(y[held], np.float64),
        standardised(pol.x, mu, sd),
        pol.share.astype(np.float64),
        pol.score.astype(np.float64) if weight and pol.score is not None else None,
        np.flatnonzero(~pol.held),
        mu,
        sd,
    )


def _epoch(net: Network, r: _Rows, pol: PolicyRows, settings: Any, rng: np.random.Generator) -> float:
    """One pass over the training rows and decisions, each in a fresh order; the mean batch loss."""
    steps = max(1, -(-len(r.yt) // settings.batch))
    per_step = -(-len(r.train_decisions) // steps)
    values, decisions = rng.permutation(len(r.yt)), rng.permutation(r.train_decisions)
    total = 0.0
    for k in range(steps):
        vi = values[k * settings.batch : (k + 1) * settings.batch]
        rows, offsets = gather(pol, decisions[k * per_step : (k + 1) * per_step])
        scores = r.score[rows] if r.score is not None else None
        total += train_step(net, r.xt[vi], r.yt[vi], r.px[rows], r.share[rows], offsets, settings, scores)
    return total / steps


def _selection_loss(val: dict[str, float], weight: float | None) -> float:
    """The held-out loss an epoch is kept by: value + policy (0 without a held-out decision), plus
    the weighted search value loss when the fit has one (`weight`)."""
    both = val["value"] + (val["policy"] if np.isfinite(val["policy"]) else 0.0)
    if weight is not None and np.isfinite(val["search_value"]):
        both += weight * val["search_value"]
    return both


# The epoch kept: (its selection loss, epoch, training loss, held-out losses, exported layers).
_Best = tuple[float, int, float, dict[str, float], list[Layer]]


def _train(
    net: Network, r: _Rows, pol: PolicyRows, settings: Any, rng: np.random.Generator
) -> tuple[_Best, list[dict[str, float]]]:
    """Epochs until `settings.epochs` or `patience` epochs without a better held-out loss: the best
    epoch and the learning curve."""
    weight = settings.search_value if r.score is not None else None
    best: _Best | None = None
    curve: list[dict[str, float]] = []
    for epoch in range(1, settings.epochs + 1):
        train_loss = _epoch(net, r, pol, settings, rng)
        val = held_out_losses(net, r.xv, r.yv, pol, r.px)
        both = _selection_loss(val, weight)
        curve.append(
            {"epoch": epoch, "train_loss": train_loss, "val_loss": val["value"], "val_policy": val["policy"]}
            | ({"val_search_value": val["search_value"]} if weight is not None else {})
        )
        if best is None or both < best[0] - 1e-6:
            best = (both, epoch, train_loss, val, net.export(r.mu, r.sd))
        elif epoch - best[1] >= settings.patience:
            break
    assert best is not None
    return best, curve


def fit_policy_mlp(
    x: np.ndarray,
    y: np.ndarray,
    held: np.ndarray,
    pol: PolicyRows,
    hidden: tuple[int, ...],
    activation: str,
    settings: Any,
    seed: int,
) -> FitResult:
    """Fit the two outputs on the examples and decisions not held out, one epoch at a time, keeping the
    weights of the epoch with the lowest held-out value + policy loss (stopped after `patience`)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        raise FitUnavailable(EXTRA_HINT) from None
    t0 = time.monotonic()
    r = _standardised_rows(x, y, held, pol, settings.search_value)
    rng = np.random.default_rng(seed)
    net = Network([x.shape[1], *hidden, 2], activation, rng)
    with threadpool_limits(limits=1):
        best, curve = _train(net, r, pol, settings, rng)
    _, best_epoch, train_loss, val, layers = best
    zv = best_value_logits(layers, x[held])
    yv, searched = r.yv, r.score is not None
    return FitResult(
        layers,
        len(curve),
        best_epoch,
        train_loss,
        val["value"],
        float(np.mean((zv > 0) == (yv > 0.5))) if len(yv) else float("nan"),
        log_loss(np.full(len(yv), float(np.mean(r.yt))), yv),
        curve,
        round(time.monotonic() - t0, 2),
        {
            "train": int(len(r.yt)),
            "held_out": int(len(yv)),
            "policy_decisions": int(len(r.train_decisions)),
            "policy_held_out": int(pol.held.sum()),
        },
        policy={"val_loss": val["policy"], "uniform_loss": val["uniform"], "top_share": val["top_share"]}
        | ({"search_value_loss": val["search_value"], "search_value": settings.search_value} if searched else {}),
    )


def best_value_logits(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    """The exported layers' value logits on raw features (the held-out accuracy)."""
    h = np.asarray(x, np.float64)
    for lay in layers:
        h = h @ lay.weights.T + lay.bias
        h = np.maximum(h, 0) if lay.activation == "relu" else np.tanh(h) if lay.activation == "tanh" else h
    return h[:, 0]
