"""Read and validate an experiment spec (TOML, docs/experiments.md) before any work starts.

Every error is a SpecError whose message names the file, the key and what was expected, so a
designer can fix a typo without reading code. Checks that need the card pool (protocol names,
variant files that parse) happen in `protolab.experiment.run.plan`, still before any game is played."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, Field, ValidationError, model_validator

from protolab.experiment.stopspec import STOP_DEFAULTS, parse_stop
from protolab.experiment.strengthspec import parse_strength
from protolab.experiment.tunespec import parse_tune
from sim.inputs import (
    InputFileError,
    describe_char,
    find_control_char,
    parse_toml,
    read_input_bytes,
    read_input_text,
)
from sim.pool import DEFAULT_SETS
from sim.schema import (
    Checked,
    Problem,
    Strict,
    before,
    check,
    fail,
    integer,
    integer_expected,
    is_whole,
    number,
    problem,
    texts,
)
from sim.schema import text as nonblank
from strategies.draft import DraftTableError, parse_fitted
from strategies.spec import StrategyError, check_user_class, parse

SPEC_FORMAT = 1
DRAFT_MODES = ("random", "draft", "fixed", "round_robin", "sampled", "holding")
DEFAULT_SHARD_GAMES = 10_000
MAX_SHARD_GAMES = 50_000  # keeps a worker's peak memory well under 1 GiB
# Limits that keep a typo (games = 10**17) from growing the driver without bound before any game:
MAX_GAMES = 1_000_000_000  # games per matchup (per arm)
MAX_TOTAL_GAMES = 5_000_000_000  # games of one run, every arm
MAX_SHARDS = 100_000  # run.json keeps about 1 KB per shard
MAX_MATCHUPS = 10_000_000  # per arm; the round robin of 30 protocols has 5,937,750
MAX_TRIOS = 4_400  # draft.trios: every pair of them is a matchup (30 protocols make 4,060 trios)
MAX_ARMS = 32
DEFAULT_ARM = "base"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
M = TypeVar("M", bound=BaseModel)


class SpecError(ValueError):
    """An experiment spec that cannot be run; the message says where and what was expected."""


# -- strategies -------------------------------------------------------------------------------------


def check_strategy(text: Any) -> str:
    """Validate a strategy spec (strategies/spec.py: "greedy", "search:sims=50", "greedy+nodown",
    "pkg.mod:Class") and return it stripped. Raises ValueError with a readable reason; the spec
    loader adds file and key. Card names inside restrictions are checked against the pool later
    (protolab.experiment.run.plan), still before any game is played."""

    if not isinstance(text, str):
        raise ValueError(f"expected a strategy spec string, got {text!r}")
    try:
        return parse(text).text
    except StrategyError as e:
        raise ValueError(str(e)) from None


def refuse_code(text: str, allow_code: bool) -> None:
    """The one rule for code named in a spec, applied by every command that reads one (run, its
    --resume and metagame loop, replay of a run, tune, train, power, cardvalue --resume): a user
    strategy `pkg.mod:Class` is looked for in its module's source without running it, then refused
    unless `allow_code` (--allow-code): a spec that names code is a program. StrategyError otherwise."""
    spec = parse(text)
    if not spec.is_user:
        return
    check_user_class(spec.base)
    if not allow_code:
        raise StrategyError(
            f"{text!r} is Python code (a user strategy): running this spec runs module "
            f"{spec.base.partition(':')[0]!r} in the driver and every worker; expected "
            "--allow-code if you trust it (docs/experiments.md)"
        )


def check_code(source: str, named: Any, allow_code: bool) -> None:
    """refuse_code for each (key, strategy) a spec names, before anything is imported or played:
    SpecError naming the file and the key."""
    for key, text in named:
        try:
            refuse_code(text, allow_code)
        except StrategyError as e:
            raise SpecError(f"{source}: key '{key}': {e}") from None


def seat_key(spec: Spec, i: int) -> str:
    """Where arm i's strategies are written in the spec (the key its errors name)."""
    arm = spec.arms[i]
    return (
        "strength"
        if arm.duel
        else f"tiers[{i}]"
        if arm.tier
        else f"arms[{i}].strategies"
        if len(spec.arms) > 1
        else "seats.strategies"
    )


def spec_strategies(spec: Spec) -> list[tuple[str, str]]:
    """Every (key, strategy) of an experiment spec's seats, as check_code takes them."""
    return [
        (f"{seat_key(spec, i)}[{j}]", text) for i, arm in enumerate(spec.arms) for j, text in enumerate(arm.strategies)
    ]


def _strategy(text: Any) -> str:
    try:
        return check_strategy(text)
    except ValueError as e:
        fail(str(e))


def _named(name: str) -> str:
    if not NAME_RE.match(name):
        fail(f"expected letters, digits, '.', '_' or '-' (at most 64), got {name!r}")
    return name


Strategy = Annotated[Any, AfterValidator(_strategy)]  # a strategy spec, stripped
if TYPE_CHECKING:
    StrategyPair = list[str]  # what the validator below yields: two strategy specs
else:
    StrategyPair = before(
        lambda v: (
            v
            if isinstance(v, list) and len(v) == 2
            else fail(f'expected two strategies, one per seat, e.g. ["random", "random"], got {v!r}')
        ),
        list[Strategy],
    )


def seat_pair(strategies: StrategyPair) -> tuple[str, str]:
    """A checked StrategyPair as the (seat 0, seat 1) strategies."""
    first, second = strategies
    return first, second


def run_name(what: str = "a short name of letters, digits, '.', '_' or '-'") -> Any:
    """A name that can be a folder's: letters, digits, '.', '_' or '-' (at most 64)."""
    return Annotated[nonblank(what), AfterValidator(_named)]


RunName = run_name()


# -- the spec ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardFile:
    """A protocol or variant file the spec uses: its path as written and its exact contents."""

    path: str
    text: str
    sha256: str


@dataclass(frozen=True)
class Arm:
    """One card pool and pair of strategies; an A/B study has several, sharing every seed. A tier of a
    tier study (`tier`) is an arm that differs from the others only by its strategies; a duel (`games`
    set, from [strength]) plays one tier's strategy against the tier's below it."""

    name: str
    sets: tuple[str, ...]
    cards: tuple[CardFile, ...]
    strategies: tuple[str, str]
    tier: bool = False
    games: int = 0  # games per matchup of a duel ([strength]); 0: the spec's games
    holds: str = ""  # draft mode holding: the protocol whose block of matchups alone this arm plays; "": all

    @property
    def duel(self) -> bool:
        return self.games > 0


@dataclass(frozen=True)
class Draft:
    mode: str
    matchups: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()
    protocols: tuple[str, ...] = ()
    trios: tuple[tuple[str, ...], ...] = ()
    samples: int = 0
    policy: tuple[str, ...] = ()  # mode "draft": each seat's draft strategy (seat 0, seat 1)
    tables: tuple[CardFile, ...] = ()  # the fitted draft tables they name, read when the spec is loaded


@dataclass(frozen=True)
class Spec:
    """An experiment, validated and with its card files read."""

    name: str
    seed: int
    games: int
    turn_cap: int
    shard_games: int
    events: bool | str | float  # true (all games), false (games only), "none" (summaries only), a fraction
    swap: bool
    draft: Draft
    arms: tuple[Arm, ...]
    description: str = ""
    output: str = "runs"
    source: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] | None = None  # [meta]: a metagame loop (protolab/experiment/meta/psro.py), else None
    tune: dict[str, Any] | None = None  # [tune]: a balance search (protolab/experiment/tune/tune.py), else None
    stop: dict[str, Any] | None = None  # [stop]: play until settled (protolab/experiment/run/stopping.py)
    strength: dict[str, Any] | None = None  # [strength]: adjacent tiers head to head (strengthspec.py)

    def arm_games(self, arm: Arm) -> int:
        """Games per matchup of `arm`: a duel's own, else the spec's."""
        return arm.games or self.games

    def to_dict(self) -> dict[str, Any]:
        """The spec as loaded (JSON-safe): stored in run.json and hashed."""
        d = self.draft
        draft: dict[str, Any] = {"mode": d.mode}
        if d.mode == "fixed":
            draft["matchups"] = [[list(a), list(b)] for a, b in d.matchups]
        if d.mode in ("round_robin", "sampled", "holding"):
            if d.trios:
                draft["trios"] = [list(t) for t in d.trios]
            if d.protocols:
                draft["protocols"] = list(d.protocols)
        if d.mode in ("sampled", "holding"):
            draft["samples"] = d.samples
        if d.mode == "draft":
            draft["policy"] = list(d.policy)
            draft["tables"] = [{"path": t.path, "sha256": t.sha256} for t in d.tables]
        tiers = {"tiers": [a.name for a in self.arms if a.tier]} if any(a.tier for a in self.arms) else {}
        loop = {"meta": dict(self.meta)} if self.meta else {}
        if self.tune:
            loop["tune"] = dict(self.tune)
        if self.stop:
            loop["stop"] = dict(self.stop)
        if self.strength:
            loop["strength"] = dict(self.strength)
        return {
            **tiers,
            **loop,
            "format": SPEC_FORMAT,
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "games": self.games,
            "turn_cap": self.turn_cap,
            "shard_games": self.shard_games,
            "events": self.events,
            "output": self.output,
            "seats": {"strategies": list(self.arms[0].strategies), "swap": self.swap},
            "draft": draft,
            "arms": [
                {
                    "name": a.name,
                    "sets": list(a.sets),
                    "strategies": list(a.strategies),
                    "cards": [{"path": c.path, "sha256": c.sha256} for c in a.cards],
                    **({"holds": a.holds} if a.holds else {}),
                }
                for a in self.arms
            ],
            "source": self.source,
            "overrides": dict(self.overrides),
        }

    @functools.cached_property
    def hash(self) -> str:
        """What the rows depend on: everything but where the spec and the output live (computed
        once per spec: every shard's task carries it)."""
        d = self.to_dict()
        for k in ("output", "source", "overrides", "description"):
            d.pop(k)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


# -- finding spec files -----------------------------------------------------------------------------


def examples_dir() -> Path:
    """datasets/experiments of the source tree, or of the installed `protolab_datasets` package."""
    here = Path(__file__).resolve().parent.parent.parent / "datasets" / "experiments"
    if here.is_dir():
        return here

    return Path(str(files("protolab_datasets") / "experiments"))


def find_spec(arg: str) -> Path:
    """A spec path as given, or the name of a shipped example ("demo", "demo.toml",
    "datasets/experiments/demo.toml" from anywhere). A bare name that is a folder here (a `tiers/`
    in the working folder) is no spec file, so the shipped example of that name is meant."""
    p = Path(arg)
    if p.is_file():
        return p
    name = p.name if p.suffix == ".toml" else p.name + ".toml"
    shipped = examples_dir() / name
    bare = "/" not in arg and os.sep not in arg
    if p.exists() and not (bare and p.is_dir() and shipped.is_file()):
        raise SpecError(f"{arg}: not a regular file (a folder, device or pipe); expected an experiment spec file")
    if shipped.is_file():
        return shipped
    known = ", ".join(sorted(x.stem for x in examples_dir().glob("*.toml")))
    raise SpecError(f"{arg}: file not found; expected an experiment spec file or one of the shipped examples ({known})")


# -- loading ----------------------------------------------------------------------------------------


def _unknown_key(p: Problem) -> str:
    return f"unknown key; expected one of: {', '.join(sorted(p.allowed))}"


class Checker:
    """Errors phrased 'FILE: key K: expected X, got Y': a table checked by its model (`model`), and the
    few single values checked where their bounds depend on other keys (`integer`, `string`, ...)."""

    def __init__(self, source: str, within: str = ""):
        self.source = source
        self.within = within  # the key the spec sits under in its file (run.json: "spec")

    def error(self, key: str, msg: str) -> SpecError:
        full = f"{self.within}.{key}" if self.within and key else key or self.within
        return SpecError(f"{self.source}: key '{full}': {msg}")

    def model(self, raw: Any, key: str, model: type[M], unknown: Callable[[Problem], str] | None = None) -> M:
        """`raw` checked by `model` (sim/schema.py): the first problem found, as one line naming its key;
        `unknown` phrases an unknown key (default: the keys the table takes)."""
        try:
            return model.model_validate(raw)
        except ValidationError as e:
            p = problem(e, model, unknown or _unknown_key)
            raise self.error(f"{key}.{p.key}" if key and p.key else key or p.key, p.message) from None

    def integer(self, raw: Any, key: str, lo: int, hi: int, what: str) -> int:
        if not (is_whole(raw) and lo <= raw <= hi):
            raise self.error(key, f"{integer_expected(lo, hi, what)}; got {raw!r}")
        return raw

    def string(self, raw: Any, key: str, what: str) -> str:
        if not isinstance(raw, str) or not raw.strip():
            raise self.error(key, f"expected {what}, got {raw!r}")
        return raw.strip()

    def strings(self, raw: Any, key: str, what: str) -> list[str]:
        if not isinstance(raw, list):
            raise self.error(key, f"expected a list of {what}, got {raw!r}")
        return [self.string(x, f"{key}[{i}]", what) for i, x in enumerate(raw)]

    def strategy(self, raw: Any, key: str) -> str:
        try:
            return check_strategy(raw)
        except ValueError as e:
            raise self.error(key, str(e)) from None


def read_card_file(check: Checker, base: Path, raw: Any, key: str) -> CardFile:
    """Read a protocol or variant file named by the spec (relative to the spec's folder)."""
    rel = check.string(raw, key, "the path of a protocol or variant file")
    p = Path(rel) if Path(rel).is_absolute() else base / rel
    if not p.exists():
        raise check.error(
            key,
            f"cannot read {rel!r} ({p}): no such file; expected a protocol or variant "
            "file (docs/cards.md), relative to the spec's folder",
        )
    found = read_beside(check, base, rel, key, "a readable UTF-8 protocol or variant file (docs/cards.md)")
    try:
        parse_toml(found.text)
    except tomllib.TOMLDecodeError as e:
        raise check.error(
            key, f"{rel!r} ({p}) is not valid TOML ({e}); expected a protocol or variant file (docs/cards.md)"
        ) from None
    return found


def read_beside(check: Checker, base: Path, rel: str, key: str, expected: str, what: str = "") -> CardFile:
    """A file the spec names, relative to the spec's folder, read with the input limits and kept
    whole (text and checksum) for the run's inputs/; an unreadable one is an error naming the key."""
    p = Path(rel) if Path(rel).is_absolute() else base / rel
    try:
        data = read_input_bytes(p)
        text = data.decode("utf-8")
    except (InputFileError, UnicodeDecodeError) as e:
        reason = str(e).removeprefix(f"{p}: ")
        raise check.error(key, f"cannot read {what}{rel!r} ({p}): {reason}; expected {expected}") from None
    return CardFile(path=rel, text=text, sha256=hashlib.sha256(data).hexdigest())


def read_spec_file(arg: str | Path) -> tuple[dict[str, Any], str, Path]:
    """(the TOML table, the name to give in errors, the folder its relative paths start from) of a
    spec file or a shipped example's name: every kind of spec (runs, training) is read this way."""
    path = find_spec(str(arg))
    source = str(arg) if Path(str(arg)).is_file() else str(path)
    try:
        raw = parse_toml(read_input_text(path))
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{source}: not valid TOML: {e}") from None
    except InputFileError as e:
        raise SpecError(str(e).replace(str(path), source, 1)) from None
    found = find_control_char(raw)
    if found:
        raise SpecError(
            f"{source}: key '{found[0]}': contains the control character {describe_char(found[1])}; "
            "expected printable text"
        )
    return raw, source, path.resolve().parent


class PoolTable(Checked):
    sets: Annotated[
        texts("set names"), AfterValidator(lambda v: v or fail('expected at least one set, e.g. ["Main 1", "Aux 1"]'))
    ] = list(DEFAULT_SETS)
    cards: Any = []  # card files: read by _card_reader


class SeatsTable(Checked):
    strategies: StrategyPair = ["random", "random"]
    swap: Annotated[bool, Field(description="true or false")] = False


class RunFile(Checked):
    """A run spec's top level: the keys every spec has, with their values; the tables below it are
    checked by their own models or parsers (draft, arms, tiers, meta, tune, stop, strength)."""

    name: Annotated[RunName, Field(description='a short run name, e.g. name = "demo"')]
    description: check(lambda v: isinstance(v, str), "a string") = ""
    seed: Annotated[
        integer(0, 2**63 - 1, "the master seed"), Field(description="the master seed, a whole number, e.g. seed = 1")
    ]
    games: Annotated[
        integer(1, MAX_GAMES, "the number of games per matchup"),
        Field(description="the number of games per matchup, e.g. games = 10000"),
    ]
    turn_cap: integer(1, 10_000, "the turn cap") = 200
    output: nonblank("an output folder") = "runs"
    shard_games: Any = None  # its default depends on [stop]: parse_spec
    events: Any = True  # parse_events
    pool: PoolTable = PoolTable()
    seats: SeatsTable = SeatsTable()
    draft: Any = None
    arms: Any = None
    tiers: Any = None
    meta: Any = None
    tune: Any = None
    stop: Any = None
    strength: Any = None


class Overrides(Checked):
    games: integer(1, MAX_GAMES, "the --games given") | None = None


class StoredRunFile(RunFile):
    """The form protolab stores (Spec.to_dict, run.json's spec): where the spec came from and what the
    command line changed, kept so that a resumed run says so."""

    format: integer(SPEC_FORMAT, SPEC_FORMAT, "the stored spec's format")
    source: check(lambda v: isinstance(v, str), "the path of the spec file") = ""
    overrides: Overrides = Overrides()


def load_spec(arg: str | Path, games: int | None = None) -> Spec:
    """Read, validate and normalise a spec file; `games` overrides its `games` (`--games`)."""
    raw, source, base = read_spec_file(arg)
    return parse_spec(raw, source, base, games=games)


def _stored(f: RunFile, raw: dict[str, Any], source: str) -> tuple[str, dict[str, Any]]:
    """(source, overrides) of the stored form: where the spec came from and what the command line
    changed, kept so that a resumed run says so; a spec file's own name and no overrides otherwise."""
    if not isinstance(f, StoredRunFile):
        return source, {}
    overrides = {"games": f.overrides.games} if f.overrides.games is not None else {}
    return (f.source if "source" in raw else source), overrides


def _games(games: int | None, n_games: int, overrides: dict[str, Any]) -> int:
    """The games per matchup: the spec's, or `games` (--games), then recorded in `overrides`."""
    if games is None:
        return n_games
    if isinstance(games, bool) or not isinstance(games, int) or not 1 <= games <= MAX_GAMES:
        raise SpecError(
            f"--games: expected a whole number of games per matchup, at least 1 and at most "
            f"{MAX_GAMES:,}; got {games!r}"
        )
    overrides["games"] = games
    return games


CardsFn = Callable[[Any, str], tuple[CardFile, ...]]
_AS_STORED = "a card file as {path, sha256}"


class CardRef(Strict):
    """A card file as the stored form names it: its path and checksum (checked against the file read)."""

    path: Annotated[Any, Field(description=_AS_STORED)]
    sha256: Annotated[nonblank("a SHA-256 checksum"), Field(description=_AS_STORED)]


class ArmTable(Strict):
    """One [[arms]] table: a name, and the pool and strategies where it differs from the spec's."""

    name: Annotated[run_name("an arm name"), Field(description='a short arm name, e.g. name = "official"')]
    sets: texts("set names") | None = None
    cards: Any = []  # card files: read by _card_reader
    strategies: StrategyPair | None = None
    holds: str | None = Field(
        None,
        description="draft mode holding: play only the matchups in which seat 0 holds this protocol (one of "
        "draft.protocols), on the same seeds as the arms that play them all",
    )


class TierTable(Strict):
    """One [[tiers]] table: a strategy for both seats or one per seat, and a name (by default the strategy's)."""

    name: run_name("a tier name") | None = None
    strategy: Strategy | None = None
    strategies: StrategyPair | None = None

    @model_validator(mode="after")
    def _one_of_them(self) -> TierTable:
        if (self.strategy is None) == (self.strategies is None):
            fail('expected exactly one of strategy = "greedy" (both seats) or strategies = [seat 0, seat 1]')
        return self


def _card_reader(c: Checker, base: Path, card_texts: dict[str, str] | None) -> CardsFn:
    """(list, key) -> the card files a list names, each a path or a {path, sha256} table (the stored
    form, checked against the file read): read from disk, or from the run's copies (inputs/)."""

    def one(x: Any, key: str) -> CardFile:
        want = None
        if isinstance(x, dict):
            t = c.model(x, key, CardRef)
            x, key, want = t.path, f"{key}.path", t.sha256
        if card_texts is None:
            found = read_card_file(c, base, x, key)
        elif isinstance(x, str) and x in card_texts:
            found = CardFile(x, card_texts[x], hashlib.sha256(card_texts[x].encode()).hexdigest())
        else:
            raise c.error(key, f"the run's copy of {x!r} is missing (expected it in inputs/)")
        if want is not None and want != found.sha256:
            raise c.error(
                key.removesuffix(".path") + ".sha256",
                f"{found.path!r} has checksum {found.sha256}, not {want}: not the file recorded",
            )
        return found

    def cards(lst: Any, key: str) -> tuple[CardFile, ...]:
        if not isinstance(lst, list):
            raise c.error(key, f"expected a list of protocol or variant files, got {lst!r}")
        return tuple(one(x, f"{key}[{i}]") for i, x in enumerate(lst))

    return cards


def _check_swap(c: Checker, swap: bool, n_games: int, shard_games: int, overrides: dict[str, Any]) -> None:
    if swap and n_games % 2:
        msg = f"expected an even number when seats.swap = true (the two games of a pair share a seed), got {n_games}"
        raise SpecError(f"--games: {msg}") if "games" in overrides else c.error("games", msg)
    if swap and shard_games % 2:
        raise c.error("shard_games", f"expected an even number when seats.swap = true, got {shard_games}")


def _parse_arm_list(
    c: Checker,
    arms_raw: Any,
    sets: tuple[str, ...],
    base_cards: tuple[CardFile, ...],
    strategies: tuple[str, str],
    cards: CardsFn,
) -> tuple[Arm, ...]:
    if not isinstance(arms_raw, list) or not arms_raw:
        raise c.error("arms", "expected one or more [[arms]] tables")
    if len(arms_raw) > MAX_ARMS:
        raise c.error("arms", f"expected at most {MAX_ARMS} [[arms]] tables, got {len(arms_raw)}")
    arms: list[Arm] = []
    for i, a in enumerate(arms_raw):
        key = f"arms[{i}]"
        t = c.model(a, key, ArmTable)
        if any(x.name == t.name for x in arms):
            raise c.error(f"{key}.name", f"expected a name not used by another arm, got {t.name!r} twice")
        arms.append(
            Arm(
                t.name,
                sets if t.sets is None else tuple(t.sets),
                base_cards + cards(t.cards, f"{key}.cards"),
                strategies if t.strategies is None else seat_pair(t.strategies),
                holds=t.holds or "",
            )
        )
    return tuple(arms)


def _parse_arms(
    c: Checker,
    raw: dict[str, Any],
    seats: dict[str, Any],
    sets: tuple[str, ...],
    base_cards: tuple[CardFile, ...],
    strategies: tuple[str, str],
    cards: CardsFn,
) -> tuple[Arm, ...]:
    """The spec's arms: its tiers, its [[arms]], or one arm of the pool and seats."""
    arms_raw = raw.get("arms")
    if "tiers" in raw and "format" in raw:
        if "strength" in raw and isinstance(arms_raw, list) and isinstance(raw["tiers"], list):
            arms_raw = arms_raw[: len(raw["tiers"])]  # the duels after them are made again from the tiers
        return _stored_tiers(c, raw["tiers"], _parse_arm_list(c, arms_raw, sets, base_cards, strategies, cards))
    if "tiers" in raw:
        if arms_raw is not None:
            raise c.error(
                "tiers", "expected either [[arms]] (pools that differ) or tiers (strategies that differ), not both"
            )
        if "strategies" in seats:
            raise c.error("seats.strategies", "not used with tiers: each tier names its strategies; remove it")
        return _parse_tiers(c, raw["tiers"], sets, base_cards)
    if arms_raw is None:
        return (Arm(DEFAULT_ARM, sets, base_cards, strategies),)
    return _parse_arm_list(c, arms_raw, sets, base_cards, strategies, cards)


def _stored_tiers(c: Checker, raw: Any, arms: tuple[Arm, ...]) -> tuple[Arm, ...]:
    """A tier study as stored: `tiers` names the arms, which carry the tiers' strategies and share one
    pool ([strength]'s duels, listed after them, are left out by the caller: they are made again from
    the tiers, and so checked when the whole spec is read back)."""
    names = c.strings(raw, "tiers", "tier names")
    if names != [a.name for a in arms] or len(arms) < 2:
        raise c.error("tiers", f"expected the names of the 2 or more arms, {[a.name for a in arms]}, got {names!r}")
    if any((a.sets, a.cards) != (arms[0].sets, arms[0].cards) for a in arms):
        raise c.error("arms", "expected one pool (sets and cards) shared by every tier")
    return tuple(dataclasses.replace(a, tier=True) for a in arms)


def parse_spec(
    raw: dict[str, Any],
    source: str,
    base: Path,
    games: int | None = None,
    card_texts: dict[str, str] | None = None,
    within: str = "",
) -> Spec:
    """Validate the TOML tables of a spec, or its stored form (Spec.to_dict, marked by `format`),
    which must read back as it is. `card_texts` (path -> contents) replaces reading the card files
    from disk: `--resume` parses run.json's spec (`within` "spec") with the run's inputs/."""
    c = Checker(source, within)
    if "train" in raw:
        raise c.error("train", "a training spec (docs/training.md): run it with protolab train, not as an experiment")
    if card_texts is not None and "format" not in raw:
        raise c.error("format", f"missing; expected the spec as protolab stores it (format = {SPEC_FORMAT})")
    f = c.model(raw, "", StoredRunFile if "format" in raw else RunFile)
    origin, overrides = _stored(f, raw, source)
    n_games = _games(games, f.games, overrides)
    shard_games = c.integer(
        raw.get("shard_games", _default_shard_games(raw)),
        "shard_games",
        2,
        MAX_SHARD_GAMES,
        "the number of games per shard",
    )
    events = parse_events(c, raw.get("events", True))
    cards = _card_reader(c, base, card_texts)
    base_cards = cards(f.pool.cards, "pool.cards")
    sets = tuple(f.pool.sets)
    strategies = seat_pair(f.seats.strategies)
    swap = f.seats.swap
    seats = raw.get("seats", {})
    _check_swap(c, swap, n_games, shard_games, overrides)
    draft = _parse_draft(c, raw.get("draft", {"mode": "random"}), base, card_texts, "format" in raw)
    arms = _parse_arms(c, raw, seats, sets, base_cards, strategies, cards)
    strength = None
    if "strength" in raw:  # adjacent tiers head to head: one more arm per pair
        strength, duels = parse_strength(c, raw["strength"], arms, draft.mode, swap, MAX_GAMES)
        arms += duels
    meta = parse_meta(c, raw["meta"], draft, len(arms)) if "meta" in raw else None  # a metagame loop
    tune = parse_tune(c, raw["tune"], draft.mode, len(arms)) if "tune" in raw else None
    if meta is not None and tune is not None:
        raise c.error("tune", "expected either [meta] (a metagame loop) or [tune] (a balance search), not both")
    stop = _parse_stop(c, raw, draft.mode, arms, n_games, swap)
    _check_holds(c, arms, draft, stop)
    spec = Spec(
        name=f.name,
        seed=f.seed,
        games=n_games,
        turn_cap=f.turn_cap,
        shard_games=shard_games,
        events=events,
        swap=swap,
        draft=draft,
        arms=arms,
        description=f.description.strip(),
        output=f.output,
        source=origin,
        overrides=overrides,
        meta=meta,
        tune=tune,
        stop=stop,
        strength=strength,
    )
    if "format" in raw:
        _check_reads_back(c, spec.to_dict(), raw)
    return spec


def _check_holds(c: Checker, arms: tuple[Arm, ...], draft: Draft, stop: dict[str, Any] | None) -> None:
    """An arm's `holds` names one block of draft mode holding (spec.Arm.holds); a run that stops when
    settled compares arms batch by batch, so its arms play every block."""
    held = {p.lower() for p in draft.protocols}
    for i, arm in enumerate(arms):
        if not arm.holds:
            continue
        if draft.mode != "holding":
            raise c.error(f"arms[{i}].holds", f"expected only with draft mode 'holding', got mode {draft.mode!r}")
        if arm.holds.lower() not in held:
            raise c.error(
                f"arms[{i}].holds", f"expected one of draft.protocols ({', '.join(draft.protocols)}), got {arm.holds!r}"
            )
        if stop is not None:
            raise c.error(f"arms[{i}].holds", "expected no [stop] with arms that play one block (remove one of them)")


def _check_reads_back(c: Checker, mine: Any, theirs: Any, key: str = "") -> None:
    """The stored form must be exactly what it parses to (Spec.to_dict): a key that parses but was
    written otherwise (a tier renamed, a checksum changed, a key dropped) was edited."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for k in [*mine, *(k for k in theirs if k not in mine)]:
            sub = f"{key}.{k}" if key else k
            if k not in theirs:
                raise c.error(sub, "missing; expected the stored spec as protolab writes it (was it edited?)")
            _check_reads_back(c, mine.get(k), theirs[k], sub)
    elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            _check_reads_back(c, a, b, f"{key}[{i}]")
    elif mine != theirs:
        raise c.error(key, f"reads as {mine!r}, but {theirs!r} is stored (was it edited?)")


def _default_shard_games(raw: dict[str, Any]) -> int:
    """A run that stops when settled looks after every `stop.batch` games: its shards default to one batch."""
    stop = raw.get("stop")
    batch = stop.get("batch", STOP_DEFAULTS["batch"]) if isinstance(stop, dict) else None
    if isinstance(batch, int) and not isinstance(batch, bool) and 2 <= batch <= MAX_SHARD_GAMES and batch % 2 == 0:
        return batch
    return DEFAULT_SHARD_GAMES


def _parse_stop(
    c: Checker, raw: dict[str, Any], mode: str, arms: tuple[Arm, ...], games: int, swap: bool
) -> dict[str, Any] | None:
    if "stop" not in raw:
        return None
    if "meta" in raw or "tune" in raw:
        raise c.error("stop", "expected [stop] on an A/B run, not with [meta] or [tune] (they stop by their own rules)")
    return parse_stop(c, raw["stop"], mode, len(arms), any(a.tier for a in arms), games, swap)


def tier_name(strategy: str) -> str:
    """A tier's default name: its strategy spec made safe for a run name (`ismcts:iters=300` ->
    `ismcts-iters-300`)."""
    return _UNSAFE.sub("-", strategy).strip("-._")[:64] or "tier"


def _parse_tier(c: Checker, raw: Any, key: str) -> tuple[str, tuple[str, str]]:
    """One tier: a strategy spec (both seats play it) or a table {name, strategy | strategies}."""
    if isinstance(raw, str):
        s = c.strategy(raw, key)
        return tier_name(s), (s, s)
    t = c.model(raw, key, TierTable)
    if t.strategy is not None:
        pair = (t.strategy, t.strategy)
    else:
        assert t.strategies is not None  # one of the two (TierTable._one_of_them)
        pair = seat_pair(t.strategies)
    return t.name or tier_name(pair[0]), pair


def _parse_tiers(c: Checker, raw: Any, sets: tuple[str, ...], cards: tuple[CardFile, ...]) -> tuple[Arm, ...]:
    """`tiers`: the same pool, seeds and drafts played by each tier's strategies (one arm per tier)."""
    if not isinstance(raw, list) or not 2 <= len(raw) <= MAX_ARMS:
        raise c.error(
            "tiers",
            f'expected a list of 2 to {MAX_ARMS} tiers, e.g. tiers = ["greedy", "search"] or '
            f"[[tiers]] tables, got {raw!r}",
        )
    out: list[Arm] = []
    for i, item in enumerate(raw):
        name, pair = _parse_tier(c, item, f"tiers[{i}]")
        if any(a.name == name for a in out):
            raise c.error(
                f"tiers[{i}]",
                f"expected a tier name not used by another tier, got {name!r} twice "
                "(give it a name: [[tiers]] name = ...)",
            )
        out.append(Arm(name, sets, cards, pair, tier=True))
    return tuple(out)


# -- the [draft] table: one model per mode ---------------------------------------------------------


def _trio_shape(raw: Any) -> Any:
    raw = [x.strip() for x in raw.split(",")] if isinstance(raw, str) else raw
    if not isinstance(raw, list) or len(raw) != 3:
        fail(f'expected a trio of protocols, e.g. ["Fire", "Water", "Death"], got {raw!r}')
    return raw


def _three_different(trio: list[str]) -> tuple[str, ...]:
    if len({t.lower() for t in trio}) != 3:
        fail(f"expected three different protocols, got {list(trio)}")
    return tuple(trio)


def _matchup(m: Any) -> Any:
    if not isinstance(m, list) or len(m) != 2:
        fail(f"expected two trios (seat 0, seat 1), got {m!r}")
    return m


def _six_different(pair: list[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    a, b = pair
    common = sorted(x for x in a if x.lower() in {y.lower() for y in b})
    if common:
        fail(f"expected six different protocols; both trios have {common}")
    return tuple(pair)


# an item type built at runtime (Annotated), which mypy cannot read as a type
Trio = Annotated[
    before(_trio_shape, list[nonblank("a protocol name")]),  # type: ignore[misc]
    AfterValidator(_three_different),
]
Matchup = Annotated[before(_matchup, list[Trio]), AfterValidator(_six_different)]
Protocols = texts("protocol names")


class RandomDraft(Strict):
    mode: str = "random"


class PolicyDraft(Strict):
    mode: str
    policy: Any = "random"  # a draft strategy or two: _parse_policy reads their tables


class StoredPolicyDraft(PolicyDraft):
    tables: Any = None  # the stored form's fitted tables: checked when read back


class FixedDraft(Strict):
    mode: str
    matchups: Annotated[
        before(
            lambda v: (
                v
                if isinstance(v, list) and v
                else fail(
                    "expected a list of matchups, each two trios: "
                    '[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]'
                )
            ),
            list[Matchup],
        ),
        Field(
            description='a list of matchups, each two trios: [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]'
        ),
    ]


class RoundRobinDraft(Strict):
    mode: str
    protocols: Annotated[
        Protocols,
        AfterValidator(
            lambda v: (
                v if len({p.lower() for p in v}) >= 6 else fail(f"expected at least six different protocols, got {v}")
            )
        ),
    ] = []
    trios: before(
        lambda v: (
            v
            if isinstance(v, list) and 2 <= len(v) <= MAX_TRIOS
            else fail(f"expected a list of 2 to {MAX_TRIOS:,} trios")
        ),
        list[Trio],
    ) = []

    @model_validator(mode="after")
    def _one_source(self) -> RoundRobinDraft:
        if self.protocols and self.trios:
            fail("expected either protocols or trios, not both", "trios")
        return self


class SampledDraft(RoundRobinDraft):
    samples: Annotated[
        integer(1, MAX_MATCHUPS, "the number of matchups to sample"),
        Field(description="the number of matchups to sample, e.g. samples = 500"),
    ]


class HoldingDraft(Strict):
    mode: str
    protocols: Annotated[
        Protocols,
        AfterValidator(
            lambda v: (
                v
                if v and len({p.lower() for p in v}) == len(v)
                else fail(f"expected one or more different protocols, got {v}")
            )
        ),
        Field(description='the protocols seat 0 holds, e.g. protocols = ["Fire"]'),
    ]
    samples: Annotated[
        integer(1, MAX_MATCHUPS, "the number of matchups per protocol"),
        Field(description="the number of matchups per protocol, e.g. samples = 500"),
    ]

    @model_validator(mode="after")
    def _not_too_many(self) -> HoldingDraft:
        n = self.samples * len(self.protocols)
        if n > MAX_MATCHUPS:
            fail(
                f"expected at most {MAX_MATCHUPS:,} matchups in all; {self.samples:,} for each of "
                f"{len(self.protocols)} protocols make {n:,}",
                "samples",
            )
        return self


DRAFT_TABLES: dict[str, type[Strict]] = {
    "random": RandomDraft,
    "draft": PolicyDraft,
    "fixed": FixedDraft,
    "round_robin": RoundRobinDraft,
    "sampled": SampledDraft,
    "holding": HoldingDraft,
}


def _not_this_mode(mode: str) -> Callable[[Problem], str]:
    """The message for a key the mode does not take: which mode it belongs to, if any."""

    def say(p: Problem) -> str:
        modes = [m for m in DRAFT_MODES if p.key in DRAFT_TABLES[m].model_fields]
        hint = f"it belongs to mode {' or '.join(modes)}" if modes else "unknown key"
        return f"not used with mode = {mode!r} ({hint}); expected: {', '.join(sorted(p.allowed))}"

    return say


def _parse_draft(
    c: Checker, raw: Any, base: Path = Path("."), card_texts: dict[str, str] | None = None, stored: bool = False
) -> Draft:
    """`draft`; in the stored form mode "draft" also lists the `tables` its policies read (checked
    against them when the whole spec is read back)."""
    if not isinstance(raw, dict):
        raise c.error("draft", f"expected a table with mode = one of {', '.join(DRAFT_MODES)}, got {raw!r}")
    mode = raw.get("mode", "random")
    if mode not in DRAFT_MODES:
        raise c.error("draft.mode", f"expected one of {', '.join(DRAFT_MODES)}, got {mode!r}")
    model = StoredPolicyDraft if stored and mode == "draft" else DRAFT_TABLES[mode]
    t = c.model(raw, "draft", model, _not_this_mode(mode))
    if isinstance(t, PolicyDraft):
        return _parse_policy(c, raw, base, card_texts)
    if isinstance(t, FixedDraft):
        return Draft("fixed", matchups=tuple(t.matchups))
    if isinstance(t, HoldingDraft):
        return Draft("holding", protocols=tuple(t.protocols), samples=t.samples)
    if isinstance(t, RoundRobinDraft):
        return Draft(mode, protocols=tuple(t.protocols), trios=tuple(t.trios), samples=getattr(t, "samples", 0))
    return Draft("random")


def parse_events(c: Checker, raw: Any) -> bool | str | float:
    """`events`: true or "all" (every game's events), a fraction between 0 and 1 (the events of that
    share of the games, chosen from each game's seed), "none" (no events, but the per-shard summaries
    `cards` and `compiles`, from every game), or false (the games table only). Normalised so that
    "all" and 1 hash as true, and 0 as "none"."""
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("all", "none"):
        return True if raw.strip().lower() == "all" else "none"
    if isinstance(raw, int | float) and 0 <= raw <= 1:
        return True if raw == 1 else "none" if raw == 0 else float(raw)
    raise c.error(
        "events", f'expected true, false, "all", "none" or a fraction between 0 and 1 (e.g. 0.1), got {raw!r}'
    )


def _parse_policy(c: Checker, raw: dict[str, Any], base: Path, card_texts: dict[str, str] | None) -> Draft:
    """mode = "draft": the 1-2-2-1 draft with a draft strategy per seat, `policy = "fitted:FILE"` (both
    seats) or `policy = ["fitted:FILE", "random"]`; FILE is relative to the spec and read now, so the
    workers and --resume use its contents, not the path."""

    pol = raw.get("policy", "random")
    if isinstance(pol, str):
        pol = [pol, pol]
    if not isinstance(pol, list) or len(pol) != 2:
        raise c.error(
            "draft.policy", f'expected a draft strategy or two (seat 0, seat 1), e.g. "fitted:FILE", got {pol!r}'
        )
    policy, tables = [], {}
    for i, text in enumerate(pol):
        key = f"draft.policy[{i}]" if not isinstance(raw.get("policy"), str) else "draft.policy"
        text = c.string(text, key, "a draft strategy: random or fitted:FILE[,style=...][,temp=T]")
        kind, _, arg = text.partition(":")
        if text == "random":
            policy.append(text)
            continue
        if kind != "fitted":
            raise c.error(key, f"expected random or fitted:FILE[,style=full|greedy|counter][,temp=T], got {text!r}")
        try:
            path = parse_fitted(arg).path
        except DraftTableError as e:
            raise c.error(key, str(e)) from None
        if path not in tables:
            if card_texts is not None:
                if path not in card_texts:
                    raise c.error(key, f"the run's copy of {path!r} is missing (expected it in inputs/)")
                text_ = card_texts[path]
                tables[path] = CardFile(path, text_, hashlib.sha256(text_.encode()).hexdigest())
            else:
                tables[path] = read_beside(
                    c,
                    base,
                    path,
                    key,
                    "a fitted draft table (docs/strategies.md), relative to the spec's folder",
                    what="the draft table ",
                )
        policy.append(text)
    return Draft("draft", policy=tuple(policy), tables=tuple(tables.values()))


def check_matchups(spec: Spec, count: int) -> None:
    """Refuse a draft with more than MAX_MATCHUPS matchups (`count` may be an upper bound), before
    they are listed."""
    if count > MAX_MATCHUPS:
        raise SpecError(
            f"{spec.source}: key 'draft': up to {count:,} matchups; expected at most {MAX_MATCHUPS:,} "
            '(fewer protocols or trios, or mode = "sampled")'
        )


def check_size(spec: Spec, matchups: int, shard_games: int, arm_matchups: list[int] | None = None) -> None:
    """Refuse a run too large to lay out (games in all, shards of `shard_games`) before its shards
    are listed; `arm_matchups`: each arm's matchups where they differ from `matchups` (Arm.holds)."""
    counts = arm_matchups or [max(1, matchups)] * len(spec.arms)
    sizes = [n * spec.arm_games(a) for n, a in zip(counts, spec.arms, strict=True)]
    total = sum(sizes)
    key = "--games" if "games" in spec.overrides else "games"
    if total > MAX_TOTAL_GAMES:
        duels = [a for a in spec.arms if a.duel]
        pairs = f" + {len(duels)} head-to-head pairs x {duels[0].games:,}" if duels else ""
        raise SpecError(
            f"{spec.source}: key '{key}': {spec.games:,} games per matchup x {max(1, matchups):,} "
            f"matchups x {len(spec.arms) - len(duels)} arms{pairs} = {total:,} games; expected at most "
            f"{MAX_TOTAL_GAMES:,} games in one run"
        )
    shards = sum(-(-n // shard_games) for n in sizes)
    if shards > MAX_SHARDS:
        raise SpecError(
            f"{spec.source}: key '{key}': {total:,} games in shards of {shard_games:,} make "
            f"{shards:,} shards; expected at most {MAX_SHARDS:,} (fewer games, or larger shards: "
            "shard_games, docs/experiments.md)"
        )


# -- the [meta] table (the metagame loop, psro.py) ------------------------------------------------

META_KEYS = {"mode", "iterations", "responses", "epsilon", "tolerance", "start", "prior_games"}
META_DEFAULTS: dict[str, Any] = {
    "mode": "psro",
    "iterations": 6,
    "responses": 2,
    "epsilon": 0.01,
    "tolerance": 0.02,
    "start": 6,
    "prior_games": 10.0,
}
MAX_ITERATIONS = 50


class MetaTable(Checked):
    """`[meta]`: each key with the values it takes; its default is META_DEFAULTS'."""

    mode: Annotated[
        Any, AfterValidator(lambda v: v if v == "psro" else fail(f'expected "psro" (the metagame loop), got {v!r}'))
    ] = "psro"
    iterations: integer(1, MAX_ITERATIONS, "the most runs the loop plays") = META_DEFAULTS["iterations"]
    responses: integer(1, 20, "best-response trios added per iteration") = META_DEFAULTS["responses"]
    epsilon: number(0, 0.5, "the gain (win rate - 50%) a best response needs to be added") = META_DEFAULTS["epsilon"]
    tolerance: number(0, 1, "the total-variation change below which the equilibrium has stopped moving") = (
        META_DEFAULTS["tolerance"]
    )
    start: Any = None  # the number of start trios, unless draft.trios: parse_meta
    prior_games: number(0, 1e6, "pseudo-games shrinking observed rates toward the model") = META_DEFAULTS["prior_games"]


def parse_meta(c: Checker, raw: Any, draft: Draft, arms: int) -> dict[str, Any]:
    """Validate `[meta]` (called by spec.parse_spec with its checker, so errors name file and key)."""
    t = c.model(raw, "meta", MetaTable)
    if draft.mode != "round_robin":
        raise c.error(
            "draft.mode",
            f'expected "round_robin" with [meta] (the candidate trios: draft.protocols or '
            f"the pool; draft.trios: the start population), got {draft.mode!r}",
        )
    if arms != 1:
        raise c.error(
            "meta", "expected a spec without [[arms]] or tiers: the loop plays one pool and one pair of strategies"
        )
    out = {k: getattr(t, k) for k in META_DEFAULTS}
    if t.start is not None and draft.trios and t.start != len(draft.trios):
        raise c.error(
            "meta.start",
            "expected either meta.start (random start trios) or draft.trios, not both "
            f"(with draft.trios the start is their number, {len(draft.trios)})",
        )
    out["start"] = (
        len(draft.trios)
        if draft.trios
        else c.integer(
            META_DEFAULTS["start"] if t.start is None else t.start, "meta.start", 2, 200, "the number of start trios"
        )
    )
    return out
