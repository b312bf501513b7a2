"""The `human` seat: a person's decisions, taken in `protolab play` and kept in the run folder.

A run spec may name `human` like any player, so a played game is a run like any other. Outside
`protolab play` and the replay of its games there is nobody to ask: the seat then fails with one
line (`Unattended`). `Playback` answers a game's recorded decisions in order, so the batch path
(events, tallies) plays the very game the person played."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from strategies.errors import StrategyError

HUMAN = "human"


class HumanSeatError(StrategyError):
    """A human seat asked for a decision nobody recorded."""


class Unattended:
    """The engine's Python seat for `human` where no person plays: every decision is an error."""

    def _choose(self, view: Any, player: int, kind: int, options: list[int]) -> int:
        raise HumanSeatError(
            f"seat {'AB'[player]} is `human`: a person plays it in `protolab play`, "
            f"no other command can (game with seed {view.seed})"
        )

    def __repr__(self) -> str:
        return HUMAN


class Playback:
    """The engine's Python seat answering recorded decisions (option indices) in order."""

    def __init__(self, answers: Sequence[int]):
        self.answers = list(answers)
        self.used = 0

    def _choose(self, view: Any, player: int, kind: int, options: list[int]) -> int:
        if self.used >= len(self.answers):
            raise HumanSeatError(
                f"seat {'AB'[player]} (human): the game asks for decision {self.used + 1}, but only "
                f"{len(self.answers)} were recorded (game with seed {view.seed})"
            )
        answer = self.answers[self.used]
        self.used += 1
        return answer

    def __repr__(self) -> str:
        return HUMAN
