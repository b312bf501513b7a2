"""A training spec (TOML, docs/training.md): the pool, the master seed, the generations and their
games, who plays the data of each generation, the model's shape, the fit and the ladder that
measures each generation. Checked with the experiment spec's checker before any game is played,
so every error is one line naming the file and the key."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from protolab.experiment.spec import CardFile, Checker, RunName, Strategy, read_card_file, read_spec_file, run_name
from sim.pool import DEFAULT_SETS
from sim.schema import Checked, before, check, choice, fail, integer, number, text, texts
from strategies.errors import StrategyError
from strategies.learned import POLICY_PLAYER
from strategies.model import MAX_LAYERS, MAX_UNITS
from strategies.spec import parse

TRAIN_FORMAT = 1  # the format of train.json and of the training spec it stores
ACTIVATIONS = ("relu", "tanh")
CHOICES = ("last", "best")


@dataclass(frozen=True)
class Data:
    """The examples of each generation: how many games, in shards of how many, played by whom."""

    games: int
    shard_games: int
    expert: str  # generation 0: this strategy on both seats
    explore: float  # later generations: the current model on both seats, exploring this often
    window: int  # a fit learns from the examples of this many generations (the newest)
    # later generations (expert iteration): this search guided by the current model on both seats
    # ("ismcts:iters=100,leaf=model"; the model is the previous generation's), instead of self-play
    improver: str = ""
    # the policy target: each root action decision of the (ismcts) players' games also gives the search's
    # visit share of every root action with the features where its turn ends; the model gets a second
    # output, fitted to them (protolab/experiment/train/fitpolicy.py), and the player orders by it
    policy: bool = False


@dataclass(frozen=True)
class Fit:
    epochs: int
    batch: int
    learning_rate: float
    l2: float
    validation: float  # share of the games held out to stop early and report the held-out loss
    patience: int  # epochs without improvement of the held-out loss before stopping
    # the value's second target: the weight of the search's value of each recorded root action (its mean
    # result, the policy rows' score) beside the games' outcomes; 0: the outcomes alone
    search_value: float = 0.0


@dataclass(frozen=True)
class Ladder:
    opponents: tuple[str, ...]
    games: int  # per opponent, seats swapped on paired seeds (even)
    shard_games: int
    choose: str  # which generation's model is written: the last, or the best by the ladder


@dataclass(frozen=True)
class TrainSpec:
    name: str
    description: str
    seed: int
    generations: int
    model: str  # the model's name: datasets/models/NAME.json
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
        if not d["data"]["improver"]:
            d["data"].pop("improver")  # specs from before the key hash as they did
        if not d["data"]["policy"]:
            d["data"].pop("policy")
        if not d["fit"]["search_value"]:
            d["fit"].pop("search_value")
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


# -- the schema: each table's keys, the values they take and their defaults ---------------------------


def expert_problem(text: str) -> str | None:
    """The expert records its examples through the engine's C players on both seats: a user strategy
    (Python) cannot play them, whatever --allow-code says. Why `text` cannot be the expert, if so."""
    if not parse(text).is_user:
        return None
    return (
        f"expected a built-in strategy (greedy, search, ismcts, learned ...): the examples are recorded by the "
        f"engine's players on both seats, and {text!r} is Python code (a user strategy)"
    )


def _improver(text: str) -> str:
    """An improver is a guided ismcts whose model the training supplies (each generation's previous one)."""
    try:
        s = parse(text)
    except StrategyError as e:
        return fail(str(e))
    if s.base != "ismcts" or "model" in s.params or not any(p in s.params for p in ("leaf", "choices")):
        return fail(
            f"expected a search guided by the model it is given, like 'ismcts:iters=100,leaf=model' "
            f"(no model=: the previous generation's is used), got {text!r}"
        )
    return text


def _built_in(text: str) -> str:
    why = expert_problem(text)
    return text if why is None else fail(why)


class DataTable(Checked):
    games: Annotated[
        integer(2, 10_000_000, "games per generation"),
        Field(description="the games played for each generation's examples"),
    ]
    shard_games: integer(1, 50_000, "games per shard") = 500
    expert: Annotated[Strategy, AfterValidator(_built_in)] = "greedy"
    explore: number(0, 1, "the share of self-play moves chosen at random") = 0.1
    window: integer(1, 100, "generations of examples a fit learns from") = 2
    improver: Annotated[
        str,
        AfterValidator(lambda t: t and _improver(t)),
        Field(description="later generations' players: a search guided by the previous generation's model"),
    ] = ""
    policy: Annotated[bool, Field(description="true or false (the policy target)")] = False

    @model_validator(mode="after")
    def _policy_needs_a_search(self) -> DataTable:
        """The policy target is the root visits of an ismcts: every generation's players must be one."""
        if self.policy and not (self.improver and parse(self.expert).base == POLICY_PLAYER):
            fail(
                f"expected policy = true only with a search on every generation: an {POLICY_PLAYER} expert and "
                f'an improver (e.g. expert = improver = "ismcts:iters=100,leaf=model"; the policy target is '
                f"its root visits), got expert {self.expert!r} and improver {self.improver or 'none'}",
                "policy",
            )
        return self


class NetTable(Checked):
    hidden: before(
        lambda v: (
            v
            if isinstance(v, list) and 1 <= len(v) <= MAX_LAYERS - 1
            else fail(
                f"expected a list of 1 to {MAX_LAYERS - 1} hidden layer sizes (the player's room), e.g. [32]; got {v!r}"
            )
        ),
        list[integer(1, MAX_UNITS, "a layer size")],
    ) = [32]
    activation: choice(ACTIVATIONS) = "relu"


class FitTable(Checked):
    epochs: integer(1, 10_000, "passes over the examples") = 30
    batch: integer(1, 1_000_000, "examples per gradient step") = 256
    learning_rate: number(1e-7, 1, "Adam's step size") = 1e-3
    l2: number(0, 10, "the L2 penalty on the weights") = 1e-4
    validation: number(0.01, 0.5, "the held-out share of games") = 0.1
    patience: integer(1, 1000, "epochs without improvement") = 5
    search_value: number(0, 100, "the weight of the search's values in the value's loss (0: the outcomes alone)") = 0


def _even(what: str) -> Any:
    return AfterValidator(lambda v: v if v % 2 == 0 else fail(f"expected an even number{what}; got {v}"))


class LadderTable(Checked):
    opponents: before(
        lambda v: (
            v
            if isinstance(v, list) and v
            else fail(f'expected a list of strategies, e.g. ["greedy", "search"]; got {v!r}')
        ),
        list[Strategy],
    ) = ["greedy"]
    games: Annotated[
        integer(2, 1_000_000, "games per opponent"), _even(" (each seed is played with seats swapped)")
    ] = 400
    shard_games: Annotated[integer(2, 50_000, "games per shard"), _even("")] = 100
    choose: choice(CHOICES) = "last"


class TrainTable(Checked):
    generations: Annotated[
        integer(1, 100, "the number of generations"),
        Field(description="the number of generations, e.g. generations = 3"),
    ]
    model: run_name("the model's name (datasets/models/NAME.json)") | None = None
    data: Annotated[DataTable, Field(description="a [train.data] table with at least games = N")]
    net: NetTable = NetTable()
    fit: FitTable = FitTable()
    ladder: LadderTable = LadderTable()

    @model_validator(mode="after")
    def _search_value_needs_the_policy_rows(self) -> TrainTable:
        """The search's values are recorded with the policy target's rows (each root action's mean result)."""
        if self.fit.search_value and not self.data.policy:
            fail(
                f"expected search_value = 0 unless train.data.policy = true (the search's values are recorded "
                f"with the policy rows), got {self.fit.search_value:g}",
                "fit.search_value",
            )
        return self


class PoolTable(Checked):
    sets: Annotated[
        texts("set names"), AfterValidator(lambda v: v or fail('expected at least one set, e.g. ["Main 1"]'))
    ] = list(DEFAULT_SETS)
    cards: before(
        lambda v: v if isinstance(v, list) else fail(f"expected a list of protocol or variant files, got {v!r}"),
        list[Any],
    ) = []


class TrainFile(Checked):
    name: Annotated[RunName, Field(description='a short training name, e.g. name = "learned"')]
    description: check(lambda v: isinstance(v, str), "text") = ""
    seed: Annotated[integer(0, 2**63 - 1, "the master seed"), Field(description="the master seed, e.g. seed = 1")]
    output: text("a folder for the training folder") = "runs"
    turn_cap: integer(1, 10_000, "the turn cap") = 200
    pool: PoolTable = PoolTable()
    train: Annotated[TrainTable, Field(description="a [train] table (docs/training.md): this is not a training spec")]


def parse_train_spec(raw: dict[str, Any], source: str, base: Path) -> TrainSpec:
    """Validate a training spec already read as TOML; raises SpecError naming file and key."""
    c = Checker(source)
    f = c.model(raw, "", TrainFile)
    t, data, ladder = f.train, f.train.data, f.train.ladder
    cards = tuple(read_card_file(c, base, x, f"pool.cards[{i}]") for i, x in enumerate(f.pool.cards))
    return TrainSpec(
        f.name,
        f.description,
        f.seed,
        t.generations,
        t.model or f.name,
        f.output,
        f.turn_cap,
        tuple(f.pool.sets),
        cards,
        Data(**{**data.model_dump(), "shard_games": min(data.shard_games, data.games)}),
        tuple(t.net.hidden),
        t.net.activation,
        Fit(**t.fit.model_dump()),
        Ladder(tuple(ladder.opponents), ladder.games, min(ladder.shard_games, ladder.games), ladder.choose),
        source,
    )


def train_strategies(spec: TrainSpec) -> list[tuple[str, str]]:
    """Every (key, strategy) a training spec names, as spec.check_code takes them."""
    return [
        ("train.data.expert", spec.data.expert),
        *((f"train.ladder.opponents[{i}]", o) for i, o in enumerate(spec.ladder.opponents)),
    ]


def load_train_spec(arg: str | Path) -> TrainSpec:
    """Read a training spec: a path, or the name of a shipped example (`train_learned`)."""
    raw, source, base = read_spec_file(arg)
    return parse_train_spec(raw, source, base)


def spec_from_record(stored: dict[str, Any], cards: dict[str, str], source: str) -> TrainSpec:
    """The spec a training folder recorded (train.json), its card files from the folder's inputs/."""
    d = {k: v for k, v in stored.items() if k not in ("format", "source")}
    files = tuple(CardFile(c["path"], cards[c["path"]], c["sha256"]) for c in d.pop("cards"))
    return TrainSpec(
        **{
            **d,
            "sets": tuple(d["sets"]),
            "hidden": tuple(d["hidden"]),
            "cards": files,
            "data": Data(**d["data"]),
            "fit": Fit(**d["fit"]),
            "ladder": Ladder(**{**d["ladder"], "opponents": tuple(d["ladder"]["opponents"])}),
        },
        source=source,
    )
