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

# The batch's per-game columns, the one declaration (name: dtype, values per game; 0 for a scalar),
# filled by the C loop (_core.pyx play_batch); `compile_*` in the order of a compile tuple.
GAME_COLUMNS: dict[str, tuple[type, int]] = {
    "winner": (np.int8, 0),
    "first_player": (np.int8, 0),
    "end_reason": (np.int8, 0),
    "turns": (np.int16, 0),
    "protocols": (np.int16, 6),
    "picks": (np.int16, 6),
    "plays_up": (np.int16, 2),
    "plays_down": (np.int16, 2),
    "refreshes": (np.int16, 2),
    "control_gains": (np.int16, 2),
    "n_compiles": (np.int16, 0),
    "compile_turn": (np.int16, MAX_COMPILES),
    "compile_player": (np.int8, MAX_COMPILES),
    "compile_line": (np.int8, MAX_COMPILES),
    "compile_protocol": (np.int16, MAX_COMPILES),
    "compile_recompile": (np.int8, MAX_COMPILES),
    "violation": (np.int8, 0),
    "loop_card": (np.int16, 0),  # the card (pool index) whose text hit the loop bound; -1 none
}
# Columns added after the first release, with the value every game had before them: a fixed-batch hash
# (benchmarks/play_hash.py) leaves such a column out while it holds only that value, as the pool hash
# leaves out later step fields.
LATER_COLUMNS = {"loop_card": -1}
COMPILE_COLUMNS = tuple(name for name in GAME_COLUMNS if name.startswith("compile_"))
SEAT_COLUMNS = tuple(name for name, (_, width) in GAME_COLUMNS.items() if width == 2)  # one value per seat
# What a game keeps (a run's rows come from these): every column but the invariant check's, and its seed.
RECORDED_COLUMNS = (*(name for name in GAME_COLUMNS if name != "violation"), "seed")


def empty_columns(n: int) -> dict[str, np.ndarray]:
    """GAME_COLUMNS for n games: zeros, a later column its value from before it."""
    return {
        name: np.full((n, width) if width else n, LATER_COLUMNS.get(name, 0), dtype)
        for name, (dtype, width) in GAME_COLUMNS.items()
    }


def play_columns(
    pool: Pool,
    seeds: Sequence[int] | np.ndarray,
    seats: Sequence[SeatConfig],
    turn_cap: int = 200,
    first_player: int | None = None,
    protocols: Sequence[Sequence[Sequence[str]]] | None = None,
    check_invariants: bool = False,
    events: bool = False,
) -> dict[str, np.ndarray]:
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
    out = empty_columns(n)
    ev = play_batch(
        pool.core,
        seeds,
        turn_cap,
        -1 if first_player is None else first_player,
        fixed,
        out,
        MAX_COMPILES,
        check_invariants,
        events,
        tuple(seats),
    )
    if events:
        out["events"] = ev
    out["seed"] = seeds
    return out


def records(
    pool: Pool, cols: dict[str, np.ndarray], strategies: Sequence[str] = ("random", "random")
) -> list[dict[str, Any]]:
    """The columns as per-game records, built by the same `make_record` as `State.record()`."""
    out = []
    for i in range(len(cols["seed"])):
        nc = min(int(cols["n_compiles"][i]), MAX_COMPILES)
        state = {
            "dealt": [cols["protocols"][i, :3], cols["protocols"][i, 3:]],
            "first_player": cols["first_player"][i],
            "winner": int(cols["winner"][i]),
            "end_reason": int(cols["end_reason"][i]),
            "loop_card": int(cols["loop_card"][i]),
            "turn": int(cols["turns"][i]),
            "turn_cap": int(cols["turns"][i]),
            "compiles": [tuple(cols[name][i, j] for name in COMPILE_COLUMNS) for j in range(nc)],
            **{name: cols[name][i] for name in SEAT_COLUMNS},
        }
        out.append(make_record(pool, int(cols["seed"][i]), strategies, state, ENGINE_VERSION))
    return out
