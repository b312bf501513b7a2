"""`protolab train SPEC` for a spec with a `[qtrain]` table: the action-value network of the `qlearned`
player (strategies/_qlearned.pyx, docs/training.md "The action-value network"), in one process.

Examples: the teacher's games on both seats (strategies/qexamples.py), one row per action it weighed at
each action decision: the seat's view and the action's features, the teacher's value of the action
and, for the action played, the game's result. Fit (PyTorch on CPU, float32, one thread, seeded): an
MLP whose logit is fitted by binary cross-entropy to the teacher's values (every row that has one) and,
with weight `mc_weight`, to the game's result (the rows played): the Monte Carlo return. Held out by
game seed. The standardisation is folded into the first layer, so the player reads raw inputs. Then
the model's ladder against each opponent, and the model and its card are written."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from protolab.experiment.spec import SpecError
from sim.pool import load_pool
from strategies.ladder import run_ladder
from strategies.model import Layer
from strategies.qexamples import qexamples
from strategies.qmodel import QModel

TORCH_HINT = 'protolab train of an action-value spec needs PyTorch: pip install -e ".[train]" (or pip install torch)'
KEYS = {
    "name": str,
    "description": str,
    "seed": int,
    "model": str,
    "teacher": str,
    "games": int,
    "explore": float,
    "hidden": list,
    "epochs": int,
    "batch": int,
    "learning_rate": float,
    "mc_weight": float,
    "validation": float,
    "opponents": list,
    "ladder_games": int,
}
REQUIRED = ("name", "seed", "games")


@dataclass(frozen=True)
class QTrainSpec:
    name: str
    seed: int
    games: int
    source: str
    description: str = ""
    model: str = "qlearned"
    teacher: str = "learned"
    explore: float = 0.05
    hidden: tuple[int, ...] = (64, 32)
    epochs: int = 8
    batch: int = 1024
    learning_rate: float = 0.001
    mc_weight: float = 0.5
    validation: float = 0.1
    opponents: tuple[str, ...] = ("greedy", "search")
    ladder_games: int = 400


def parse_qtrain(raw: dict[str, Any], source: str) -> QTrainSpec:
    """The `[qtrain]` table, checked key by key (SpecError: one line naming the file and the key)."""
    table = raw.get("qtrain")
    extra = [k for k in raw if k != "qtrain"]
    if not isinstance(table, dict) or extra:
        raise SpecError(f"{source}: key '{extra[0] if extra else 'qtrain'}': expected only a [qtrain] table")
    for k, v in table.items():
        want = KEYS.get(k)
        if want is None:
            raise SpecError(f"{source}: key 'qtrain.{k}': no such key (expected one of {', '.join(KEYS)})")
        ok = isinstance(v, want) and not isinstance(v, bool) or (want is float and isinstance(v, int))
        if not ok:
            raise SpecError(f"{source}: key 'qtrain.{k}': expected {want.__name__}, got {v!r}")
    for k in REQUIRED:
        if k not in table:
            raise SpecError(f"{source}: key 'qtrain.{k}': missing")
    hidden = tuple(table.get("hidden", (64, 32)))
    if not 1 <= len(hidden) <= 3 or any(not isinstance(h, int) or not 1 <= h <= 64 for h in hidden):
        raise SpecError(f"{source}: key 'qtrain.hidden': expected 1 to 3 layer sizes of 1..64, got {list(hidden)}")
    if table["games"] < 2:
        raise SpecError(f"{source}: key 'qtrain.games': expected at least 2, got {table['games']}")
    fields = {k: v for k, v in table.items() if k not in ("hidden", "opponents")}
    return QTrainSpec(
        **fields, hidden=hidden, opponents=tuple(table.get("opponents", ("greedy", "search"))), source=source
    )


def _torch():
    try:
        import torch
    except ImportError:
        raise SpecError(TORCH_HINT) from None
    return torch


def fit_q(rows: dict[str, np.ndarray], spec: QTrainSpec, say) -> tuple[list[Layer], dict[str, Any]]:
    """The network's layers (standardisation folded in) and the fit's record."""
    torch = _torch()
    torch.set_num_threads(1)
    torch.manual_seed(spec.seed)
    x = rows["inputs"]
    teacher, taken, outcome = rows["teacher"], rows["taken"].astype(np.float32), rows["outcome"]
    held = (rows["seed"] % 1000) < int(spec.validation * 1000)
    mu = x[~held].mean(0)
    sd = x[~held].std(0)
    sd[sd < 1e-6] = 1.0
    xs = torch.from_numpy(((x - mu) / sd).astype(np.float32))
    has_t = torch.from_numpy((teacher >= 0).astype(np.float32))
    t_val = torch.from_numpy(np.clip(teacher, 0, 1).astype(np.float32))
    w_mc = torch.from_numpy(taken * spec.mc_weight)
    z = torch.from_numpy(outcome.astype(np.float32))
    sizes = (x.shape[1], *spec.hidden)
    mods: list[Any] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        mods += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*mods, torch.nn.Linear(sizes[-1], 1))
    opt = torch.optim.Adam(net.parameters(), lr=spec.learning_rate)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    train_idx = np.flatnonzero(~held)
    val = torch.from_numpy(np.flatnonzero(held))
    gen = np.random.default_rng(spec.seed)

    def loss_of(idx) -> Any:
        q = net(xs[idx])[:, 0]
        lt = (bce(q, t_val[idx], reduction="none") * has_t[idx]).sum()
        lm = (bce(q, z[idx], reduction="none") * w_mc[idx]).sum()
        return (lt + lm) / (has_t[idx].sum() + w_mc[idx].sum()).clamp(min=1.0)

    curve, best, best_state = [], float("inf"), None
    for epoch in range(spec.epochs):
        order = torch.from_numpy(gen.permutation(train_idx))
        for i in range(0, len(order), spec.batch):
            opt.zero_grad()
            loss = loss_of(order[i : i + spec.batch])
            loss.backward()
            opt.step()
        with torch.no_grad():
            v = float(loss_of(val))
        curve.append(round(v, 6))
        say(f"  epoch {epoch + 1}: held-out loss {v:.4f}")
        if v < best:
            best, best_state = v, {k: t.clone() for k, t in net.state_dict().items()}
    assert best_state is not None
    net.load_state_dict(best_state)
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    layers = []
    for i, m in enumerate(lin):
        w = m.weight.detach().numpy().astype(np.float64)
        b = m.bias.detach().numpy().astype(np.float64)
        if i == 0:  # raw inputs: (x - mu) / sd folded into the first layer
            b = b - (w * (mu / sd)).sum(1)
            w = w / sd
        layers.append(Layer(w, b, "relu" if i < len(lin) - 1 else "linear"))
    record = {"epochs": spec.epochs, "held_out_loss": curve, "best_held_out_loss": round(best, 6)}
    record["teacher_agreement"] = teacher_agreement(layers, rows, held)
    return layers, record


def teacher_agreement(layers: list[Layer], rows: dict[str, np.ndarray], held: np.ndarray) -> float:
    """The share of held-out decisions where the network's best action is the one the teacher played."""
    q = QModel([Layer(lay.weights.astype(np.float32), lay.bias.astype(np.float32), lay.activation) for lay in layers])
    idx = np.flatnonzero(held & (rows["teacher"] >= 0))
    if len(idx) == 0:
        return 0.0
    logit = q.logits(rows["inputs"][idx])
    dec = rows["decision"][idx]
    taken = rows["taken"][idx]
    order = np.lexsort((-logit, dec))
    first = np.r_[True, dec[order][1:] != dec[order][:-1]]
    return round(float(taken[order][first].mean()), 4)


def card(spec: QTrainSpec, model: QModel, record: dict[str, Any]) -> str:
    """The model card: data, targets, fit and ladder."""
    ladder = "\n".join(
        f"| {p['a']} vs {p['b']} | {p['games']} | {p['win_rate_a']:.1%} ({p['ci_low']:.1%}-{p['ci_high']:.1%}) |"
        for p in record["ladder"]
    )
    d, f = record["data"], record["fit"]
    return (
        f"# Model `{spec.model}` ({model.hash}): the action-value network of `qlearned`\n\n"
        f"Made by `protolab train {spec.source}` (seed {spec.seed}), {record['seconds']} s on one core.\n\n"
        f"**Data**: {d['games']} games of `{spec.teacher}` on both seats (uniform action with probability "
        f"{spec.explore}), {d['rows']} rows (one per action weighed at {d['decisions']} decisions).\n\n"
        f"**Targets**: the teacher's value of each action it weighed (its model's win probability at the "
        f"end of that action's turn) and, weight {spec.mc_weight}, the game's result for the action played "
        "(the Monte Carlo return); binary cross-entropy on the logit.\n\n"
        f"**Fit**: PyTorch {record['torch']} on CPU, float32, one thread; hidden {list(spec.hidden)} relu, Adam "
        f"lr {spec.learning_rate}, batch {spec.batch}, {spec.epochs} epochs, the best of the held-out losses "
        f"{f['held_out_loss']} kept ({spec.validation:.0%} of the games held out by seed); on held-out decisions "
        f"its best action is the teacher's in {f['teacher_agreement']:.1%}.\n\n"
        f"**Ladder** (seats swapped, seeds from 1):\n\n| pair | games | win rate |\n|---|---|---|\n{ladder}\n"
    )


def run_qtrain(spec: QTrainSpec, models: Path, say) -> dict[str, Any]:
    """Play the examples, fit, ladder, write MODELS/NAME.json and NAME.md; the record."""
    torch = _torch()
    t0 = time.time()
    pool = load_pool()
    seeds = spec.seed * 1_000_000 + np.arange(spec.games)
    say(f"examples: {spec.games} games of {spec.teacher}")
    rows = qexamples(pool, seeds, (spec.teacher, spec.teacher), explore=spec.explore)
    say(f"  {len(rows['seed'])} rows")
    layers, fit = fit_q(rows, spec, say)
    model = QModel.from_arrays([(lay.weights, lay.bias, lay.activation) for lay in layers])
    models.mkdir(parents=True, exist_ok=True)
    path = models / f"{spec.model}.json"
    model.save(path)
    pairs = []
    for opp in spec.opponents:
        say(f"ladder: vs {opp}")
        lad = run_ladder(pool, [f"qlearned:model={path}", opp], spec.ladder_games, seed=1)
        pairs += lad["pairs"]
    record = {
        "spec": spec.__dict__,
        "data": {
            "games": spec.games,
            "rows": len(rows["seed"]),
            "decisions": int(len(np.unique(rows["decision"]))),
        },
        "fit": fit,
        "ladder": pairs,
        "torch": torch.__version__,
        "model_hash": model.hash,
        "seconds": round(time.time() - t0, 1),
    }
    model.meta = {k: record[k] for k in ("data", "fit", "torch")} | {"spec": spec.name, "seed": spec.seed}
    model.save(path)
    (models / f"{spec.model}.md").write_text(card(spec, model, record))
    (models / f"{spec.model}.train.json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    return record
