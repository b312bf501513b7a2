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

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from protolab.experiment.spec import SpecError, examples_dir
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
    "policy_weight": float,
    "policy_scale": float,
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
    batch: int = 128  # decisions
    learning_rate: float = 0.001
    mc_weight: float = 0.5
    policy_weight: float = 1.0
    policy_scale: float = 10.0
    validation: float = 0.1
    opponents: tuple[str, ...] = ("greedy", "search")
    ladder_games: int = 400


def parse_qtrain(raw: dict[str, Any], source: str) -> QTrainSpec:
    """The `[qtrain]` table, checked key by key (SpecError: one line naming the file and the key)."""
    table = raw.get("qtrain")
    extra = [k for k in raw if k != "qtrain"]
    if not isinstance(table, dict) or extra:
        raise SpecError(f"{source}: key '{extra[0] if extra else 'qtrain'}': expected only a [qtrain] table")
    _check_keys(table, source)
    hidden = tuple(table.get("hidden", (64, 32)))
    _check_values(table, hidden, source)
    fields = {k: v for k, v in table.items() if k not in ("hidden", "opponents")}
    return QTrainSpec(
        **fields, hidden=hidden, opponents=tuple(table.get("opponents", ("greedy", "search"))), source=source
    )


def _check_keys(table: dict[str, Any], source: str) -> None:
    """Every key declared (KEYS) and of its type (a whole number is a float, a bool is not a number);
    the REQUIRED ones given."""
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


def _check_values(table: dict[str, Any], hidden: tuple[Any, ...], source: str) -> None:
    """The ranges: the hidden layers' count and sizes, the held-out share, the number of games."""
    if not 1 <= len(hidden) <= 3 or any(not isinstance(h, int) or not 1 <= h <= 64 for h in hidden):
        raise SpecError(f"{source}: key 'qtrain.hidden': expected 1 to 3 layer sizes of 1..64, got {list(hidden)}")
    if not 0.01 <= table.get("validation", 0.1) <= 0.5:
        raise SpecError(f"{source}: key 'qtrain.validation': expected a share 0.01..0.5, got {table['validation']}")
    if table["games"] < 2:
        raise SpecError(f"{source}: key 'qtrain.games': expected at least 2, got {table['games']}")


def _torch():
    try:
        import torch
    except ImportError:
        raise SpecError(TORCH_HINT) from None
    return torch


@dataclass
class Decisions:
    """The rows of each decision (they are contiguous), padded to the widest: idx [n, K], valid [n, K]."""

    idx: np.ndarray
    valid: np.ndarray
    held: np.ndarray

    @classmethod
    def of(cls, rows: dict[str, np.ndarray], held_rows: np.ndarray) -> Decisions:
        dec = rows["decision"]
        starts = np.flatnonzero(np.r_[True, dec[1:] != dec[:-1]])
        counts = np.diff(np.r_[starts, len(dec)])
        k = np.arange(counts.max())[None, :]
        valid = k < counts[:, None]
        return cls(np.where(valid, starts[:, None] + k, 0), valid, held_rows[starts])


class QLoss:
    """The fit's loss over a batch of decisions: binary cross-entropy of each row's logit to the teacher's
    value (rows that have one) and, weighted by mc_weight, to the game's result (the row played); plus,
    weighted by policy_weight, the cross-entropy of the softmax of policy_scale times the logits within a
    decision to the action the teacher played (decisions of two or more weighed actions)."""

    def __init__(self, torch, rows: dict[str, np.ndarray], spec: QTrainSpec, xs) -> None:
        self.t, self.spec, self.xs = torch, spec, xs
        teacher = rows["teacher"]
        self.has_t = torch.from_numpy((teacher >= 0).astype(np.float32))
        self.t_val = torch.from_numpy(np.clip(teacher, 0, 1).astype(np.float32))
        self.taken = torch.from_numpy(rows["taken"].astype(np.float32))
        self.z = torch.from_numpy(rows["outcome"].astype(np.float32))

    def __call__(self, net, d: Decisions, batch: np.ndarray) -> tuple[Any, Any, Any]:
        t = self.t
        valid = t.from_numpy(d.valid[batch])
        flat = t.from_numpy(d.idx[batch][d.valid[batch]])
        q = net(self.xs[flat])[:, 0]
        bce = t.nn.functional.binary_cross_entropy_with_logits
        w_mc = self.taken[flat] * self.spec.mc_weight
        value = (bce(q, self.t_val[flat], reduction="none") * self.has_t[flat]).sum()
        value = (value + (bce(q, self.z[flat], reduction="none") * w_mc).sum()) / (
            self.has_t[flat].sum() + w_mc.sum()
        ).clamp(min=1.0)
        qpad = t.full(valid.shape, -1e9)
        qpad[valid] = q * self.spec.policy_scale
        took = t.zeros(valid.shape)
        took[valid] = self.taken[flat] * self.has_t[flat]
        use = (valid.sum(1) >= 2) & (took.sum(1) == 1)
        ce = -(t.log_softmax(qpad, 1) * took).sum(1)[use]
        policy = ce.mean() if len(ce) else t.zeros(())
        agree = (qpad.argmax(1) == took.argmax(1))[use].float().mean() if len(ce) else t.zeros(())
        return value + self.spec.policy_weight * policy, value, agree


def standardise(x: np.ndarray, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = x[~held].mean(0)
    sd = x[~held].std(0)
    sd[sd < 1e-6] = 1.0
    return mu, sd


def held_out(seeds: np.ndarray, spec: QTrainSpec) -> np.ndarray:
    """The rows of the held-out games: every k-th game of the spec's seeds (k = 1 / validation)."""
    every = max(2, round(1 / spec.validation)) if spec.validation > 0 else 0
    if every == 0:
        return np.zeros(len(seeds), bool)
    return (seeds.astype(np.int64) - spec.seed * 1_000_000) % every == 0


def fit_q(rows: dict[str, np.ndarray], spec: QTrainSpec, say) -> tuple[list[Layer], dict[str, Any]]:
    """The network's layers (standardisation folded in) and the fit's record."""
    torch = _torch()
    torch.set_num_threads(1)
    torch.manual_seed(spec.seed)
    held = held_out(rows["seed"], spec)
    mu, sd = standardise(rows["inputs"], held)
    xs = torch.from_numpy(((rows["inputs"] - mu) / sd).astype(np.float32))
    d = Decisions.of(rows, held)
    loss_of = QLoss(torch, rows, spec, xs)
    sizes = (xs.shape[1], *spec.hidden)
    mods: list[Any] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        mods += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    net = torch.nn.Sequential(*mods, torch.nn.Linear(sizes[-1], 1))
    opt = torch.optim.Adam(net.parameters(), lr=spec.learning_rate)
    train, val = np.flatnonzero(~d.held), np.flatnonzero(d.held)
    gen = np.random.default_rng(spec.seed)
    curve: list[list[float]] = []
    best, best_state = float("inf"), None
    for epoch in range(spec.epochs):
        order = gen.permutation(train)
        for i in range(0, len(order), spec.batch):
            opt.zero_grad()
            loss_of(net, d, order[i : i + spec.batch])[0].backward()
            opt.step()
        with torch.no_grad():
            total, value, agree = (float(v) for v in loss_of(net, d, val))
        curve.append([round(total, 6), round(value, 6), round(agree, 4)])
        say(f"  epoch {epoch + 1}: held-out loss {total:.4f} (value {value:.4f}), teacher's action first {agree:.1%}")
        if total < best:
            best, best_state = total, {k: v.clone() for k, v in net.state_dict().items()}
    assert best_state is not None
    net.load_state_dict(best_state)
    layers = exported([m for m in net if isinstance(m, torch.nn.Linear)], mu, sd)
    record = {"epochs": spec.epochs, "held_out": curve, "best_held_out_loss": round(best, 6)}
    record["teacher_agreement"] = teacher_agreement(layers, rows, held)
    return layers, record


def exported(lin: list[Any], mu: np.ndarray, sd: np.ndarray) -> list[Layer]:
    """The fitted linear layers as the player's, (x - mu) / sd folded into the first."""
    layers = []
    for i, m in enumerate(lin):
        w = m.weight.detach().numpy().astype(np.float64)
        b = m.bias.detach().numpy().astype(np.float64)
        if i == 0:
            b = b - (w * (mu / sd)).sum(1)
            w = w / sd
        layers.append(Layer(w, b, "relu" if i < len(lin) - 1 else "linear"))
    return layers


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


def spec_name(spec: QTrainSpec) -> str:
    """A shipped spec by its name (a card names no path outside the repository), another as given."""
    path = Path(spec.source)
    return path.stem if path.parent.resolve() == examples_dir().resolve() else spec.source


def card(spec: QTrainSpec, model: QModel, record: dict[str, Any]) -> str:
    """The model card: data, targets, fit and ladder."""
    ladder = "\n".join(
        f"| this model vs {p['b']} | {p['games']} | {p['win_rate_a']:.1%} ({p['ci_low']:.1%}-{p['ci_high']:.1%}) |"
        for p in record["ladder"]
    )
    d, f = record["data"], record["fit"]
    return (
        f"# Model `{spec.model}` ({model.hash}): the action-value network of `qlearned`\n\n"
        f"Made by `protolab train {spec_name(spec)}` (seed {spec.seed}), {record['seconds']} s of wall time in "
        "one process.\n\n"
        f"**Data**: {d['games']} games of `{spec.teacher}` on both seats (uniform action with probability "
        f"{spec.explore}), {d['rows']} rows (one per action weighed at {d['decisions']} decisions).\n\n"
        f"**Targets**: the teacher's value of each action it weighed (its model's win probability at the "
        f"end of that action's turn) and, weight {spec.mc_weight}, the game's result for the action played "
        "(the Monte Carlo return); binary cross-entropy on the logit.\n\n"
        f"**Fit**: PyTorch {record['torch']} on CPU, float32, one thread; hidden {list(spec.hidden)} relu, Adam "
        f"lr {spec.learning_rate}, batch {spec.batch} decisions, {spec.epochs} epochs, the best of the held-out "
        f"(loss, value loss, teacher's action first) {f['held_out']} kept "
        f"({spec.validation:.0%} of the games held out by seed); "
        "on held-out decisions "
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
    return record
