"""Fit a learned player's model from greedy games with numpy alone (deterministic for a seed): the
bootstrap model shipped as datasets/models/learned.json until `protolab train` replaces it.

    python benchmarks/fit_model.py --games 8000 --seed 1 --out datasets/models/learned.json

Examples: `strategies.learned.examples` on the default pool (four sets, random drafts), greedy
against greedy with `--explore` uniform actions; a one-hidden-layer MLP (relu) trained with Adam
on the log loss of each turn end's result, full passes over shuffled mini-batches."""

from __future__ import annotations

import argparse
import os
import platform
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread: the same sums in the same order
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

from sim.pool import load_pool  # noqa: E402
from strategies.learned import examples  # noqa: E402
from strategies.model import Model  # noqa: E402


def fit_mlp(
    x: np.ndarray,
    y: np.ndarray,
    hidden: int,
    epochs: int,
    seed: int,
    lr: float = 3e-3,
    batch: int = 1024,
    l2: float = 1e-5,
) -> list[tuple[np.ndarray, np.ndarray, str]]:
    """Weights of x -> relu(hidden) -> logit, minimising the log loss of y (0..1) by Adam."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    w1 = (rng.standard_normal((hidden, d)) * np.sqrt(2.0 / d)).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = (rng.standard_normal((1, hidden)) * np.sqrt(1.0 / hidden)).astype(np.float32)
    b2 = np.zeros(1, np.float32)
    params = [w1, b1, w2, b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    for _ in range(epochs):
        order = rng.permutation(n)
        for s in range(0, n, batch):
            idx = order[s : s + batch]
            xb, yb = x[idx], y[idx]
            h = xb @ w1.T + b1
            a = np.maximum(h, 0)
            z = (a @ w2.T + b2)[:, 0]
            p = 1 / (1 + np.exp(-z))
            dz = (p - yb)[:, None] / len(idx)
            g_w2 = dz.T @ a + l2 * w2
            g_b2 = dz.sum(0)
            da = dz @ w2 * (h > 0)
            g_w1 = da.T @ xb + l2 * w1
            g_b1 = da.sum(0)
            step += 1
            for i, g in enumerate((g_w1, g_b1, g_w2, g_b2)):
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                params[i] -= lr * (m[i] / (1 - 0.9**step)) / (np.sqrt(v[i] / (1 - 0.999**step)) + 1e-8)
    return [
        (w1.astype(np.float32), b1.astype(np.float32), "relu"),
        (w2.astype(np.float32), b2.astype(np.float32), "linear"),
    ]


def log_loss(model: Model, x: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(model.predict(x), 1e-7, 1 - 1e-7)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=8000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--explore", type=float, default=0.1)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--strategies", default="greedy,greedy")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    t0 = time.time()
    pool = load_pool()
    seeds = np.arange(args.seed * 1_000_000, args.seed * 1_000_000 + args.games, dtype=np.uint64)
    rows = examples(pool, seeds, tuple(args.strategies.split(",")), explore=args.explore)
    held = rows["seed"] % 10 == 0  # a tenth of the games held out
    x, y = rows["features"], rows["outcome"]
    layers = fit_mlp(x[~held], y[~held], args.hidden, args.epochs, args.seed)
    model = Model.from_arrays(layers)
    model.meta = {
        "made_by": "python benchmarks/fit_model.py "
        + " ".join(
            f"--{k} {v}"
            for k, v in (
                ("games", args.games),
                ("seed", args.seed),
                ("explore", args.explore),
                ("hidden", args.hidden),
                ("epochs", args.epochs),
                ("strategies", args.strategies),
                ("out", args.out),
            )
        ),
        "games": args.games,
        "rows": int(len(y)),
        "pool": f"the default pool ({len(pool.protocols)} protocols)",
        "pool_hash": pool.hash,
        "held_out_log_loss": round(log_loss(model, x[held], y[held]), 4),
        "held_out_base_log_loss": round(float(-np.mean(y[held] * np.log(0.5) + (1 - y[held]) * np.log(0.5))), 4),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "training_seconds": round(time.time() - t0, 1),
    }
    model.save(args.out)
    print(
        f"{args.out}: hash {model.hash}, {len(y)} rows, held-out log loss {model.meta['held_out_log_loss']} "
        f"(0.5 everywhere: {model.meta['held_out_base_log_loss']}), {model.meta['training_seconds']} s"
    )


if __name__ == "__main__":
    main()
