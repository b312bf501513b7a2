"""Writing your own strategy in Python (docs/strategies.md).

    # mybots.py
    from strategies.user import Strategy

    class FirstOption(Strategy):
        def choose(self, observation, decision):
            return 0            # index into decision.options

Name it anywhere a strategy is named: `protolab ladder mybots:FirstOption greedy`. The engine
calls `choose` for every decision with more than one option; `observation` holds only what the
player may know (sim/observation.py) and `decision` has `kind` and readable `options`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sim.describe import DK, Namer
from sim.observation import observation_from_state


@dataclass(frozen=True)
class UserDecision:
    """A decision as a user strategy sees it."""

    player: str
    kind: str
    options: list[str]


class Strategy:
    """Base class for user strategies: override choose()."""

    def choose(self, observation: dict[str, Any], decision: UserDecision) -> int:
        raise NotImplementedError


class PythonSeat:
    """Adapter the engine calls (with the GIL) for a seat played by a Python strategy."""

    def __init__(self, strategy: Any, pool=None):
        self.strategy = strategy
        self.pool = pool

    def __repr__(self) -> str:
        return f"{type(self.strategy).__module__}.{type(self.strategy).__name__}"

    def _choose(self, view, player: int, kind: int, options: list[int]) -> int:
        s = view.state()
        nm = Namer(self.pool, s, viewer=player)
        decision = UserDecision("AB"[player], DK[kind], [nm.option(kind, o) for o in options])
        return self.strategy.choose(observation_from_state(self.pool, s, player), decision)
