"""Scenario files (docs/scenarios.md): an exact position, scripted decisions, expectations."""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.describe import SEATS
from sim.engine._core import CoreGame, constants
from sim.game import Game
from sim.pool import Pool, load_pool

K = constants()
PHASES = K["phase"]
SIDE_KEYS = {"protocols", "compiled", "hand", "deck", "trash", "stacks", "owns"}
SETUP_KEYS = {"active", "phase", "turn", "control", "seed", "turn_cap", "deny_compile", "A", "B"}
EXPECT_SIDE = {"hand", "trash", "stacks", "deck", "deck_count", "compiled", "protocols", "values", "owns",
               "hand_count"}
EXPECT_TOP = {"control", "winner", "active", "phase", "turn", "pending", "options", "log", "no_log", "error",
              "A", "B"}


class ScenarioError(ValueError):
    """A scenario that cannot be set up; names the file and the key."""


@dataclass
class ScenarioResult:
    path: str
    name: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    game: Game | None = None

    def report(self) -> str:
        head = f"{'PASS' if self.ok else 'FAIL'} {self.path}: {self.name}"
        return head + "".join(f"\n    {p}" for p in self.problems)


_pool_cache: dict[tuple, Pool] = {}


def _pool(extra: tuple[str, ...]) -> Pool:
    if extra not in _pool_cache:
        _pool_cache[extra] = load_pool(cards=extra)
    return _pool_cache[extra]


def _err(path: Path, key: str, msg: str) -> ScenarioError:
    return ScenarioError(f"{path}: key '{key}': {msg}")


def build(path: Path, raw: dict[str, Any]) -> tuple[Pool, CoreGame, int]:
    """Validate the setup and place the position into a new core game."""
    extra = tuple(str((path.parent / c).resolve()) for c in raw.get("cards", []))
    pool = _pool(extra)
    setup = raw.get("setup")
    if not isinstance(setup, dict):
        raise _err(path, "setup", "missing [setup] table")
    for k in setup:
        if k not in SETUP_KEYS:
            raise _err(path, f"setup.{k}", f"unknown key; expected one of {sorted(SETUP_KEYS)}")
    sides = []
    for seat in SEATS:
        side = setup.get(seat)
        if not isinstance(side, dict):
            raise _err(path, f"setup.{seat}", "missing table for this player")
        for k in side:
            if k not in SIDE_KEYS:
                raise _err(path, f"setup.{seat}.{k}", f"unknown key; expected one of {sorted(SIDE_KEYS)}")
        sides.append(side)
    protos = []
    for p, side in enumerate(sides):
        names = side.get("protocols")
        if not (isinstance(names, list) and len(names) == 3):
            raise _err(path, f"setup.{SEATS[p]}.protocols", "expected three protocol names")
        ids = []
        for n in names:
            try:
                ids.append(pool.protocol(n))
            except KeyError as e:
                raise _err(path, f"setup.{SEATS[p]}.protocols", str(e.args[0])) from None
        protos.append(ids)
    flat = [i for ids in protos for i in ids]
    if len(set(flat)) != 6:
        dup = [pool.protocols[i] for i, n in Counter(flat).items() if n > 1]
        raise _err(path, "setup.protocols", f"protocol {dup[0]} is in play twice; six distinct protocols needed")
    # card instance ids: player p, protocol slot k, value index j -> p*18 + k*6 + j
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
    seen: dict[int, str] = {}

    def card(name: Any, key: str) -> tuple[int, int]:
        if not isinstance(name, str):
            raise _err(path, key, f"expected a card name, got {name!r}")
        up = 1
        n = name.strip()
        if n.lower().startswith("down:"):
            up, n = 0, n[5:].strip()
        if n.lower() not in pool.by_name:
            raise _err(path, key, f"unknown card {n!r}")
        if n.lower() not in iid_of:
            raise _err(path, key, f"card {n!r} is not in play: its protocol is not one of the six in setup")
        iid = iid_of[n.lower()]
        if iid in seen:
            raise _err(path, key, f"card {n!r} appears twice (also in {seen[iid]})")
        seen[iid] = key
        return iid, up

    def cards(lst: Any, key: str) -> list[int]:
        if not isinstance(lst, list):
            raise _err(path, key, "expected an array of card names")
        return [card(x, f"{key}[{i}]")[0] for i, x in enumerate(lst)]

    pos: dict[str, Any] = {"deck": [], "hand": [], "trash": [], "stacks": [], "protocols": protos,
                           "compiled": [], "owner": {}, "cdef": cdef_of}
    for p, side in enumerate(sides):
        s = SEATS[p]
        pos["hand"].append(cards(side.get("hand", []), f"setup.{s}.hand"))
        pos["deck"].append(cards(side.get("deck", []), f"setup.{s}.deck"))
        pos["trash"].append(cards(side.get("trash", []), f"setup.{s}.trash"))
        stacks = side.get("stacks", [[], [], []])
        if not (isinstance(stacks, list) and len(stacks) == 3):
            raise _err(path, f"setup.{s}.stacks", "expected three stacks (arrays), left to right")
        pos["stacks"].append([[card(x, f"setup.{s}.stacks[{li}][{i}]") for i, x in enumerate(st)]
                              if isinstance(st, list) else _bad_stack(path, s, li) for li, st in enumerate(stacks)])
        comp = side.get("compiled", [])
        names = [pool.protocols[i].lower() for i in protos[p]]
        for c in comp:
            if not isinstance(c, str) or c.lower() not in names:
                raise _err(path, f"setup.{s}.compiled", f"{c!r} is not one of {s}'s protocols")
        pos["compiled"].append([int(n in [c.lower() for c in comp]) for n in names])
    for p, side in enumerate(sides):
        for i, n in enumerate(side.get("owns", [])):
            key = f"setup.{SEATS[p]}.owns[{i}]"
            if not isinstance(n, str) or n.lower().removeprefix("down:") not in iid_of:
                raise _err(path, key, f"unknown or not-in-play card {n!r}")
            pos["owner"][iid_of[n.lower().removeprefix('down:')]] = p
    for iid in seen:
        pos["owner"].setdefault(iid, iid // 18)
    pos["active"] = _seat(path, "setup.active", setup.get("active", "A"))
    phase = setup.get("phase", "action")
    if phase not in PHASES or phase in ("draft", "over"):
        raise _err(path, "setup.phase", f"expected start, control, compile, action, cache or end, got {phase!r}")
    pos["phase"] = PHASES[phase]
    turn = setup.get("turn", 1)
    if not isinstance(turn, int) or turn < 1:
        raise _err(path, "setup.turn", "expected a whole number from 1")
    pos["turn"] = turn
    control = setup.get("control", "none")
    pos["control"] = -1 if control == "none" else _seat(path, "setup.control", control)
    nct = [-1, -1]
    if "deny_compile" in setup:
        nct[_seat(path, "setup.deny_compile", setup["deny_compile"])] = turn
    pos["no_compile_turn"] = nct
    pos["first_player"] = 0
    turn_cap = setup.get("turn_cap", 200)
    if not isinstance(turn_cap, int) or turn_cap < 1:
        raise _err(path, "setup.turn_cap", "expected a whole number from 1")
    seed = setup.get("seed", 1)
    core = CoreGame(pool.core, seed, turn_cap)
    core.place(pos)
    return pool, core, turn_cap


def _bad_stack(path: Path, seat: str, li: int):
    raise _err(path, f"setup.{seat}.stacks[{li}]", "expected an array of card names")


def _seat(path: Path, key: str, v: Any) -> int:
    if v not in SEATS:
        raise _err(path, key, f"expected \"A\" or \"B\", got {v!r}")
    return SEATS.index(v)


def run_file(path: str | Path) -> ScenarioResult:
    """Run one scenario file and compare every expectation; never raises for a failing check."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as e:
        return ScenarioResult(str(path), path.stem, False, [f"cannot read scenario: {e}"])
    name = raw.get("name", path.stem)
    expect = raw.get("expect", {})
    want_error = expect.get("error")
    try:
        pool, core, cap = build(path, raw)
    except (ScenarioError, KeyError, ValueError) as e:
        msg = str(e.args[0]) if e.args else str(e)
        if want_error is not None:
            ok = want_error.lower() in msg.lower()
            return ScenarioResult(str(path), name, ok, [] if ok else [f"error {msg!r} lacks {want_error!r}"])
        return ScenarioResult(str(path), name, False, [f"setup error: {msg}"])
    if want_error is not None:
        return ScenarioResult(str(path), name, False, [f"expected a setup error containing {want_error!r}, "
                                                       "but the scenario loaded"])
    game = Game.from_core(pool, core, cap)
    problems: list[str] = []
    for i, ans in enumerate(raw.get("play", {}).get("decisions", [])):
        d = game.pending()
        if d is None:
            problems.append(f"decision #{i + 1} {ans!r}: the game is already over")
            break
        try:
            game.answer(str(ans))
        except ValueError:
            problems.append(f"decision #{i + 1} {ans!r}: not an option; {d.seat} is asked "
                            f"'{d.kind}' with options {d.options}")
            break
    if not problems:
        problems = check(game, expect)
    return ScenarioResult(str(path), name, not problems, problems, game)


def _same(a: list[str], b: list[str]) -> bool:
    return Counter(x.lower() for x in a) == Counter(x.lower() for x in b)


def check(game: Game, expect: dict[str, Any]) -> list[str]:
    s = game.state()
    out = []
    for k in expect:
        if k not in EXPECT_TOP:
            out.append(f"unknown expectation '{k}'; expected one of {sorted(EXPECT_TOP)}")
    for seat in SEATS:
        for k, want in expect.get(seat, {}).items():
            got: Any
            if k not in EXPECT_SIDE:
                out.append(f"unknown expectation '{seat}.{k}'; expected one of {sorted(EXPECT_SIDE)}")
                continue
            side = s[seat]
            if k == "deck_count":
                got, ok = len(side["deck"]), len(side["deck"]) == want
            elif k == "hand_count":
                got, ok = len(side["hand"]), len(side["hand"]) == want
            elif k in ("hand", "trash", "compiled", "owns"):
                got = side[k]
                ok = _same(got, want)
            elif k == "stacks":
                got = side[k]
                ok = [[x.lower() for x in st] for st in got] == [[x.lower() for x in st] for st in want]
            elif k in ("deck", "protocols"):
                got = side[k]
                ok = [x.lower() for x in got] == [x.lower() for x in want]
            else:
                got = side[k]
                ok = got == want
            if not ok:
                out.append(f"{seat}.{k}: expected {want!r}, got {got!r}")
    for k in ("control", "winner", "active", "phase", "turn"):
        if k in expect and s[k] != expect[k]:
            out.append(f"{k}: expected {expect[k]!r}, got {s[k]!r}")
    d = game.pending()
    if "pending" in expect:
        got = "none" if d is None else d.seat
        if got != expect["pending"]:
            out.append(f"pending: expected {expect['pending']!r}, got {got!r}"
                       + (f" ({d.kind}: {d.options})" if d else ""))
    if "options" in expect:
        got_opts = [] if d is None else d.options
        if not _same(got_opts, expect["options"]):
            out.append(f"options: expected {sorted(expect['options'])}, got {sorted(got_opts)}")
    if "log" in expect or "no_log" in expect:
        lines = game.log()
        for frag in expect.get("log", []):
            if not any(frag.lower() in ln.lower() for ln in lines):
                out.append(f"log: no line contains {frag!r}")
        for frag in expect.get("no_log", []):
            if any(frag.lower() in ln.lower() for ln in lines):
                out.append(f"log: a line contains {frag!r}, which should not happen")
    return out
