"""The position, step by step, for tests and notebooks (OpenSpiel's split: the rules object is the
card pool, `sim.pool.Pool`; the position of one game is a `State`).

    game = State(load_pool(), seed=7)
    while (d := game.pending()) is not None:
        game.answer(0)                      # or game.answer("Fire 1 up left")
    game.record()

Each answer is replayed by the C engine from the game's start position (see CoreState), so the
state after any sequence of answers is exact and reproducible."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sim.describe import DK, LINES, PHASES, SEAT_NAMES, Namer, format_log
from sim.engine._core import CoreState, constants
from sim.observation import observation_from_state
from sim.pool import ENGINE_VERSION, Pool, load_pool
from sim.record import make_record

K = constants()
ST_RANDOM, ST_SCRIPT = K["strategy"]["random"], K["strategy"]["script"]
ZONES = ("out", "deck", "hand", "field", "trash", "transit")


@dataclass(frozen=True)
class Decision:
    """A choice the engine is waiting for: who decides, what kind, and the legal options."""

    player: int
    kind: str
    options: list[str]
    values: list[int]

    @property
    def seat(self) -> str:
        return SEAT_NAMES[self.player]


class State:
    """The position of one game, played decision by decision.

    Args:
        pool: the card pool (`sim.pool.load_pool`); the four official sets when None.
        seed: the game's seed: the same seed, pool and answers give the same game.
        protocols: both trios, seat 0's then seat 1's, each three protocol names left to right;
            None plays the seeded draft.
        first_player: 0 or 1; None lets the seeded coin choose.
        turn_cap: a game reaching this many turns ends as a draw.
        auto: seats whose decisions the engine's random strategy takes.

    Raises:
        KeyError: a protocol the pool does not hold.
        ValueError: `protocols` is not two trios of six distinct protocols.

    Example:
        >>> trios = [["Fire", "Water", "Death"], ["Gravity", "Light", "Life"]]
        >>> game = State(load_pool(["Main 1"]), seed=7, protocols=trios)
        >>> game.pending().kind
        'action'
        >>> game.play_out()
        >>> game.is_over, game.record()["seed"]
        (True, 7)
    """

    def __init__(
        self,
        pool: Pool | None = None,
        seed: int = 0,
        protocols: Sequence[Sequence[str]] | None = None,
        first_player: int | None = None,
        turn_cap: int = 200,
        auto: Sequence[int] = (),
    ):
        self.pool = pool or load_pool()
        self.seed = seed
        self.core = CoreState(self.pool.core, seed, turn_cap)
        self.turn_cap = turn_cap
        ids = None
        if protocols is not None:
            ids = [[self.pool.protocol(n) for n in side] for side in protocols]
            flat = [i for side in ids for i in side]
            if len(flat) != 6 or len(set(flat)) != 6:
                raise ValueError("protocols must be two trios of six distinct protocols")
        self.core.begin(-1 if first_player is None else first_player, ids)
        self.strategies = tuple(ST_RANDOM if p in auto else ST_SCRIPT for p in (0, 1))
        self.answers: list[int] = []
        self._status = self.core.run(self.answers, self.strategies)

    @classmethod
    def from_core(cls, pool: Pool, core: CoreState, turn_cap: int = 200) -> State:
        """Wrap an already set-up core (scenarios)."""
        g = cls.__new__(cls)
        g.pool, g.seed, g.core, g.turn_cap = pool, 0, core, turn_cap
        g.strategies = (ST_SCRIPT, ST_SCRIPT)
        g.answers = []
        g._status = core.run(g.answers, g.strategies)
        return g

    # -- decisions -----------------------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self._status == "over"

    def pending(self, viewer: int | None = None) -> Decision | None:
        """The decision the game waits for, or None when it is over. Option texts are written
        for `viewer` (None: omniscient names, as scenarios use)."""
        if self.is_over:
            return None
        player, kind, values = self.core.pending()
        nm = Namer(self.pool, self.core.state(), viewer)
        return Decision(player, DK[kind], [nm.option(kind, v) for v in values], values)

    def answer(self, choice: int | str) -> None:
        d = self.pending()
        if d is None:
            raise RuntimeError("the game is over; there is nothing to answer")
        if isinstance(choice, str):
            wanted = " ".join(choice.lower().split())
            matches = [i for i, o in enumerate(d.options) if o.lower() == wanted]
            if not matches:
                raise ValueError(
                    f"{choice!r} is not an option of this {d.kind} decision for {d.seat}; options: {d.options}"
                )
            choice = matches[0]
        if not 0 <= choice < len(d.options):
            raise ValueError(f"option index {choice} out of range 0..{len(d.options) - 1}")
        self.answers.append(choice)
        self._status = self.core.run(self.answers, self.strategies)

    def play_out(self) -> None:
        """Finish the game with the random strategy for both seats."""
        self.strategies = (ST_RANDOM, ST_RANDOM)
        self._status = self.core.run(self.answers, self.strategies)

    # -- state -----------------------------------------------------------------------------------
    def raw_state(self) -> dict[str, Any]:
        return self.core.state()

    def state(self) -> dict[str, Any]:
        """Omniscient, readable state: every zone by card name (face-down cards as 'down:NAME')."""
        s = self.core.state()
        nm = Namer(self.pool, s)
        names = self.pool.protocols

        def stack(cards: list[int]) -> list[str]:
            return [nm.card(c) if s["face_up"][c] else "down:" + nm.card(c) for c in cards]

        players = {}
        for p in (0, 1):
            players[SEAT_NAMES[p]] = {
                "protocols": [names[i] for i in s["protocols"][p]],
                "compiled": [names[i] for i, c in zip(s["protocols"][p], s["compiled"][p], strict=True) if c],
                "hand": [nm.card(c) for c in s["hand"][p]],
                "deck": [nm.card(c) for c in s["deck"][p]],
                "trash": [nm.card(c) for c in s["trash"][p]],
                "stacks": [stack(s["stacks"][p][line]) for line in range(3)],
                "values": s["values"][p],
                "owns": [nm.card(c) for c in range(36) if s["zone"][c] != 0 and s["owner"][c] == p and c // 18 != p],
            }
        return {
            **players,
            "active": SEAT_NAMES[s["active"]],
            "turn": s["turn"],
            "phase": PHASES[s["phase"]],
            "control": "none" if s["control"] < 0 else SEAT_NAMES[s["control"]],
            "winner": {-1: "none", 0: "A", 1: "B", 2: "draw"}[s["winner"]],
        }

    def observation(self, player: int) -> dict[str, Any]:
        """What `player` may know (8.1); see sim/observation.py. Includes the pending decision
        when it is this player's."""
        obs = observation_from_state(self.pool, self.core.state(), player)
        d = self.pending(viewer=player)
        if d is not None and d.player == player:
            obs["decision"] = {"kind": d.kind, "options": d.options}
        return obs

    # -- results ----------------------------------------------------------------------------------
    def log(self) -> list[str]:
        """The readable log of everything so far (each decision and effect, indented by cause)."""
        self.core.run(self.answers, self.strategies, True)
        lines = format_log(self.pool, self.core.state(), self.core.log_entries())
        self._status = self.core.run(self.answers, self.strategies)
        return lines

    def record(self, strategies: Sequence[str] = ("script", "script")) -> dict[str, Any]:
        return make_record(self.pool, self.seed, strategies, self.core.state(), ENGINE_VERSION)


__all__ = ["State", "Decision", "LINES", "ZONES"]
