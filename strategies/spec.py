"""Strategy specs: the one syntax used everywhere a strategy is named (docs/strategies.md).

random                      uniform over legal options
greedy | rush | disrupt | control      one-ply bots (styles are weight presets)
greedy:w_control=2          any weight overridden by name
search:sims=50,depth=2      determinized flat Monte Carlo (these are the defaults)
ismcts:iters=3000,c=0.7,rollout=rules,leaf=rollout   information-set MCTS (the defaults; rollout=random;
                            leaf=model[,model=NAME]: new nodes scored by a model, not played out, c=0.2;
                            choices=model (leaf=model's default): every choice it is asked planned by the model)
learned:model=learned,sims=1,depth=0,inner=3,branch=4,top=2,reply=2,prune=0   the model's player (the defaults;
                            prune=K[,qmodel=NAME]: only the K candidates the action-value model ranks best played out)
qlearned:model=qlearned,explore=0   the action-value network's player: one pass per legal action
greedy+nodown               restricted play: never play face-down
greedy+avoid:Fire 1         ... never play Fire 1;  +noup:Fire 1  never face-up
random+noproto:Fire         ... never play Fire cards; +norefresh  never refresh holding control
mypkg.bots:MyBot            a user strategy (a class, see strategies/user.py)
"""

from __future__ import annotations

import ast
import csv
import importlib
import importlib.machinery
import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sim.engine._core import SeatConfig

from sim.enums import Restrict
from sim.inputs import InputFileError, read_input_text
from strategies._bots import STYLE_WEIGHTS, WEIGHT_NAMES, configure
from strategies._draft import TableDraft
from strategies._ismcts import (
    CHOICES,
    DEFAULT_C,
    DEFAULT_CHOICES,
    DEFAULT_ITERS,
    DEFAULT_LEAF,
    DEFAULT_MODEL_C,
    DEFAULT_ROLLOUT,
    LEAVES,
    MAX_ITERS,
    ROLLOUTS,
)
from strategies._ismcts import configure as configure_ismcts
from strategies._learned import Learned
from strategies._qlearned import QLearned
from strategies.choices import MODEL, RANDOM, RULE, UNKNOWN
from strategies.declared import ISMCTS, LEARNED, QLEARNED, SEARCH, by_key
from strategies.draft import DraftTableError, fitted_draft
from strategies.errors import StrategyError
from strategies.human import HUMAN, Unattended
from strategies.model import DEFAULT_MODEL, load_model
from strategies.qmodel import load_qmodel
from strategies.user import PythonSeat, Strategy, where_raised

# the engine's restriction flags (declared with the vocabulary: sim/cards/vocabulary/engine_enums.py, Restrict)
R_NO_FACEDOWN = int(Restrict.NO_FACEDOWN)
R_NO_REFRESH_WITH_CONTROL = int(Restrict.NO_REFRESH_WITH_CONTROL)
R_NO_FACEUP = int(Restrict.NO_FACEUP)
Params = dict[str, float | str]
WORDS = {"rollout": ROLLOUTS, "leaf": LEAVES, "choices": CHOICES}  # parameters that take a word
# the players' defaults and limits, declared once (strategies/declared.py; the C side reads the same table)
LEARNED_DEFAULTS = {p.key: p.default for p in LEARNED}
LEARNED_LIMITS = {p.key: (p.lo, p.hi) for p in LEARNED}
LEARNED_KNOBS = by_key(LEARNED)
SEARCH_KNOBS = by_key(SEARCH)
ISMCTS_KNOBS = by_key(ISMCTS)


@dataclass(frozen=True)
class Player:
    """A built-in kind of player: the parameters its spec takes (`name:k=v,...`), how it makes a
    seat play with them (installing its C decision function and context: SeatConfig.set_decider),
    and how it takes the choices inside effects (strategies/choices.py: RULE, MODEL, RANDOM, UNKNOWN)."""

    params: tuple[str, ...]
    configure: Callable[[SeatConfig, Params], None]
    choices: str | Callable[[Params], str]  # RULE, MODEL, RANDOM or UNKNOWN, or that of the spec's params


def _random(seat: SeatConfig, params: Params) -> None:
    """The engine's own uniform player: a new seat already plays it."""


def _bot(style: str) -> Callable[[SeatConfig, Params], None]:
    """greedy, its styles and search (strategies/_bots.pyx)."""

    def configure_bot(seat: SeatConfig, params: Params) -> None:
        weights = dict(params)
        sims = int(weights.pop("sims", SEARCH_KNOBS["sims"].default))
        depth = int(weights.pop("depth", SEARCH_KNOBS["depth"].default))
        configure(seat, style, weights, sims, depth)

    return configure_bot


def _ismcts_choice_word(params: Params) -> str:
    """ismcts's `choices`: as given, else `model` with leaf=model and the rule otherwise."""
    leaf = str(params.get("leaf", DEFAULT_LEAF))
    return str(params.get("choices", "model" if leaf == "model" else DEFAULT_CHOICES))


def _ismcts_choices(params: Params) -> str:
    """How ismcts takes the choices inside effects: the model's planner (choices=model) or the rule."""
    return MODEL if _ismcts_choice_word(params) == "model" else RULE


def _ismcts(seat: SeatConfig, params: Params) -> None:
    """Information-set MCTS (strategies/_ismcts.pyx); `leaf=model` scores its new nodes with a model
    (`model=NAME`, the shipped `learned` by default) instead of playing the game out."""
    leaf = str(params.get("leaf", DEFAULT_LEAF))
    choices = _ismcts_choice_word(params)
    layers, model_hash = None, ""
    if leaf == "model" or choices == "model":
        model = load_model(str(params.get("model", DEFAULT_MODEL)))
        layers, model_hash = [(lay.weights, lay.bias, lay.activation) for lay in model.layers], model.hash
    elif "model" in params:
        raise StrategyError("strategy 'ismcts': model is used with leaf=model or choices=model only")
    c = float(params.get("c", DEFAULT_MODEL_C if leaf == "model" else DEFAULT_C))
    configure_ismcts(
        seat,
        int(params.get("iters", DEFAULT_ITERS)),
        c,
        str(params.get("rollout", DEFAULT_ROLLOUT)),
        leaf,
        layers,
        model_hash,
        choices,
        int(LEARNED_DEFAULTS["inner"]),
        int(LEARNED_DEFAULTS["branch"]),
    )  # the learned player's planner


def _number(params: Params, k: str, default: float | None = None) -> float:
    """A numeric parameter (parse_strategy made every value but a word, like a model's name, a float)."""
    v = params[k] if default is None else params.get(k, default)
    if isinstance(v, str):
        raise StrategyError(f"parameter {k}: expected a number, got {v!r}")
    return v


DEFAULT_QMODEL = "qlearned"  # the shipped action-value model (qlearned's, and learned's with prune=K)


def learned_player(params: Params) -> Learned:
    """The learned player's context for a spec's parameters (strategies/_learned.pyx): the model
    (shipped by name, or a file) and its search settings."""
    model = load_model(str(params.get("model", DEFAULT_MODEL)))
    knobs = {k: _number(params, k, v) for k, v in LEARNED_DEFAULTS.items()}
    for k, (lo, hi) in LEARNED_LIMITS.items():
        whole = LEARNED_KNOBS[k].whole
        if not lo <= knobs[k] <= hi or (whole and knobs[k] % 1):
            kind = "a whole number" if whole else "a number"
            raise StrategyError(f"strategy 'learned': {k} must be {kind} {lo}..{hi}, got {knobs[k]:g}")
    layers = [(lay.weights, lay.bias, lay.activation) for lay in model.layers]
    qlayers, qhash = None, ""
    if knobs["prune"] > 0:
        qmodel = load_qmodel(str(params.get("qmodel", DEFAULT_QMODEL)))
        qlayers, qhash = [(lay.weights, lay.bias, lay.activation) for lay in qmodel.layers], qmodel.hash
    elif "qmodel" in params:
        raise StrategyError("strategy 'learned': qmodel is used with prune=K (K > 0) only")
    return Learned(
        layers,
        model.hash,
        int(knobs["sims"]),
        int(knobs["depth"]),
        int(knobs["inner"]),
        int(knobs["branch"]),
        int(knobs["top"]),
        int(knobs["reply"]),
        float(knobs["explore"]),
        int(knobs["prune"]),
        qlayers,
        qhash,
    )


def _learned(seat: SeatConfig, params: Params) -> None:
    """The learned player (strategies/_learned.pyx) with its model."""
    learned_player(params).install(seat)


QLEARNED_KNOBS = by_key(QLEARNED)


def qlearned_player(params: Params) -> QLearned:
    """The action-value player's context (strategies/_qlearned.pyx): its model and exploration."""
    model = load_qmodel(str(params.get("model", DEFAULT_QMODEL)))
    knob = QLEARNED_KNOBS["explore"]
    explore = _number(params, "explore", knob.default)
    if not knob.lo <= explore <= knob.hi:
        raise StrategyError(f"strategy 'qlearned': explore must be a number {knob.lo}..{knob.hi}, got {explore:g}")
    layers = [(lay.weights, lay.bias, lay.activation) for lay in model.layers]
    return QLearned(layers, model.hash, float(explore))


def _qlearned(seat: SeatConfig, params: Params) -> None:
    """The action-value player (strategies/_qlearned.pyx) with its model; the rule inside effects."""
    qlearned_player(params).install(seat)


def _human(seat: SeatConfig, params: Params) -> None:
    """A person (strategies/human.py): `protolab play` asks them; anywhere else the seat fails."""
    seat.set_python(Unattended())


# Every built-in kind of player, by the name a spec gives it; a new kind is one entry here (and its
# extension under strategies/): docs/architecture.md, "Adding a kind of player".
PLAYERS: dict[str, Player] = {
    "random": Player((), _random, RANDOM),
    **{style: Player(WEIGHT_NAMES, _bot(style), RULE) for style in STYLE_WEIGHTS if style != "search"},
    "search": Player(("sims", "depth", *WEIGHT_NAMES), _bot("search"), RULE),
    "ismcts": Player(("iters", "c", "rollout", "leaf", "choices", "model"), _ismcts, _ismcts_choices),
    "learned": Player(("model", "qmodel", *LEARNED_DEFAULTS), _learned, MODEL),
    "qlearned": Player(("model", "explore"), _qlearned, RULE),
    HUMAN: Player((), _human, UNKNOWN),
}
RESTRICTIONS = ("nodown", "noup", "norefresh", "avoid", "noproto")


@dataclass
class StrategySpec:
    base: str
    params: dict[str, float | str] = field(default_factory=dict)
    restrictions: list[tuple[str, str | None]] = field(default_factory=list)
    text: str = ""

    @property
    def is_user(self) -> bool:
        return self.base not in PLAYERS

    @property
    def module(self) -> str:
        """The module a user strategy (`pkg.mod:Class`) is imported from; "" for a built-in player."""
        return self.base.partition(":")[0] if self.is_user else ""


def parse(text: str) -> StrategySpec:
    """Parse a spec string; raises StrategyError naming the part that is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise StrategyError(f"empty strategy spec; expected one of {', '.join(PLAYERS)} or module:Class")
    parts = [p.strip() for p in text.split("+")]
    head, restr = parts[0], parts[1:]
    spec = StrategySpec(base="", text=text.strip())
    if ":" in head and head.split(":", 1)[0] not in PLAYERS:
        module, _, cls = head.partition(":")
        if not module or not cls.isidentifier():
            raise StrategyError(f"strategy {head!r}: a user strategy is named package.module:ClassName")
        spec.base = head
    else:
        name, _, args = head.partition(":")
        if name not in PLAYERS:
            raise StrategyError(
                f"unknown strategy {name!r}; expected one of {', '.join(PLAYERS)} or package.module:ClassName"
            )
        spec.base = name
        for kv in filter(None, (a.strip() for a in args.split(","))):
            k, v = _param(head, PLAYERS[name].params, kv)
            spec.params[k] = v
        _check_ranges(head, spec.params)
    spec.restrictions = [_restriction(text, r) for r in restr]
    return spec


def _param(head: str, allowed: tuple[str, ...], kv: str) -> tuple[str, float | str]:
    """One `key=value` of a built-in player's parameters: a word of its list (WORDS), a model's
    name or file, or else a number."""
    k, eq, v = kv.partition("=")
    if not eq or k not in allowed:
        raise StrategyError(f"strategy {head!r}: unknown parameter {k!r}; expected {', '.join(allowed) or 'none'}")
    if k in WORDS:
        if v not in WORDS[k]:
            raise StrategyError(f"strategy {head!r}: {k} must be one of {', '.join(WORDS[k])}, got {v!r}")
        return k, v
    if k in ("model", "qmodel"):
        if not v.strip():
            raise StrategyError(f"strategy {head!r}: {k} needs a shipped model's name or a model file")
        return k, v.strip()
    try:
        return k, float(v)
    except ValueError:
        raise StrategyError(f"strategy {head!r}: parameter {k} needs a number, got {v!r}") from None


def _check_ranges(head: str, params: dict[str, float | str]) -> None:
    """The search's sims and depth and ismcts's iters and c within their declared ranges."""
    for k in ("sims", "depth"):
        knob = SEARCH_KNOBS[k]
        if k in params and not knob.lo <= _number(params, k) <= knob.hi:
            raise StrategyError(f"strategy {head!r}: {k} must be {knob.lo}..{knob.hi}")
    if "iters" in params and not (1 <= _number(params, "iters") <= MAX_ITERS and _number(params, "iters") % 1 == 0):
        raise StrategyError(f"strategy {head!r}: iters must be a whole number 1..{MAX_ITERS}")
    c = ISMCTS_KNOBS["c"]
    if "c" in params and not c.lo <= _number(params, "c") <= c.hi:
        raise StrategyError(f"strategy {head!r}: c must be {c.lo}..{c.hi}")


def _restriction(text: str, r: str) -> tuple[str, str | None]:
    """One `+name[:card]` of a spec: a known restriction, with its card or protocol where it needs one."""
    name, _, arg = r.partition(":")
    if name not in RESTRICTIONS:
        raise StrategyError(f"unknown restriction {name!r} in {text!r}; expected one of {', '.join(RESTRICTIONS)}")
    if name in ("avoid", "noup", "noproto") and not arg.strip():
        raise StrategyError(f"restriction {name!r} needs a card or protocol, e.g. {name}:Fire 1")
    return name, arg.strip() or None


def how_chooses(text: str) -> str:
    """How the player a spec names takes the choices inside effects: its kind's declared
    `Player.choices` (restrictions change nothing), UNKNOWN for a user's Python strategy."""
    spec = parse(text)
    if spec.is_user:
        return UNKNOWN
    how = PLAYERS[spec.base].choices
    return how if isinstance(how, str) else how(spec.params)


def make_seat(text: str, pool) -> SeatConfig:
    """A SeatConfig the engine can play with, for this spec and card pool."""
    spec = parse(text)
    seat = SeatConfig()
    seat.spec = spec.text
    if spec.is_user:
        seat.set_python(load_user_strategy(spec.base, pool))
    else:
        PLAYERS[spec.base].configure(seat, spec.params)
    flags, up, card, proto = 0, [], [], []
    for name, arg in spec.restrictions:
        try:
            if name == "nodown":
                flags |= R_NO_FACEDOWN
            elif name == "norefresh":
                flags |= R_NO_REFRESH_WITH_CONTROL
            elif name == "noup":
                up.append(pool.card(arg).id)
            elif name == "avoid":
                card.append(pool.card(arg).id)
            elif name == "noproto":
                proto.append(pool.protocol(arg))
        except KeyError as e:
            raise StrategyError(f"strategy {text!r}: {e.args[0]}") from None
    seat.set_restrictions(flags, up, card, proto)
    return seat


def _module_spec(module: str) -> importlib.machinery.ModuleSpec | None:
    """Where `module` would be imported from, found without running any of it: each package on the
    way is looked up by the import system's finders on its parent's search path, not imported
    (importlib.util.find_spec would import the parents of a dotted name)."""
    parts = module.split(".")
    spec = importlib.util.find_spec(parts[0])  # a top-level name: found, nothing imported
    for depth in range(1, len(parts)):
        search = spec.submodule_search_locations if spec is not None else None
        if search is None:
            return None  # not a package: it holds no submodules
        name = ".".join(parts[: depth + 1])
        spec = next(
            (
                found
                for finder in sys.meta_path
                if hasattr(finder, "find_spec")
                for found in [finder.find_spec(name, list(search))]
                if found is not None
            ),
            None,
        )
    return spec


def _defines(tree: ast.Module, name: str) -> bool | None:
    """Whether module source binds `name` at top level (a class, function, assignment or import);
    None when it cannot tell without running it (a star import or a module-level __getattr__)."""
    for node in tree.body:
        found = _binds(node, name)
        if found is not False:
            return found
    return False


def _binds(node: ast.stmt, name: str) -> bool | None:
    """Whether one top-level statement binds `name`; None when it cannot tell (as _defines)."""
    if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (name, "__getattr__"):
        return True if node.name == name else None
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        for alias in node.names:
            if alias.name == "*":
                return None
            if (alias.asname or alias.name.split(".")[0]) == name:
                return True
        return False
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    else:
        return False
    return any(n.id == name for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))


def check_user_class(path: str) -> None:
    """`package.module:ClassName` names a module that exists and whose source defines ClassName,
    checked by reading the source, not by importing it: naming a strategy must not run its module
    (`this:X` would print the Zen of Python). StrategyError otherwise; a module without Python
    source (compiled) or one that defines names dynamically passes, to be checked on import."""
    module, _, cls = path.partition(":")
    if module in sys.modules:
        return
    try:
        spec = _module_spec(module)
    except (ImportError, ValueError, OSError) as e:
        raise StrategyError(f"user strategy {path!r}: cannot find module {module!r} ({e})") from None
    if spec is None:
        raise StrategyError(
            f"user strategy {path!r}: cannot import module {module!r} (not found on the Python "
            "path: the working folder or PYTHONPATH); expected package.module:ClassName"
        )
    origin = spec.origin or ""
    if not origin.endswith(".py"):
        return
    try:
        tree = ast.parse(read_input_text(origin), filename=origin)
    except (InputFileError, SyntaxError, ValueError) as e:
        why = f"{type(e).__name__}: {e}"
        raise StrategyError(f"user strategy {path!r}: cannot read module {module!r} ({why})") from None
    if _defines(tree, cls) is False:
        raise StrategyError(
            f"user strategy {path!r}: module {module!r} ({origin}) has no {cls!r}; expected a "
            "class with a choose(observation, decision) method"
        )


def load_user_strategy(path: str, pool=None):
    """Import package.module:ClassName and wrap an instance for the engine (after checking, without
    importing, that the module defines it)."""

    module, _, cls = path.partition(":")
    check_user_class(path)
    try:
        mod = importlib.import_module(module)
    except ImportError as e:
        raise StrategyError(f"user strategy {path!r}: cannot import module {module!r} ({e})") from None
    except (Exception, SystemExit) as e:  # the user's module itself fails: say where, not a traceback
        raise StrategyError(f"user strategy {path!r}: importing module {module!r} raised {where_raised(e)}") from None
    obj = getattr(mod, cls, None)
    if obj is None:
        raise StrategyError(f"user strategy {path!r}: module {module!r} has no {cls!r}")
    try:
        inst = obj() if isinstance(obj, type) else obj
    except Exception as e:  # noqa: BLE001 - the user's constructor
        raise StrategyError(f"user strategy {path!r}: creating {cls} raised {where_raised(e)}") from None
    choose = getattr(type(inst), "choose", None) if isinstance(obj, type) else getattr(inst, "choose", None)
    if not callable(choose) or choose is Strategy.choose:
        raise StrategyError(
            f"user strategy {path!r}: expected a class with a choose(observation, decision) "
            f"method (see {Strategy.__module__}.Strategy)"
        )
    return PythonSeat(inst, pool, name=path)


def parse_draft(text: str, pool, read=None) -> tuple[str, object]:
    """Draft strategies: `random`, `fixed:Fire,Water,Death/Hate,Light,Life` (named trios, seat 0
    then seat 1), `table:FILE` (pick the available protocol with the highest score; FILE is a
    CSV with columns protocol,win_rate, or a JSON object {protocol: score}) or
    `fitted:FILE[,style=full|greedy|counter][,temp=T]` (strategies/draft.py; the word `learned` names
    the learned player, strategies/_learned.pyx). `read(path)` gives a
    fitted table's text instead of the file (a run's saved copy, on a worker)."""
    kind, _, arg = text.partition(":")
    if kind == "fitted":
        try:
            return "fitted", fitted_draft(arg, list(pool.protocols), read)
        except DraftTableError as e:
            raise StrategyError(str(e)) from None
    if kind == "random" and not arg:
        return "random", None
    if kind == "fixed":
        return "fixed", _fixed_trios(text, arg, pool)
    if kind == "table":
        return "table", read_draft_table(arg, pool)
    raise StrategyError(f"unknown draft {text!r}; expected random, fixed:A,B,C/D,E,F, table:FILE or fitted:FILE")


def _fixed_trios(text: str, arg: str, pool) -> list[list[str]]:
    """`fixed:A,B,C/D,E,F`: the two trios, six distinct protocols of the pool, as the pool names them."""
    sides = [s.split(",") for s in arg.split("/")]
    if len(sides) != 2 or any(len(s) != 3 for s in sides):
        raise StrategyError(f"draft {text!r}: expected fixed:A,B,C/D,E,F (two trios)")
    try:
        ids = [[pool.protocol(x) for x in s] for s in sides]
    except KeyError as e:
        raise StrategyError(f"draft {text!r}: {e.args[0]}") from None
    if len({i for s in ids for i in s}) != 6:
        raise StrategyError(f"draft {text!r}: six distinct protocols needed")
    return [[pool.protocols[i] for i in s] for s in ids]


def install_draft(seat: SeatConfig, kind: str, payload) -> None:
    """Make a seat draft by a parsed draft strategy (`random` and `fixed` need nothing)."""
    if kind == "table":
        TableDraft(payload).install(seat)
    elif kind == "fitted":
        payload.install(seat)


def read_draft_table(path: str, pool) -> list[float]:
    p = Path(path)
    try:
        text = read_input_text(p)
    except InputFileError as e:
        raise StrategyError(f"draft table {e}") from None
    scores = [0.5] * len(pool.protocols)
    try:
        if p.suffix == ".json":
            rows = json.loads(text).items()
        else:
            lines = [x for x in text.splitlines() if not x.startswith("#")]  # report's provenance header
            rows = [(r["protocol"], r["win_rate"]) for r in csv.DictReader(lines)]
        for name, score in rows:
            scores[pool.protocol(name)] = float(score)
    except (KeyError, ValueError, AttributeError, TypeError) as e:
        raise StrategyError(f"draft table {path}: expected protocol,win_rate rows of known protocols ({e})") from None
    return scores
