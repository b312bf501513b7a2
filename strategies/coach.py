"""The coach's view of a game someone played (issue 39): at each decision of a seat whose answers
were recorded, what the learned player would have done there (its choice, its model values of
every candidate, the answers it planned inside the turn) and, per turn, the model's probability
that each seat wins. The same mechanism that explains the learned player's own moves on the board
page (strategies/_explain.pyx): the adviser works on a copy of the game at each decision, so the
game replays exactly as recorded.

    game = State(pool, seed=S, protocols=...)        # a recorded game: its answers in game.answers,
    game.answers = recorded; game.core.run(...)      # the coached seat scripted (sim.state.ST_SCRIPT)
    report = coach_game(game, seat=0)                # {"adviser", "model", "decisions", "win_probability"}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.engine._core import SeatConfig, constants

from sim.describe import DK, Namer
from sim.state import State
from strategies._explain import coach, watch
from strategies.model import DEFAULT_MODEL, load_model
from strategies.spec import make_seat, parse

ADVISER = "learned"  # the player that coaches: the shipped model's player, its defaults
ST_SCRIPT = constants()["strategy"]["script"]


def scripted_seats(game: State) -> list[int]:
    """Seats whose decisions are the game's recorded answers (someone outside the engine played them)."""
    return [p for p, s in enumerate(game.strategies) if not isinstance(s, SeatConfig) and s == ST_SCRIPT]


def coached_decisions(
    game: State, seats: Sequence[int], adviser: str = ADVISER
) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """The game replayed with `seats` coached by `adviser` (strategies._explain.coach: each decision
    with its adviser's answer, marked `coach`) and every other seat watched for its own reasons
    (as board_why.decisions) and coached too (a C seat as it plays, a recorded one by its answers),
    for the model's values only (marked `shadow`);
    sorted by turn; and {seat: adviser}. The game is left as it was."""
    strategies = list(game.strategies)
    coaches, watchers = [], []
    for p, seat in enumerate(game.strategies):
        w = watch(seat) if p not in seats else None
        if w is not None:
            watchers.append(w)
        c = _coach_of(game, p in seats, seat, adviser)
        if c is not None:
            coaches.append((p, c))
            strategies[p] = c.coached
    try:
        status = game.core.run(game.answers, tuple(strategies))
        if status == "bad":
            raise ValueError("coach: a recorded answer is out of range for its decision")
        said = [d for w in watchers for d in w.decisions()]
        for p, c in coaches:
            mark = "coach" if p in seats else "shadow"
            said += [{**d, mark: adviser} for d in c.decisions() if d["player"] == p]
    finally:
        for w in watchers:
            w.release()
        game.core.run(game.answers, game.strategies)
    return sorted(said, key=lambda d: d["turn"]), {p: adviser for p in seats}


def _coach_of(game: State, coached: bool, seat: Any, adviser: str) -> Any:
    """The adviser coaching a seat: a coached seat as it answers, another engine seat beside its own
    play, another recorded seat by its answers; None for a seat it cannot follow (a Python one)."""
    if coached:
        return coach(make_seat(adviser, game.pool))
    if isinstance(seat, SeatConfig):
        return coach(make_seat(adviser, game.pool), seat)
    return coach(make_seat(adviser, game.pool)) if seat == ST_SCRIPT else None  # recorded: for its values


def coach_game(game: State, seat: int, adviser: str = ADVISER) -> dict[str, Any]:
    """For `protolab play`'s replay: each decision of `seat` (a scripted seat: its answers are the
    game's recorded ones) as the adviser saw it, and the model's win probability of `seat` per turn.

    decisions: one per decision of the seat, in order: turn, kind (a word), played and advised (option
    texts, omniscient names), how the adviser answered ('model': weighed every candidate action;
    'planned': the answer it planned for this turn's action, which the seat also took; 'rule': its
    default rule), and for an action decision its candidates best first as [option text, value the
    choice compared (after the opponent's reply for the best few, -1 for the rest), value at the end
    of this turn, allowed] and the answers it planned (option texts).
    win_probability: {turn: the model's probability that `seat` wins, from the end of that turn},
    each from the view of the seat that moved in it (the adviser's values of the moves played)."""
    if seat not in scripted_seats(game):
        raise ValueError(f"coach: seat {seat} is not a recorded (scripted) seat of this game")
    said, _ = coached_decisions(game, [seat], adviser)
    nm = Namer(game.pool, game.core.state())
    out, values = [], {}
    for d in said:
        if d["measure"] == "model" and (first := _played_value(d)) is not None:
            values[d["turn"]] = first if d["player"] == seat else 1.0 - first
        if "coach" not in d:
            continue
        entry = {
            "turn": d["turn"],
            "kind": DK[d["kind"]],
            "played": nm.option(d["kind"], d["played"]),
            "advised": nm.option(d["kind"], d["chosen"]),
            "how": d["measure"],
        }
        if d["alternatives"]:
            ranked = sorted(d["alternatives"], key=lambda a: (-a[1], -a[4]))
            entry["candidates"] = [[nm.option(d["kind"], a[0]), round(a[1], 4), round(a[4], 4), a[3]] for a in ranked]
            entry["plan"] = [nm.option(k, opt) for k, opt in d["plan"]]
        out.append(entry)
    return {
        "adviser": adviser,
        "model": model_hash(adviser),
        "decisions": out,
        "win_probability": {t: round(v, 4) for t, v in sorted(values.items())},
    }


def _played_value(d: dict[str, Any]) -> float | None:
    """The model's value, for the mover, of the action it played at the end of its turn."""
    v = next((a[4] for a in d["alternatives"] if a[0] == d["played"]), None)
    return v if v is not None and v >= 0 else None


def model_hash(spec: str) -> str:
    """The short hash of the model a learned player's spec plays with."""
    return load_model(str(parse(spec).params.get("model", DEFAULT_MODEL))).hash


def model_adviser(seats: Sequence[Any]) -> str | None:
    """The learned player's spec with the model the first of these seats that has one plays with
    (the learned player, or ismcts with leaf=model or choices=model); None when none has a model."""
    for seat in seats:
        spec = str(getattr(seat, "spec", "")) if isinstance(seat, SeatConfig) else ""
        if not spec:
            continue
        parsed = parse(spec)
        has_model = parsed.base == "learned" or (
            parsed.base == "ismcts" and "model" in (parsed.params.get("leaf"), parsed.params.get("choices"))
        )
        if has_model:
            model = str(parsed.params.get("model", DEFAULT_MODEL))
            return ADVISER if model == DEFAULT_MODEL else f"{ADVISER}:model={model}"
    return None
