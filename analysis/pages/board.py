"""A played game as positions, one step per turn: the exact position when each turn ends (the
engine replayed from the start and stopped there, as `protolab replay --states` prints it), the
log of that turn and a win probability: the model's where the players have one, else from greedy
rollouts if asked. The board page
(analysis/pages/board_page.py) draws these steps; `frame` gives them to a notebook as a DataFrame.

A position is plain JSON: card instances are numbers (0-35, their texts once per game in
`cards`), a face-down card in a stack is written as -1 - id, so a step costs under a kilobyte of the
page, its log included (765 bytes a step for the 200-turn greedy game of seed 1064)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pandas as pd
from sim.engine._core import CoreState, constants

from analysis.pages import board_why
from sim.describe import LINES, PHASES, SEAT_NAMES, LogLine, Namer, log_line
from sim.enums import Zone
from sim.pool import Pool
from sim.state import State
from strategies.coach import model_adviser, model_hash
from strategies.seats import make_seats

K = constants()
LOG_TURN = K["log"]["turn"]
START_PHASE = K["phase"]["start"]
WINNERS = {-1: "none", 0: "A", 1: "B", 2: "draw"}
CARD_MARK = "\u00ab{}\u00bb"  # a card instance in a log text: the page names it for the viewer


class _MarkingNamer(Namer):
    """Names every card instance by a mark the page replaces for the chosen view."""

    def card(self, c: int) -> str:
        return CARD_MARK.format(c)


def position(s: dict[str, Any]) -> dict[str, Any]:
    """The compact position of a raw engine state (CoreState.state())."""

    def stack(cards: list[int]) -> list[int]:
        return [c if s["face_up"][c] else -1 - c for c in cards]

    sides = []
    for p in (0, 1):
        sides.append(
            {
                "protocols": list(s["protocols"][p]),
                "compiled": [int(x) for x in s["compiled"][p]],
                "values": list(s["values"][p]),
                "stacks": [stack(s["stacks"][p][line]) for line in range(3)],
                "hand": list(s["hand"][p]),
                "deck": len(s["deck"][p]),
                "trash": list(s["trash"][p]),
            }
        )
    return {
        "turn": s["turn"],
        "active": s["active"],
        "phase": s["phase"],
        "control": s["control"],
        "winner": s["winner"],
        "sides": sides,
        "owner": {
            str(c): s["owner"][c]
            for c in range(len(s["owner"]))
            if s["zone"][c] != Zone.OUT and s["owner"][c] != c // 18
        },
    }


def turn_logs(game: State) -> dict[int, list[list[Any]]]:
    """Each turn's log entries as [depth, player, causing card or -1, text with card marks]."""
    game.core.run(game.answers, game.strategies, True)
    entries = game.core.log_entries()
    s = game.core.state()
    game.core.run(game.answers, game.strategies)
    nm = _MarkingNamer(game.pool, s)
    out: dict[int, list[list[Any]]] = {}
    turn = 1
    for e in entries:
        if e[0] == LOG_TURN:
            turn = e[6]
        text = log_line(LogLine(game.pool, nm, *e)).strip()
        out.setdefault(turn, []).append([e[1], e[2], e[3], text])
    return out


def card_table(pool: Pool, s: dict[str, Any]) -> list[dict[str, Any]]:
    """Per card instance of this game: its card's name, protocol, value and texts."""
    out = []
    for d in s["cdef"]:
        info = pool.cards[d]
        out.append(
            {
                "name": info.name,
                "protocol": info.protocol,
                "value": info.value,
                "text": " / ".join(t for t in (info.top, info.middle, info.bottom) if t),
            }
        )
    return out


def turn_ends(game: State) -> list[dict[str, Any]]:
    """The raw engine state (CoreState.state()) at the end of every turn, the last one being the
    game's end (at the turn cap, the engine's turn is then one past the last turn played). Each is
    the game replayed from the start and stopped there, never one rebuilt; a game of T turns is
    replayed T times, so a slow strategy (search, ismcts) costs T times its game."""
    out = []
    for turn in range(1, game.record()["turns"]):
        if game.core.run(game.answers, game.strategies, until_turn=turn) != "turn_end":
            break
        out.append(game.core.state())
    game.core.run(game.answers, game.strategies)
    return [*out, game.core.state()]


def steps(
    game: State, ends: list[dict[str, Any]] | None = None, said: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Each turn end's position (`turn_ends`, or the ones given) with its turn's log and, where
    its player (or a scripted seat's coach) can say it, why it moved as it did (board_why: the
    alternatives it weighed; `said`: its explained decisions, worked out here if not given)."""
    logs = turn_logs(game)
    if said is None:
        said = board_why.explained(game)[0]
    nm = _MarkingNamer(game.pool, game.core.state())
    why, inner = board_why.by_turn(said, nm), board_why.inner_by_turn(said, nm)
    out = []
    for k, raw in enumerate(ends or turn_ends(game)):
        step = {**position(raw), "log": logs.get(k + 1, [])}
        if k + 1 in why:
            step["why"] = why[k + 1]
        if k + 1 in inner:
            step["inner"] = inner[k + 1]
        out.append(step)
    return out


def rollout_win_rates(
    game: State, rollouts: int, seed: int = 1, strategy: str = "greedy", ends: list[dict[str, Any]] | None = None
) -> list[float | None]:
    """Per step (turn end, as `steps`), seat A's share of `rollouts` games played out from there by
    `strategy` on both seats (draws count half), each with both decks reshuffled by a seeded stream:
    what the position is worth to competent play that does not know the hidden order. None once
    the game is over. The next turn starts afresh: effects that last into it are not carried."""
    seats = make_seats(game.pool, (strategy, strategy)).configs
    ends = ends or turn_ends(game)
    return [
        None if raw["winner"] != -1 or k == len(ends) - 1 else _rollouts(game, seats, raw, rollouts, f"{seed}:{k + 1}")
        for k, raw in enumerate(ends)
    ]


def _rollouts(game: State, seats: Any, raw: dict[str, Any], rollouts: int, key: str) -> float:
    """Seat A's share of `rollouts` played-out games from this turn-end state (draws: half)."""
    score = 0.0
    for r in range(rollouts):
        rng = random.Random(f"{key}:{r}")
        core = CoreState(game.pool.core, rng.getrandbits(63), game.turn_cap)
        core.place(placement(raw, rng))
        core.run([], seats)
        w = core.state()["winner"]
        score += 1.0 if w == 0 else 0.0 if w == 1 else 0.5
    return round(score / rollouts, 4)


def placement(raw: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A turn-end state as CoreState.place takes it: the next seat's turn about to start, each
    deck in an order drawn from `rng` (nobody knows it)."""
    decks = []
    for p in (0, 1):
        deck = list(raw["deck"][p])
        rng.shuffle(deck)
        decks.append(deck)
    return {
        "active": 1 - raw["active"],
        "phase": START_PHASE,
        "turn": raw["turn"] + 1,
        "control": raw["control"],
        "first_player": raw["first_player"],
        "no_compile_turn": [-1, -1],
        "protocols": raw["protocols"],
        "compiled": raw["compiled"],
        "cdef": dict(enumerate(raw["cdef"])),
        "owner": dict(enumerate(raw["owner"])),
        "deck": decks,
        "hand": raw["hand"],
        "trash": raw["trash"],
        "stacks": [[[(c, raw["face_up"][c]) for c in line] for line in side] for side in raw["stacks"]],
    }


def game_data(
    game: State,
    title: str,
    rollouts: int = 0,
    seed: int = 1,
    meta: dict[str, Any] | None = None,
    coached: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Everything the board page draws for one game, as JSON-ready data. The win-probability
    graph is the model's where the game's players have one (or a scripted seat is coached by the
    learned player: board_why.model_values); greedy rollouts otherwise (`rollouts` per turn end).
    `coached`: the seats the learned player coaches (default: every scripted seat, whose decisions
    are the game's recorded answers: a game a person played)."""
    ends = turn_ends(game)
    said, valued, advisers = board_why.explained(game, coached)
    st = steps(game, ends, said)
    raw = ends[-1]
    rec = game.record()
    names = game.pool.protocols
    values = board_why.model_values(valued)
    if values:
        for k, step in enumerate(st):  # step k: the end of turn k + 1
            step["win_a"] = round(values[k + 1], 4) if k + 1 in values else None
        rollouts = 0
    elif rollouts > 0:
        for step, p in zip(st, rollout_win_rates(game, rollouts, seed, ends=ends), strict=True):
            step["win_a"] = p
    meta = dict(meta or {})
    for p, spec in advisers.items():
        meta[f"coach_{p}"] = spec
    return {
        "title": title,
        "meta": meta,
        "win_source": "model" if values else "rollouts" if rollouts > 0 else "none",
        "model": _model_of(game, advisers) if values else "",
        "rollouts": rollouts,
        "rollout_seed": seed,
        "seats": list(SEAT_NAMES),
        "lines": list(LINES),
        "phases": [PHASES[k] for k in sorted(PHASES)],
        "protocols": names,
        "cards": card_table(game.pool, raw),
        "compiles": [
            {"turn": t, "seat": p, "line": line, "protocol": names[proto], "recompile": bool(re)}
            for t, p, line, proto, re in raw["compiles"]
        ],
        "result": {"winner": WINNERS[raw["winner"]], "turns": rec["turns"], "end_reason": rec["end_reason"]},
        "steps": st,
    }


def _model_of(game: State, advisers: dict[int, str]) -> str:
    """Which model the graph's values come from: the coach's, else the one a player has."""
    spec = next(iter(advisers.values()), None) or model_adviser(game.strategies) or ""
    return f"{spec} (model {model_hash(spec)})" if spec else ""


def frame(data: dict[str, Any]) -> pd.DataFrame:
    """One row per step (turn end) of `game_data`: the position as readable columns, for notebooks.
    Stacks read bottom to top, a face-down card as 'down:NAME'."""
    cards, names = data["cards"], data["protocols"]

    def card(c: int) -> str:
        return cards[c]["name"] if c >= 0 else "down:" + cards[-1 - c]["name"]

    rows = []
    for k, st in enumerate(data["steps"]):
        row: dict[str, Any] = {
            "step": k,
            "turn": st["turn"],
            "active": SEAT_NAMES[st["active"]],
            "phase": PHASES[st["phase"]],
            "control": "none" if st["control"] < 0 else SEAT_NAMES[st["control"]],
            "winner": WINNERS[st["winner"]],
            "log_lines": len(st["log"]),
        }
        for p, side in enumerate(st["sides"]):
            a = SEAT_NAMES[p]
            row[f"{a}_compiled"] = [names[x] for x, c in zip(side["protocols"], side["compiled"], strict=True) if c]
            row[f"{a}_hand"] = [cards[c]["name"] for c in side["hand"]]
            row[f"{a}_deck"] = side["deck"]
            row[f"{a}_trash"] = len(side["trash"])
            for line, proto, value, stack in zip(LINES, side["protocols"], side["values"], side["stacks"], strict=True):
                row[f"{a}_{line}_protocol"] = names[proto]
                row[f"{a}_{line}_value"] = value
                row[f"{a}_{line}_stack"] = [card(c) for c in stack]
        row["win_a"] = st.get("win_a")
        rows.append(row)
    return pd.DataFrame(rows)
