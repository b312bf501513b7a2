"""Why each move, for the board page: the game played once more with its seats watched
(strategies/_explain.pyx), so that at every action decision the bot says which alternatives it
weighed and how it scored them (greedy's one-ply evaluations, search's mean evaluations,
ismcts's visits and mean results, the learned player's model values and the answers it planned
inside the turn), worked out exactly as it decided. Players that cannot say it (random, Python
user strategies) give none. A scripted seat (a game someone played, its decisions recorded) is
coached instead: the learned player says at each of its decisions what it would have done
(strategies/coach.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sim.engine._core import constants
from strategies._explain import watch

from sim.describe import DK, Namer
from sim.state import State
from strategies.coach import ADVISER, coached_decisions, model_adviser, scripted_seats

ACTION = constants()["decision"]["action"]
DIGITS = {"evaluation": 2, "mean evaluation": 2, "visits": 3, "model": 3}  # a score's rounding on the page


def decisions(game: State) -> list[dict[str, Any]]:
    """Every explained action decision of the game (strategies._explain.Watcher.decisions), in
    the order played; the game is left as it was (played to its end by its own seats)."""
    watchers = [watch(seat) for seat in game.strategies]
    try:
        game.core.run(game.answers, game.strategies)
        said = [d for w in watchers if w is not None for d in w.decisions()]
    finally:
        for w in watchers:
            if w is not None:
                w.release()
    game.core.run(game.answers, game.strategies)
    return sorted(said, key=lambda d: d["turn"])


def explained(
    game: State, coached: Sequence[int] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, str]]:
    """The game's explained action decisions for the "why" panel (its players' own, `decisions`,
    and for each coached seat, by default every scripted seat, its coach's, marked `coach`); those
    whose model values make the win-probability graph (the learned player's values of every move
    played, by the coach's model or else the model a player of the game has, so one model judges
    both seats; none when no player has one); and {coached seat: adviser spec}."""
    coached = scripted_seats(game) if coached is None else list(coached)
    adviser = ADVISER if coached else model_adviser(game.strategies)
    if adviser is None:
        said = decisions(game)
        return said, said, {}
    said, advisers = coached_decisions(game, coached, adviser)
    actions = [d for d in said if d["kind"] == ACTION]
    inner = [d for d in said if d["kind"] != ACTION and "coach" in d]
    why = [d for d in actions if "shadow" not in d]
    return why + inner, [d for d in actions if "coach" in d or "shadow" in d], advisers


def ranked(decision: dict[str, Any]) -> list[tuple]:
    """The alternatives best first, as the bot ranks them: by score, or ismcts's by visits, then mean;
    the learned player's by the value it compared, then its value at the end of the turn."""
    if decision["measure"] == "visits":
        return sorted(decision["alternatives"], key=lambda a: (-a[2], -a[1]))
    if decision["measure"] == "model":
        return sorted(decision["alternatives"], key=lambda a: (-a[1], -a[4]))
    return sorted(decision["alternatives"], key=lambda a: -a[1])


def entry(decision: dict[str, Any], nm: Namer) -> dict[str, Any]:
    """One decision as the page draws it: who, the measure, [option text (card marks), score,
    count, allowed, played, value at the turn's end, the bot's choice] per alternative, best first,
    the answers it planned inside the turn, and whether a coach (not the mover) said it."""
    digits = DIGITS[decision["measure"]]
    alts = [
        [
            nm.option(ACTION, a[0]),
            round(a[1], digits),
            a[2],
            int(a[3]),
            int(a[0] == decision["played"]),
            round(a[4], digits),
            int(a[0] == decision["chosen"]),
        ]
        for a in ranked(decision)
    ]
    out = {"p": decision["player"], "m": decision["measure"], "alts": alts}
    if decision.get("plan"):
        out["plan"] = [nm.option(kind, opt) for kind, opt in decision["plan"]]
    if decision.get("coach"):
        out["coach"] = decision["coach"]
    return out


def by_turn(said: list[dict[str, Any]], nm: Namer) -> dict[int, list[dict[str, Any]]]:
    """The page entries of every explained action decision with more than one alternative, per turn."""
    out: dict[int, list[dict[str, Any]]] = {}
    for d in said:
        if d["kind"] == ACTION and len(d["alternatives"]) > 1:
            out.setdefault(d["turn"], []).append(entry(d, nm))
    return out


def inner_by_turn(said: list[dict[str, Any]], nm: Namer) -> dict[int, list[list[Any]]]:
    """A coached seat's decisions other than its action (inside effects, compiles, the draft),
    per turn (the draft's under turn 1), as [seat, decision kind, played (card marks), the
    coach's answer, how it answered ('planned': for the action played, which it chose too;
    'rule': its own rule), 1 where the two differ]: the page marks where the person and the
    coach part inside a turn, not only at its action."""
    out: dict[int, list[list[Any]]] = {}
    for d in said:
        if d["kind"] == ACTION or "coach" not in d:
            continue
        row = [
            d["player"],
            DK[d["kind"]],
            nm.option(d["kind"], d["played"]),
            nm.option(d["kind"], d["chosen"]),
            d["measure"],
            int(d["played"] != d["chosen"]),
        ]
        out.setdefault(max(1, d["turn"]), []).append(row)
    return out


def model_values(said: list[dict[str, Any]]) -> dict[int, float]:
    """Per turn, the model's probability that A wins from the end of that turn: the mover's model
    value of the action it played (measure 'model': its value at the end of the turn, from its own
    view, over its determinizations), turned into A's. Turns without one are absent."""
    out: dict[int, float] = {}
    for d in said:
        if d["measure"] != "model":
            continue
        value = next((a[4] for a in d["alternatives"] if a[0] == d["played"]), None)
        if value is not None and value >= 0:
            out[d["turn"]] = value if d["player"] == 0 else 1.0 - value
    return out
