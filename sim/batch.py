"""Whole games at C speed: the batch path used by `protolab bench`, `simulate` and the runner.

The C loop plays every seed with the built-in strategies and fills preallocated numpy columns
without the GIL; `records()` turns the columns into the same records the step API gives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.engine._core import SeatConfig, play_batch
from sim.pool import ENGINE_VERSION, Pool
from sim.record import make_record

MAX_COMPILES = 64


def play_columns(pool: Pool, seeds: Sequence[int] | np.ndarray, seats: Sequence[SeatConfig], turn_cap: int = 200,
                 first_player: int | None = None,
                 protocols: Sequence[Sequence[Sequence[str]]] | None = None,
                 check_invariants: bool = False, events: bool = False) -> dict[str, np.ndarray]:
    """Play one game per seed with these built seats (seat 0, seat 1: strategies.seats.make_seats
    builds them from specs); returns columns (one row per game).

    `protocols`, if given, is a list of matchups ((a, b, c), (d, e, f)) used round-robin by game
    index; otherwise every game drafts. With `check_invariants` the engine verifies the
    position at every decision and turn boundary and stops a game at the first violation
    (column `violation`, 0 when none). With `events`, `out["events"]` holds the events a run folder keeps
    (draws, plays, deletes, compiles, control gains) as columns whose `game` is the row index."""
    seeds = np.ascontiguousarray(np.asarray(seeds, dtype=np.uint64))
    n = len(seeds)
    if protocols:
        fixed = np.array([[pool.protocol(x) for side in m for x in side] for m in protocols], dtype=np.int16)
    else:
        fixed = np.zeros((0, 6), dtype=np.int16)
    out = {
        "winner": np.zeros(n, np.int8), "first_player": np.zeros(n, np.int8),
        "end_reason": np.zeros(n, np.int8), "turns": np.zeros(n, np.int16),
        "protocols": np.zeros((n, 6), np.int16),
        "picks": np.zeros((n, 6), np.int16),
        "plays_up": np.zeros((n, 2), np.int16), "plays_down": np.zeros((n, 2), np.int16),
        "refreshes": np.zeros((n, 2), np.int16), "control_gains": np.zeros((n, 2), np.int16),
        "n_compiles": np.zeros(n, np.int16),
        "compile_turn": np.zeros((n, MAX_COMPILES), np.int16),
        "compile_player": np.zeros((n, MAX_COMPILES), np.int8),
        "compile_line": np.zeros((n, MAX_COMPILES), np.int8),
        "compile_protocol": np.zeros((n, MAX_COMPILES), np.int16),
        "compile_recompile": np.zeros((n, MAX_COMPILES), np.int8),
        "violation": np.zeros(n, np.int8),
    }
    ev = play_batch(pool.core, seeds, turn_cap, -1 if first_player is None else first_player, fixed, out,
                    MAX_COMPILES, check_invariants, events, tuple(seats))
    if events:
        out["events"] = ev
    out["seed"] = seeds
    return out


def records(pool: Pool, cols: dict[str, np.ndarray],
            strategies: Sequence[str] = ("random", "random")) -> list[dict[str, Any]]:
    """The columns as per-game records, built by the same `make_record` as `State.record()`."""
    out = []
    for i in range(len(cols["seed"])):
        nc = min(int(cols["n_compiles"][i]), MAX_COMPILES)
        state = {
            "dealt": [cols["protocols"][i, :3], cols["protocols"][i, 3:]],
            "first_player": cols["first_player"][i], "winner": int(cols["winner"][i]),
            "end_reason": int(cols["end_reason"][i]), "turn": int(cols["turns"][i]),
            "turn_cap": int(cols["turns"][i]),
            "compiles": [(cols["compile_turn"][i, j], cols["compile_player"][i, j], cols["compile_line"][i, j],
                          cols["compile_protocol"][i, j], cols["compile_recompile"][i, j]) for j in range(nc)],
            "plays_up": cols["plays_up"][i], "plays_down": cols["plays_down"][i],
            "refreshes": cols["refreshes"][i], "control_gains": cols["control_gains"][i],
        }
        out.append(make_record(pool, int(cols["seed"][i]), strategies, state, ENGINE_VERSION))
    return out
