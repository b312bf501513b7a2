"""Why each move, for the board page: the game played once more with its seats watched
(strategies/_explain.pyx), so that at every action decision the bot says which alternatives it
weighed and how it scored them (greedy's one-ply evaluations, search's mean evaluations,
ismcts's visits and mean results), worked out exactly as it decided. Players that cannot say it
(random, Python user strategies) give none."""

from __future__ import annotations

from typing import Any

from sim.engine._core import constants
from strategies._explain import watch

from sim.describe import Namer
from sim.state import State

ACTION = constants()["decision"]["action"]
DIGITS = {"evaluation": 2, "mean evaluation": 2, "visits": 3}  # a score's rounding on the page


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


def ranked(decision: dict[str, Any]) -> list[tuple[int, float, int, bool]]:
    """The alternatives best first, as the bot ranks them: by score, or ismcts's by visits, then mean."""
    if decision["measure"] == "visits":
        return sorted(decision["alternatives"], key=lambda a: (-a[2], -a[1]))
    return sorted(decision["alternatives"], key=lambda a: -a[1])


def entry(decision: dict[str, Any], nm: Namer) -> dict[str, Any]:
    """One decision as the page draws it: who, the measure, and [option text (card marks), score,
    count, allowed, chosen] per alternative, best first."""
    digits = DIGITS[decision["measure"]]
    alts = [
        [nm.option(ACTION, opt), round(score, digits), count, int(allowed), int(opt == decision["played"])]
        for opt, score, count, allowed in ranked(decision)
    ]
    return {"p": decision["player"], "m": decision["measure"], "alts": alts}


def by_turn(game: State, nm: Namer) -> dict[int, list[dict[str, Any]]]:
    """The page entries of every explained decision with more than one alternative, per turn."""
    out: dict[int, list[dict[str, Any]]] = {}
    for d in decisions(game):
        if len(d["alternatives"]) > 1:
            out.setdefault(d["turn"], []).append(entry(d, nm))
    return out
