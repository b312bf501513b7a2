"""Scenario files (docs/scenarios.md): an exact position, scripted decisions, expectations.

The runner is strict: every key a file may hold is declared once, in the models below (pydantic,
sim/schema.py), with the value it accepts. An unknown section or key, a value of the wrong kind, an expectation naming a
card or protocol that is not in play, or a file that checks nothing is refused with one line
naming the file and the key, because a silently ignored key is a check that never runs."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo

from sim.describe import SEAT_NAMES
from sim.engine._core import CoreState, constants
from sim.inputs import InputFileError, parse_toml, read_input_text
from sim.pool import Pool, load_pool
from sim.schema import Problem, Strict, is_whole, problem, quoted
from sim.schema import check as checked
from sim.state import State

K = constants()
PHASES = K["phase"]
SETUP_PHASES = ("start", "control", "compile", "action", "cache", "end")


class ScenarioError(ValueError):
    """A scenario that cannot be set up or is malformed; names the file and the key."""


# -- the schema: every allowed key and the value it accepts, declared once ---------------------------


def kind(expected: str, accepts: Callable[[Any], bool], names: str = "") -> Any:
    """What one key accepts: a test of the value's shape, the words for messages and the docs, and
    which names inside it must exist in the game (`names`: "cards", "stacks", "protocols" or "text";
    in [expect], checked once the position is known; the names of [setup] are checked by placing them)."""
    return Annotated[checked(accepts, expected), Field(description=expected, json_schema_extra={"names": names})]


def table(model: type[Section]) -> Any:
    """A sub-table, `[setup]`: the model of its keys."""
    return Annotated[model, Field(description=f"a table ({model.doc})")]


class Section(Strict):
    """A TOML table of a scenario: its allowed keys (fields; those without a default are required)."""

    doc: ClassVar[str] = ""


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _three(item: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, list) and len(v) == 3 and all(item(x) for x in v)


def _one_of(*allowed: str) -> Any:
    return kind(quoted(allowed), lambda v: isinstance(v, str) and v in allowed)


TEXT = kind("a string", lambda v: isinstance(v, str))
NON_EMPTY = kind("a non-empty string", lambda v: isinstance(v, str) and bool(v.strip()))
RULE = kind(
    'a non-empty string: a card name or a rule number such as "1.2"', lambda v: isinstance(v, str) and bool(v.strip())
)
FILES = kind("an array of file paths", _strings)
SEAT = _one_of(*SEAT_NAMES)
SEAT_OR_NONE = _one_of("none", *SEAT_NAMES)
WINNER = _one_of("none", *SEAT_NAMES, "draw")
SETUP_PHASE = _one_of(*SETUP_PHASES)
PHASE = _one_of(*(p for p in PHASES if p != "draft"))  # a scenario starts after the draft
COUNT = kind("a whole number from 0", lambda v: is_whole(v) and v >= 0)
FROM_ONE = kind("a whole number from 1", lambda v: is_whole(v) and v >= 1)
STRINGS = kind("an array of strings", _strings)
CARDS = kind("an array of card names", _strings, "cards")
STACKS = kind("three arrays of card names (left, middle, right; each bottom to top)", _three(_strings), "stacks")
THREE_PROTOCOLS = kind("three protocol names", _three(lambda x: isinstance(x, str)), "protocols")
PROTOCOLS = kind("an array of protocol names", _strings, "protocols")
VALUES = kind("three whole numbers (a line value may be negative)", _three(is_whole))
TEXTS = kind("an array of strings", _strings, "text")


class SetupSide(Section):
    doc = "one player's position"
    protocols: THREE_PROTOCOLS
    compiled: PROTOCOLS = None
    hand: CARDS = None
    deck: CARDS = None
    trash: CARDS = None
    stacks: STACKS = None
    owns: CARDS = None


class ExpectSide(Section):
    doc = "one player's expected zones"
    hand: CARDS = None
    hand_count: COUNT = None
    trash: CARDS = None
    deck: CARDS = None
    deck_count: COUNT = None
    stacks: STACKS = None
    compiled: PROTOCOLS = None
    protocols: THREE_PROTOCOLS = None
    values: VALUES = None
    owns: CARDS = None


class Setup(Section):
    doc = "the position"
    active: SEAT = None
    phase: SETUP_PHASE = None
    turn: FROM_ONE = None
    control: SEAT_OR_NONE = None
    seed: COUNT = None
    turn_cap: FROM_ONE = None
    deny_compile: SEAT = None
    A: table(SetupSide)
    B: table(SetupSide)


class Play(Section):
    doc = "the scripted decisions"
    decisions: STRINGS


class Expect(Section):
    doc = "what must hold at the stop"
    A: table(ExpectSide) = None
    B: table(ExpectSide) = None
    control: SEAT_OR_NONE = None
    winner: WINNER = None
    active: SEAT = None
    phase: PHASE = None
    turn: FROM_ONE = None
    pending: SEAT_OR_NONE = None
    options: TEXTS = None
    log: TEXTS = None
    no_log: TEXTS = None
    error: NON_EMPTY = None


class Scenario(Section):
    doc = "a scenario file"
    name: TEXT = None
    rule: RULE
    cards: FILES = None
    setup: table(Setup)
    play: table(Play) = None
    expect: table(Expect)


assert tuple(Setup.model_fields)[-2:] == SEAT_NAMES, "[setup] needs a table per seat"


def _err(path: Path, key: str, msg: str) -> ScenarioError:
    return ScenarioError(f"{path}: key '{key}': {msg}")


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _sub(info: FieldInfo) -> type[Section] | None:
    """The model of a sub-table's field, or None for a value."""
    t = info.annotation
    return t if isinstance(t, type) and issubclass(t, Section) else None


def _unknown(p: Problem) -> str:
    what = "unknown section" if isinstance(p.value, dict) else "unknown key"
    return f"{what}; expected one of {', '.join(p.allowed)}"


def check_shape(path: Path, raw: dict[str, Any]) -> None:
    """Refuse a missing required key, an unknown key or section, or a value of the wrong kind (an
    unknown key is named first: a misspelt required key is named as misspelt)."""
    try:
        Scenario.model_validate(raw)
    except ValidationError as e:
        p = problem(e, Scenario, _unknown)
        if p.kind == "missing" and p.field is not None and _sub(p.field):
            raise _err(path, p.key, f"missing; expected the [{p.key}] table") from None
        raise _err(path, p.key, p.message) from None


def check_checks_something(path: Path, raw: dict[str, Any]) -> None:
    """A scenario must check something; `error` stands alone (a file that fails to load plays nothing)."""
    expect = raw["expect"]
    flat = [k for k in expect if k not in SEAT_NAMES] + [f"{s}.{k}" for s in SEAT_NAMES for k in expect.get(s, {})]
    if not flat:
        raise _err(path, "expect", "no expectation; a scenario must check something (see docs/scenarios.md)")
    if "error" in expect and (len(flat) > 1 or "play" in raw):
        others = [k for k in flat if k != "error"] + (["play"] if "play" in raw else [])
        raise _err(
            path,
            "expect.error",
            f"cannot be combined with {', '.join(others)}: a scenario that must "
            "fail to load plays and checks nothing else",
        )


def allowed_keys_markdown() -> str:
    """The table of allowed keys for docs/scenarios.md, generated from the models so the two cannot drift."""
    rows = ["| key | accepts |", "|---|---|"]

    def walk(model: type[Section], prefix: str) -> None:
        for k, info in model.model_fields.items():
            required = " (required)" if info.is_required() else ""
            sub = _sub(info)
            if sub is not None:
                if k == "B":
                    rows.append(f"| `[{_join(prefix, 'B')}]` | as `[{_join(prefix, 'A')}]` |")
                    continue
                rows.append(f"| `[{_join(prefix, k)}]` | {sub.doc}{required} |")
                walk(sub, _join(prefix, k))
            else:
                rows.append(f"| `{_join(prefix, k)}` | {(info.description or '').replace('|', '/')}{required} |")

    walk(Scenario, "")
    return "\n".join(rows)


# -- names in expectations: every card and protocol named must be in play ------------------------------

CARD_TOKEN = re.compile(r"\b([A-Za-z]+) (\d+)\b")
RULE_NUMBER = re.compile(r"\d+\.\d+")
TEXT_WORDS_WITH_NUMBERS = {"turn"}  # capitalised log words that are followed by a number but are no card


@dataclass(frozen=True)
class InPlay:
    """The cards and protocols of the six protocols in this scenario's setup."""

    pool: Pool
    protocols: frozenset[str]
    cards: frozenset[str]

    @classmethod
    def of(cls, pool: Pool, setup: dict[str, Any]) -> InPlay:
        protos = frozenset(p.strip().lower() for s in SEAT_NAMES for p in setup[s]["protocols"])
        cards = frozenset(c.name.lower() for c in pool.cards if c.protocol.lower() in protos)
        return cls(pool, protos, cards)

    def card(self, path: Path, key: str, name: str) -> None:
        n = name.strip().lower()
        if n not in self.pool.by_name:
            raise _err(path, key, f"unknown card {name!r}")
        if n not in self.cards:
            raise _err(path, key, f"card {name!r} is not in play: its protocol is not one of the six in setup")

    def protocol(self, path: Path, key: str, name: str) -> None:
        n = name.strip().lower()
        if n not in self.pool.protocol_id:
            raise _err(path, key, f"unknown protocol {name!r}")
        if n not in self.protocols:
            raise _err(path, key, f"protocol {name!r} is not one of the six in setup")


def _names_cards(ctx: InPlay, path: Path, key: str, value: list[str]) -> None:
    for i, name in enumerate(value):
        if name.strip().lower().startswith("down:"):
            raise _err(path, f"{key}[{i}]", f"{name!r}: 'down:' belongs in stacks only; give the card name")
        ctx.card(path, f"{key}[{i}]", name)


def _names_stacks(ctx: InPlay, path: Path, key: str, value: list[list[str]]) -> None:
    for li, stack in enumerate(value):
        for i, name in enumerate(stack):
            n = name.strip()
            ctx.card(path, f"{key}[{li}][{i}]", n[5:] if n.lower().startswith("down:") else n)


def _names_protocols(ctx: InPlay, path: Path, key: str, value: list[str]) -> None:
    for i, name in enumerate(value):
        ctx.protocol(path, f"{key}[{i}]", name)


def _names_text(ctx: InPlay, path: Path, key: str, value: list[str]) -> None:
    """A card named in a log line or option text must be in play: a misspelt one would make a
    `no_log` check pass whatever happens."""
    for i, text in enumerate(value):
        for m in CARD_TOKEN.finditer(text):
            word = m.group(1)
            if word.lower() in ctx.pool.protocol_id or (
                word[0].isupper() and word.lower() not in TEXT_WORDS_WITH_NUMBERS
            ):
                ctx.card(path, f"{key}[{i}]", m.group(0))


NAME_CHECKS: dict[str, Callable[[InPlay, Path, str, Any], None]] = {
    "cards": _names_cards,
    "stacks": _names_stacks,
    "protocols": _names_protocols,
    "text": _names_text,
}


def check_names(
    path: Path, ctx: InPlay, raw: dict[str, Any], model: type[Section] = Expect, prefix: str = "expect"
) -> None:
    """Walk the (already shape-checked) expectations and check every name they hold against the game."""
    for k, v in raw.items():
        info, key = model.model_fields[k], _join(prefix, k)
        extra = info.json_schema_extra
        names = extra.get("names") if isinstance(extra, dict) else None
        sub = _sub(info)
        if sub is not None:
            check_names(path, ctx, v, sub, key)
        elif isinstance(names, str) and names:
            NAME_CHECKS[names](ctx, path, key, v)


# -- building the position ------------------------------------------------------------------------------


@dataclass
class ScenarioResult:
    path: str
    name: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    game: State | None = None
    invalid: str = ""  # the one-line error when the file itself is malformed or cannot be set up

    def report(self) -> str:
        if self.invalid:
            return self.invalid
        head = f"{'PASS' if self.ok else 'FAIL'} {self.path}: {self.name}"
        return head + "".join(f"\n    {p}" for p in self.problems)


_pool_cache: dict[tuple, Pool] = {}


def _pool(path: Path, files: list[str]) -> Pool:
    extra = tuple(str((path.parent / c).resolve()) for c in files)
    if extra not in _pool_cache:
        try:
            _pool_cache[extra] = load_pool(cards=extra)
        except ValueError as e:
            raise _err(path, "cards", str(e)) from None
    return _pool_cache[extra]


def _protocol_ids(path: Path, pool: Pool, sides: list[dict[str, Any]]) -> list[list[int]]:
    protos = []
    for seat, side in zip(SEAT_NAMES, sides, strict=True):
        try:
            protos.append([pool.protocol(n) for n in side["protocols"]])
        except KeyError as e:
            raise _err(path, f"setup.{seat}.protocols", str(e.args[0])) from None
    flat = [i for ids in protos for i in ids]
    if len(set(flat)) != 6:
        dup = [pool.protocols[i] for i, n in Counter(flat).items() if n > 1]
        raise _err(path, "setup.protocols", f"protocol {dup[0]} is in play twice; six distinct protocols needed")
    return protos


def _instances(pool: Pool, protos: list[list[int]]) -> tuple[dict[str, int], dict[int, int]]:
    """Card instance ids: player p, protocol slot k, value index j -> p*18 + k*6 + j."""
    iid_of: dict[str, int] = {}
    cdef_of: dict[int, int] = {}
    for p in (0, 1):
        for k, pid in enumerate(protos[p]):
            ids = [c.id for c in pool.cards if c.protocol == pool.protocols[pid]]
            ids.sort(key=lambda i: (pool.cards[i].value, pool.cards[i].name))
            for j, cid in enumerate(ids):
                iid = p * 18 + k * 6 + j
                iid_of[pool.cards[cid].name.lower()] = iid
                cdef_of[iid] = cid
    return iid_of, cdef_of


class _Placer:
    """Resolves the card names of the setup to instance ids, each card once only."""

    def __init__(self, path: Path, pool: Pool, iid_of: dict[str, int]):
        self.path, self.pool, self.iid_of = path, pool, iid_of
        self.seen: dict[int, str] = {}

    def card(self, name: str, key: str) -> tuple[int, int]:
        up, n = 1, name.strip()
        if n.lower().startswith("down:"):
            up, n = 0, n[5:].strip()
        if n.lower() not in self.pool.by_name:
            raise _err(self.path, key, f"unknown card {n!r}")
        if n.lower() not in self.iid_of:
            raise _err(self.path, key, f"card {n!r} is not in play: its protocol is not one of the six in setup")
        iid = self.iid_of[n.lower()]
        if iid in self.seen:
            raise _err(self.path, key, f"card {n!r} appears twice (also in {self.seen[iid]})")
        self.seen[iid] = key
        return iid, up

    def cards(self, names: list[str], key: str) -> list[int]:
        return [self.card(x, f"{key}[{i}]")[0] for i, x in enumerate(names)]

    def stacks(self, stacks: list[list[str]], key: str) -> list[list[tuple[int, int]]]:
        return [[self.card(x, f"{key}[{li}][{i}]") for i, x in enumerate(st)] for li, st in enumerate(stacks)]


def _compiled(path: Path, pool: Pool, seat: str, ids: list[int], compiled: list[str]) -> list[int]:
    names = [pool.protocols[i].lower() for i in ids]
    for c in compiled:
        if c.lower() not in names:
            raise _err(path, f"setup.{seat}.compiled", f"{c!r} is not one of {seat}'s protocols")
    return [int(n in [c.lower() for c in compiled]) for n in names]


def build(path: Path, raw: dict[str, Any], pool: Pool) -> tuple[CoreState, int]:
    """Place the (shape-checked) setup into a new core game; refuse an impossible position."""
    setup = raw["setup"]
    sides = [setup[s] for s in SEAT_NAMES]
    protos = _protocol_ids(path, pool, sides)
    iid_of, cdef_of = _instances(pool, protos)
    placer = _Placer(path, pool, iid_of)
    pos: dict[str, Any] = {
        "deck": [],
        "hand": [],
        "trash": [],
        "stacks": [],
        "protocols": protos,
        "compiled": [],
        "owner": {},
        "cdef": cdef_of,
    }
    for p, side in enumerate(sides):
        s = SEAT_NAMES[p]
        for zone in ("hand", "deck", "trash"):
            pos[zone].append(placer.cards(side.get(zone, []), f"setup.{s}.{zone}"))
        pos["stacks"].append(placer.stacks(side.get("stacks", [[], [], []]), f"setup.{s}.stacks"))
        pos["compiled"].append(_compiled(path, pool, s, protos[p], side.get("compiled", [])))
    for p, side in enumerate(sides):
        for i, n in enumerate(side.get("owns", [])):
            name = n.strip().lower().removeprefix("down:").strip()
            if name not in iid_of:
                raise _err(path, f"setup.{SEAT_NAMES[p]}.owns[{i}]", f"unknown or not-in-play card {n!r}")
            pos["owner"][iid_of[name]] = p
    for iid in placer.seen:
        pos["owner"].setdefault(iid, iid // 18)
    turn = setup.get("turn", 1)
    pos.update(
        active=SEAT_NAMES.index(setup.get("active", "A")),
        phase=PHASES[setup.get("phase", "action")],
        turn=turn,
        first_player=0,
    )
    control = setup.get("control", "none")
    pos["control"] = -1 if control == "none" else SEAT_NAMES.index(control)
    nct = [-1, -1]
    if "deny_compile" in setup:
        nct[SEAT_NAMES.index(setup["deny_compile"])] = turn
    pos["no_compile_turn"] = nct
    turn_cap = setup.get("turn_cap", 200)
    core = CoreState(pool.core, setup.get("seed", 1), turn_cap)
    core.place(pos)
    return core, turn_cap


# -- running ------------------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    """Read a scenario file and refuse it unless every key is known, well-typed and it checks something."""
    try:
        raw = parse_toml(read_input_text(path))
    except InputFileError as e:
        raise ScenarioError(f"cannot read scenario {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{path}: not valid TOML: {e}") from None
    check_shape(path, raw)
    check_checks_something(path, raw)
    return raw


def check_rule(path: Path, pool: Pool, rule: str) -> None:
    """The coverage tests count scenarios by `rule`: a misspelt one would prove nothing it names."""
    if rule.strip().lower() not in pool.by_name and not RULE_NUMBER.fullmatch(rule.strip()):
        raise _err(path, "rule", f'{rule!r} is neither a card of the pool nor a rule number such as "1.2"')


def _invalid(path: Path, name: str, e: ScenarioError) -> ScenarioResult:
    return ScenarioResult(str(path), name, False, [str(e)], invalid=str(e))


def run_file(path: str | Path) -> ScenarioResult:
    """Run one scenario file and compare every expectation; never raises (a malformed file gives a
    result whose `invalid` is the one-line error)."""
    path = Path(path)
    try:
        raw = load(path)
        pool = _pool(path, raw.get("cards", []))
        check_rule(path, pool, raw["rule"])
    except ScenarioError as e:
        return _invalid(path, path.stem, e)
    name = raw.get("name", path.stem)
    expect = raw["expect"]
    want_error = expect.get("error")
    try:
        core, cap = build(path, raw, pool)
    except ScenarioError as e:
        msg = str(e)
        if want_error is None:
            return _invalid(path, name, e)
        ok = want_error.lower() in msg.lower()
        return ScenarioResult(str(path), name, ok, [] if ok else [f"error {msg!r} lacks {want_error!r}"])
    if want_error is not None:
        return ScenarioResult(
            str(path), name, False, [f"expected a setup error containing {want_error!r}, but the scenario loaded"]
        )
    try:
        check_names(path, InPlay.of(pool, raw["setup"]), expect)
    except ScenarioError as e:
        return _invalid(path, name, e)
    game = State.from_core(pool, core, cap)
    problems = play(game, raw.get("play", {}).get("decisions", []))
    if not problems:
        problems = check(game, expect)
    return ScenarioResult(str(path), name, not problems, problems, game)


def play(game: State, decisions: list[str]) -> list[str]:
    """Answer the scripted decisions in order; the first one that cannot be given is the problem."""
    for i, ans in enumerate(decisions):
        d = game.pending()
        if d is None:
            return [f"decision #{i + 1} {ans!r}: the game is already over"]
        try:
            game.answer(ans)
        except ValueError:
            return [f"decision #{i + 1} {ans!r}: not an option; {d.seat} is asked '{d.kind}' with options {d.options}"]
    return []


def _same(a: list[str], b: list[str]) -> bool:
    return Counter(x.lower() for x in a) == Counter(x.lower() for x in b)


def _in_order(a: list[str], b: list[str]) -> bool:
    return [x.lower() for x in a] == [x.lower() for x in b]


SIDE_COMPARE: dict[str, Callable[[dict[str, Any], Any], tuple[Any, bool]]] = {
    "hand": lambda side, want: (side["hand"], _same(side["hand"], want)),
    "hand_count": lambda side, want: (len(side["hand"]), len(side["hand"]) == want),
    "trash": lambda side, want: (side["trash"], _same(side["trash"], want)),
    "deck": lambda side, want: (side["deck"], _in_order(side["deck"], want)),
    "deck_count": lambda side, want: (len(side["deck"]), len(side["deck"]) == want),
    "stacks": lambda side, want: (
        side["stacks"],
        all(_in_order(g, w) for g, w in zip(side["stacks"], want, strict=True)),
    ),
    "compiled": lambda side, want: (side["compiled"], _same(side["compiled"], want)),
    "protocols": lambda side, want: (side["protocols"], _in_order(side["protocols"], want)),
    "values": lambda side, want: (side["values"], list(side["values"]) == want),
    "owns": lambda side, want: (side["owns"], _same(side["owns"], want)),
}


def check(game: State, expect: dict[str, Any]) -> list[str]:
    """Every expectation that does not hold, as one readable line each."""
    s = game.state()
    out = []
    for seat in SEAT_NAMES:
        for k, want in expect.get(seat, {}).items():
            got, ok = SIDE_COMPARE[k](s[seat], want)
            if not ok:
                out.append(f"{seat}.{k}: expected {want!r}, got {got!r}")
    for k in ("control", "winner", "active", "phase", "turn"):
        if k in expect and s[k] != expect[k]:
            out.append(f"{k}: expected {expect[k]!r}, got {s[k]!r}")
    return out + _decision_misses(game, expect) + _log_misses(game, expect)


def _decision_misses(game: State, expect: dict[str, Any]) -> list[str]:
    """The expected pending decision (whose, or "none") and its options, where they differ."""
    d = game.pending()
    out = []
    if "pending" in expect:
        got = "none" if d is None else d.seat
        if got != expect["pending"]:
            out.append(
                f"pending: expected {expect['pending']!r}, got {got!r}" + (f" ({d.kind}: {d.options})" if d else "")
            )
    if "options" in expect:
        got_opts = [] if d is None else d.options
        if not _same(got_opts, expect["options"]):
            out.append(f"options: expected {sorted(expect['options'])}, got {sorted(got_opts)}")
    return out


def _log_misses(game: State, expect: dict[str, Any]) -> list[str]:
    """The log fragments expected in some line (`log`) or in none (`no_log`) that are not so."""
    if "log" not in expect and "no_log" not in expect:
        return []
    lines = game.log()
    missing = [f"log: no line contains {frag!r}" for frag in expect.get("log", []) if not _logged(frag, lines)]
    unwanted = [frag for frag in expect.get("no_log", []) if _logged(frag, lines)]
    return missing + [f"log: a line contains {frag!r}, which should not happen" for frag in unwanted]


def _logged(frag: str, lines: list[str]) -> bool:
    return any(frag.lower() in ln.lower() for ln in lines)
