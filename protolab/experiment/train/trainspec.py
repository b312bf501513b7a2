"""A training spec (TOML, docs/training.md): the pool, the master seed, the generations and their
games, who plays the data of each generation, the model's shape, the fit and the ladder that
measures each generation. Checked with the experiment spec's checker before any game is played,
so every error is one line naming the file and the key."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from protolab.experiment.spec import NAME_RE, CardFile, Checker, read_card_file, read_spec_file
from sim.pool import DEFAULT_SETS
from strategies.model import MAX_LAYERS, MAX_UNITS

TRAIN_FORMAT = 1
TOP_KEYS = {"name", "description", "seed", "output", "turn_cap", "pool", "train"}
TRAIN_KEYS = {"generations", "model", "data", "net", "fit", "ladder"}
POOL_KEYS = {"sets", "cards"}
DATA_KEYS = {"games", "shard_games", "expert", "explore", "window"}
NET_KEYS = {"hidden", "activation"}
FIT_KEYS = {"epochs", "batch", "learning_rate", "l2", "validation", "patience"}
LADDER_KEYS = {"opponents", "games", "shard_games", "choose"}
ACTIVATIONS = ("relu", "tanh")
CHOICES = ("last", "best")


@dataclass(frozen=True)
class Data:
    """The examples of each generation: how many games, in shards of how many, played by whom."""

    games: int
    shard_games: int
    expert: str              # generation 0: this strategy on both seats
    explore: float           # later generations: the current model on both seats, exploring this often
    window: int              # a fit learns from the examples of this many generations (the newest)


@dataclass(frozen=True)
class Fit:
    epochs: int
    batch: int
    learning_rate: float
    l2: float
    validation: float        # share of the games held out to stop early and report the held-out loss
    patience: int            # epochs without improvement of the held-out loss before stopping


@dataclass(frozen=True)
class Ladder:
    opponents: tuple[str, ...]
    games: int               # per opponent, seats swapped on paired seeds (even)
    shard_games: int
    choose: str              # which generation's model is written: the last, or the best by the ladder


@dataclass(frozen=True)
class TrainSpec:
    name: str
    description: str
    seed: int
    generations: int
    model: str               # the model's name: datasets/models/NAME.json
    output: str
    turn_cap: int
    sets: tuple[str, ...]
    cards: tuple[CardFile, ...]
    data: Data
    hidden: tuple[int, ...]
    activation: str
    fit: Fit
    ladder: Ladder
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cards"] = [{"path": c.path, "sha256": c.sha256} for c in self.cards]
        return {"format": TRAIN_FORMAT, **d}

    @property
    def hash(self) -> str:
        """What the models depend on: everything but where the spec lives, where output goes and the
        number of generations (a training can be extended by asking for more)."""
        d = self.to_dict()
        for k in ("output", "source", "description", "generations"):
            d.pop(k)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def _data(c: Checker, raw: Any) -> Data:
    t = c.table(raw, "train.data", DATA_KEYS)
    if "games" not in t:
        raise c.error("train.data.games", "missing; expected the games played for each generation's examples")
    games = c.integer(t["games"], "train.data.games", 2, 10_000_000, "games per generation")
    shard = c.integer(t.get("shard_games", 500), "train.data.shard_games", 1, 50_000, "games per shard")
    return Data(games, min(shard, games), c.strategy(t.get("expert", "greedy"), "train.data.expert"),
                c.number(t.get("explore", 0.1), "train.data.explore", 0, 1,
                         "the share of self-play moves chosen at random"),
                c.integer(t.get("window", 2), "train.data.window", 1, 100,
                          "generations of examples a fit learns from"))


def _net(c: Checker, raw: Any) -> tuple[tuple[int, ...], str]:
    t = c.table(raw, "train.net", NET_KEYS)
    hidden = t.get("hidden", [32])
    if not isinstance(hidden, list) or not 1 <= len(hidden) <= MAX_LAYERS - 1:
        raise c.error("train.net.hidden", f"expected a list of 1 to {MAX_LAYERS - 1} hidden layer sizes (the player's "
                                          f"room), e.g. [32]; got {hidden!r}")
    sizes = tuple(c.integer(h, f"train.net.hidden[{i}]", 1, MAX_UNITS, "a layer size") for i, h in enumerate(hidden))
    act = t.get("activation", "relu")
    if act not in ACTIVATIONS:
        raise c.error("train.net.activation", f"expected one of {', '.join(ACTIVATIONS)}; got {act!r}")
    return sizes, act


def _fit(c: Checker, raw: Any) -> Fit:
    t = c.table(raw, "train.fit", FIT_KEYS)
    return Fit(c.integer(t.get("epochs", 30), "train.fit.epochs", 1, 10_000, "passes over the examples"),
               c.integer(t.get("batch", 256), "train.fit.batch", 1, 1_000_000, "examples per gradient step"),
               c.number(t.get("learning_rate", 1e-3), "train.fit.learning_rate", 1e-7, 1, "Adam's step size"),
               c.number(t.get("l2", 1e-4), "train.fit.l2", 0, 10, "the L2 penalty on the weights"),
               c.number(t.get("validation", 0.1), "train.fit.validation", 0.01, 0.5, "the held-out share of games"),
               c.integer(t.get("patience", 5), "train.fit.patience", 1, 1000, "epochs without improvement"))


def _ladder(c: Checker, raw: Any) -> Ladder:
    t = c.table(raw, "train.ladder", LADDER_KEYS)
    opps = t.get("opponents", ["greedy"])
    if not isinstance(opps, list) or not opps:
        raise c.error("train.ladder.opponents",
                      f'expected a list of strategies, e.g. ["greedy", "search"]; got {opps!r}')
    opponents = tuple(c.strategy(o, f"train.ladder.opponents[{i}]") for i, o in enumerate(opps))
    games = c.integer(t.get("games", 400), "train.ladder.games", 2, 1_000_000, "games per opponent")
    if games % 2:
        raise c.error("train.ladder.games",
                      f"expected an even number (each seed is played with seats swapped); got {games}")
    shard = c.integer(t.get("shard_games", 100), "train.ladder.shard_games", 2, 50_000, "games per shard")
    if shard % 2:
        raise c.error("train.ladder.shard_games", f"expected an even number; got {shard}")
    choose = t.get("choose", "last")
    if choose not in CHOICES:
        raise c.error("train.ladder.choose", f"expected one of {', '.join(CHOICES)}; got {choose!r}")
    return Ladder(opponents, games, min(shard, games), choose)


def _header(c: Checker, raw: dict[str, Any], t: dict[str, Any]) -> tuple[str, str, int, int, str]:
    """(name, description, seed, generations, model)."""
    for k, what in (("name", 'a short training name, e.g. name = "learned"'),
                    ("seed", "the master seed, e.g. seed = 1")):
        if k not in raw:
            raise c.error(k, f"missing; expected {what}")
    if "generations" not in t:
        raise c.error("train.generations", "missing; expected the number of generations, e.g. generations = 3")
    name = c.string(raw["name"], "name", "a short name of letters, digits, '.', '_' or '-'")
    model = c.string(t.get("model", name), "train.model", "the model's name (datasets/models/NAME.json)")
    for key, value in (("name", name), ("train.model", model)):
        if not NAME_RE.match(value):
            raise c.error(key, f"expected letters, digits, '.', '_' or '-' (at most 64), got {value!r}")
    if not isinstance(raw.get("description", ""), str):
        raise c.error("description", f"expected text, got {raw['description']!r}")
    return (name, raw.get("description", ""), c.integer(raw["seed"], "seed", 0, 2**63 - 1, "the master seed"),
            c.integer(t["generations"], "train.generations", 1, 100, "the number of generations"), model)


def _pool(c: Checker, raw: Any, base: Path) -> tuple[tuple[str, ...], tuple[CardFile, ...]]:
    pool = c.table(raw, "pool", POOL_KEYS)
    sets = tuple(c.strings(pool.get("sets", list(DEFAULT_SETS)), "pool.sets", "set names"))
    if not sets:
        raise c.error("pool.sets", "expected at least one set, e.g. [\"Main 1\"]")
    cards_raw = pool.get("cards", [])
    if not isinstance(cards_raw, list):
        raise c.error("pool.cards", f"expected a list of protocol or variant files, got {cards_raw!r}")
    return sets, tuple(read_card_file(c, base, x, f"pool.cards[{i}]") for i, x in enumerate(cards_raw))


def parse_train_spec(raw: dict[str, Any], source: str, base: Path) -> TrainSpec:
    """Validate a training spec already read as TOML; raises SpecError naming file and key."""
    c = Checker(source)
    c.table(raw, "", TOP_KEYS)
    if "train" not in raw:
        raise c.error("train", "missing; expected a [train] table (docs/training.md): this is not a training spec")
    t = c.table(raw["train"], "train", TRAIN_KEYS)
    name, description, seed, generations, model = _header(c, raw, t)
    sets, cards = _pool(c, raw.get("pool", {}), base)
    hidden, activation = _net(c, t.get("net", {}))
    if "data" not in t:
        raise c.error("train.data", "missing; expected a [train.data] table with at least games = N")
    return TrainSpec(name, description, seed, generations, model,
                     c.string(raw.get("output", "runs"), "output", "a folder for the training folder"),
                     c.integer(raw.get("turn_cap", 200), "turn_cap", 1, 10_000, "the turn cap"),
                     sets, cards, _data(c, t["data"]), hidden, activation, _fit(c, t.get("fit", {})),
                     _ladder(c, t.get("ladder", {})), source)


def load_train_spec(arg: str | Path) -> TrainSpec:
    """Read a training spec: a path, or the name of a shipped example (`train_learned`)."""
    raw, source, base = read_spec_file(arg)
    return parse_train_spec(raw, source, base)


def spec_from_record(stored: dict[str, Any], cards: dict[str, str], source: str) -> TrainSpec:
    """The spec a training folder recorded (train.json), its card files from the folder's inputs/."""
    d = {k: v for k, v in stored.items() if k not in ("format", "source")}
    files = tuple(CardFile(c["path"], cards[c["path"]], c["sha256"]) for c in d.pop("cards"))
    return TrainSpec(**{**d, "sets": tuple(d["sets"]), "hidden": tuple(d["hidden"]), "cards": files,
                        "data": Data(**d["data"]), "fit": Fit(**d["fit"]),
                        "ladder": Ladder(**{**d["ladder"], "opponents": tuple(d["ladder"]["opponents"])})},
                     source=source)
