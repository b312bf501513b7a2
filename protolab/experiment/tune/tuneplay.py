"""Playing a balance search's games: one job is one batch of seeds under one pool (the baseline or a
candidate variant), answered with each protocol's result per game. Jobs carry card files as text,
so a worker on another machine builds the same pool (pools.py); the same jobs run in this process
(tests, `--workers 1`) or as Ray tasks (`player` over jobs.Local or jobs.OnRay), with identical results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from analysis.stats.balance import outcomes
from protolab.experiment.jobs import Local, OnRay
from protolab.experiment.pools import pool_of
from protolab.experiment.seeds import game_seeds
from sim.enums import names
from sim.pool import Pool
from strategies.seats import play_games

# the loop bound's end reason (sim/cards/vocabulary/engine_enums.py, EndReason)
LOOP_CODE = {w: c for c, w in names("end_reason").items()}["loop_guard"]

VERIFY_MATCHUP = 1 << 40  # fresh seeds: a matchup index no random-draft run or search look uses


@dataclass(frozen=True)
class Job:
    """A batch of games: the pool (sets plus card files as (name, text)), the judging strategies and the seeds."""

    sets: tuple[str, ...]
    cards: tuple[tuple[str, str], ...]
    strategies: tuple[str, str]
    seeds: tuple[int, ...]
    swap: bool
    turn_cap: int


def arm_files(arm) -> tuple[tuple[str, str], ...]:
    """An arm's card files as (path, text): what a job carries so a worker anywhere builds its pool."""
    return tuple((c.path, c.text) for c in arm.cards)


def arm_job(spec, arm, seeds: tuple[int, ...], extra: tuple[tuple[str, str], ...] = ()) -> Job:
    """A batch of `seeds` under `arm` of `spec` (its sets, files, strategies, swap, turn cap), with
    `extra` card files applied after the arm's own (a candidate variant)."""
    return Job(tuple(arm.sets), arm_files(arm) + extra, arm.strategies, seeds, spec.swap, spec.turn_cap)


def search_seeds(master: int, first: int, n: int) -> tuple[int, ...]:
    """Seeds first..first+n of the search (the seed scheme of docs/experiments.md, matchup 0)."""
    return tuple(int(s) for s in game_seeds(master, np.zeros(n, np.int64), np.arange(first, first + n), False))


def verify_seeds(master: int, n: int) -> tuple[int, ...]:
    """Seeds the search never saw, for re-playing its final candidates."""
    return tuple(int(s) for s in game_seeds(master, np.full(n, VERIFY_MATCHUP, np.int64), np.arange(n), False))


class Outcomes(np.ndarray):
    """A job's games x protocols results (analysis.stats.balance.outcomes) and, in `loops`, which of
    those games the loop bound drew (a variant that adds them lets a player force draws)."""

    loops: np.ndarray


def play_job(job: Job) -> tuple[np.ndarray, np.ndarray]:
    """games x protocols results of the job and each game's loop-draw flag; with `swap` and two
    different strategies every seed is played twice, the second time with seats (and trios) exchanged."""
    pool = pool_of(job.sets, job.cards)
    seeds = np.asarray(job.seeds, dtype=np.uint64)
    s0, s1 = job.strategies
    cols = play_games(pool, seeds, (s0, s1), turn_cap=job.turn_cap)
    out = [outcomes(cols["protocols"], cols["winner"], len(pool.protocols))]
    loops = [cols["end_reason"] == LOOP_CODE]
    if job.swap and s0 != s1:
        swapped, swapped_loops = _swapped(pool, seeds, cols, (s1, s0), job.turn_cap)
        out.append(swapped)
        loops.append(swapped_loops)
    return np.concatenate(out), np.concatenate(loops)


def _swapped(
    pool: Pool, seeds: np.ndarray, first: dict[str, np.ndarray], strategies: tuple[str, str], turn_cap: int
) -> tuple[np.ndarray, np.ndarray]:
    """The seeds again with strategies and trios exchanged and the same seat number first, as a run
    with `swap = true` plays the second game of a pair."""
    names = pool.protocols
    out = np.empty((len(seeds), len(names)), np.float32)
    loops = np.zeros(len(seeds), bool)
    for fp in (0, 1):
        idx = np.flatnonzero(first["first_player"] == fp)
        if not len(idx):
            continue
        trios = [
            (tuple(names[x] for x in r[3:]), tuple(names[x] for x in r[:3])) for r in first["protocols"][idx].tolist()
        ]
        cols = play_games(pool, seeds[idx], strategies, turn_cap=turn_cap, first_player=fp, protocols=trios)
        out[idx] = outcomes(cols["protocols"], cols["winner"], len(names))
        loops[idx] = cols["end_reason"] == LOOP_CODE
    return out, loops


Player = Callable[[Sequence[Job]], list[Outcomes]]  # jobs in, each job's outcomes with its loop draws out


def player(runner: Local | OnRay) -> Player:
    """The search's games on `runner`: each job's results (play_job) with their loop draws, in job order."""

    def run(jobs: Sequence[Job]) -> list[Outcomes]:
        out = []
        for results, loops in runner.map(play_job, jobs):
            played = results.view(Outcomes)
            played.loops = loops
            out.append(played)
        return out

    return run
