"""The games of a training, as jobs: a shard of example games (written by the worker as one Parquet
file in the training folder, answered with a receipt) or a shard of ladder games (answered with
its wins). Jobs carry the card files and the model as text, so a worker on another machine builds
the same pool and plays the same model; the same jobs run in this process (`--workers 1`) or as
Ray tasks (jobs.Local or jobs.OnRay), with identical results."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from strategies._features import FEATURE_DIGEST, FEATURES

from analysis.runs.runfolder import sha256, write_atomic
from protolab.experiment.pools import pool_of
from protolab.experiment.seeds import game_seeds
from strategies.ladder import play_pair
from strategies.learned import examples

MODEL_SLOT = "@model"  # in a job's strategies: the job's model, written to a file by the worker
LADDER_MATCHUP = 1 << 41  # the ladder's seeds: a matchup index no generation's examples use
KEY_COLUMNS = ("generation", "seed", "turn", "player", "outcome")
POLICY_KEY_COLUMNS = ("generation", "seed", "turn", "player", "action", "visits", "share", "score")
POLICY_DIR = "policy"  # gen-N/policy/shard-*.parquet beside gen-N/examples/ (the same shard's name)


def feature_column(name: str) -> str:
    """A feature's column in the examples' Parquet files."""
    return f"f_{name}"


@dataclass(frozen=True)
class ExampleJob:
    """One shard of a generation's example games."""

    sets: tuple[str, ...]
    cards: tuple[tuple[str, str], ...]
    strategies: tuple[str, str]
    model: str  # the model's JSON text ("" when the strategies name none)
    explore: float
    generation: int
    turn_cap: int
    seeds: tuple[int, ...]
    path: str  # the Parquet file the worker writes
    policy: bool = False  # also the policy rows, into policy_path(path)


@dataclass(frozen=True)
class LadderJob:
    """One shard of a ladder: `games` games of a against b from seed `first`, seats swapped."""

    sets: tuple[str, ...]
    cards: tuple[tuple[str, str], ...]
    a: str
    b: str
    model: str
    first: int
    games: int
    turn_cap: int


def example_seeds(master: int, generation: int, first: int, n: int) -> tuple[int, ...]:
    """The seeds of games first..first+n of a generation: from (master seed, generation, game)."""
    return tuple(
        int(s) for s in game_seeds(master, np.full(n, generation, np.int64), np.arange(first, first + n), False)
    )


def ladder_first_seed(master: int) -> int:
    """The first seed of every generation's ladder (the same seeds each generation: paired)."""
    return int(game_seeds(master, np.array([LADDER_MATCHUP], np.int64), np.zeros(1, np.int64), False)[0]) >> 2


@contextlib.contextmanager
def resolved(strategies: tuple[str, ...], model: str) -> Iterator[tuple[str, ...]]:
    """The strategies with the job's model (MODEL_SLOT) as a file: written to a private temporary
    folder (the player loads a path) for as long as the job plays, then removed with it, so no
    worker leaves model files in the temp folder."""
    if not any(MODEL_SLOT in s for s in strategies):
        yield strategies
        return
    with tempfile.TemporaryDirectory(prefix="protolab-model-") as d:
        path = Path(d) / "model.json"
        path.write_text(model)
        yield tuple(s.replace(MODEL_SLOT, str(path)) for s in strategies)


def shard_table(cols: dict[str, np.ndarray], generation: int, extra: dict[str, type]) -> pa.Table:
    """One shard's rows as a table: the keys (generation, seed, turn, player), the `extra` columns in
    their types, then one float32 column per feature, tagged with the features' digest."""
    n = len(cols["seed"])
    arrays = {
        "generation": pa.array(np.full(n, generation, np.int16)),
        "seed": pa.array(np.asarray(cols["seed"], np.uint64)),
        "turn": pa.array(np.asarray(cols["turn"], np.int16)),
        "player": pa.array(np.asarray(cols["player"], np.int8)),
        **{name: pa.array(np.asarray(cols[name], kind)) for name, kind in extra.items()},
    }
    feats = np.asarray(cols["features"], np.float32)
    for i, name in enumerate(FEATURES):
        arrays[feature_column(name)] = pa.array(feats[:, i])
    return pa.table(arrays).replace_schema_metadata({"protolab.feature_digest": FEATURE_DIGEST})


def examples_table(cols: dict[str, np.ndarray], generation: int) -> pa.Table:
    """The examples of one shard: keys, the outcome for the viewing seat, then the features."""
    return shard_table(cols, generation, {"outcome": np.float32})


def policy_table(cols: dict[str, np.ndarray], generation: int) -> pa.Table:
    """The policy rows of one shard: one row per root action of each recorded decision (a decision's
    rows together, decisions in the order played), its visits, share and score (the search's mean result
    after it for the deciding seat), then the feature columns."""
    return shard_table(
        cols, generation, {"action": np.int32, "visits": np.int32, "share": np.float32, "score": np.float32}
    )


def policy_path(path: str | Path) -> Path:
    """Where a shard's policy rows go: gen-N/policy/ beside gen-N/examples/, the shard's file name."""
    p = Path(path)
    return p.parent.parent / POLICY_DIR / p.name


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()


def play_examples(job: ExampleJob) -> dict[str, Any]:
    """Play the shard, write its Parquet file (and its policy rows' file), answer with the receipt
    (file, rows, games, sha256; `policy`: the policy file's name, rows, decisions and sha256)."""
    pool = pool_of(job.sets, job.cards)
    with resolved(job.strategies, job.model) as strategies:
        cols = examples(
            pool,
            np.asarray(job.seeds, np.uint64),
            strategies=strategies,
            explore=job.explore,
            turn_cap=job.turn_cap,
            policy=job.policy,
        )
    data = parquet_bytes(examples_table(cols, job.generation))
    write_atomic(job.path, data)
    receipt = {"file": Path(job.path).name, "rows": len(cols["seed"]), "games": len(job.seeds), "sha256": sha256(data)}
    if job.policy:
        rows = cols["policy"]
        path = policy_path(job.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = parquet_bytes(policy_table(rows, job.generation))
        write_atomic(str(path), data)
        decisions = len(set(zip(rows["seed"].tolist(), rows["turn"].tolist(), strict=True)))
        receipt["policy"] = {
            "file": path.name,
            "rows": len(rows["seed"]),
            "decisions": decisions,
            "sha256": sha256(data),
        }
    return receipt


def play_ladder(job: LadderJob) -> dict[str, Any]:
    pool = pool_of(job.sets, job.cards)
    with resolved((job.a, job.b), job.model) as (a, b):
        return play_pair(pool, a, b, job.games, job.first, job.turn_cap)


def games_of(job: ExampleJob | LadderJob) -> int:
    """The games a job plays (what the progress bar counts)."""
    return len(job.seeds) if isinstance(job, ExampleJob) else job.games
