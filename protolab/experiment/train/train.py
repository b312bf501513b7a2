"""`protolab train SPEC`: the training loop (docs/training.md).

Each generation plays its example games on Ray in shards of seeds (every game's seed from the
master seed, the generation and the game, so the data is the same for any number of workers),
writes them as Parquet under `gen-N/examples/`, fits the value network on the newest `window`
generations' examples (protolab/experiment/train/fit.py), saves `gen-N/model.json` and measures it with
the ladder against the spec's opponents (seats swapped, the same seeds every generation). Generation
0's games are played by the expert; later ones by the previous generation's model against itself,
exploring. Everything is recorded in `train.json` as it finishes, so a stopped training resumes
at the first unfinished generation after checking the finished ones' files."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from strategies._features import FEATURE_DIGEST, FEATURES

from analysis.runs.runfolder import RunDirError, file_sha256, load_inputs, save_inputs, write_atomic
from analysis.studies.train.modelcard import model_card
from analysis.studies.train.training import TRAIN_FILE
from protolab.experiment.pools import pool_of
from protolab.experiment.progress import Progress
from protolab.experiment.seeds import mix64
from protolab.experiment.session import versions
from protolab.experiment.spec import SpecError
from protolab.experiment.train.fit import FitResult, fit_mlp, libraries
from protolab.experiment.train.fitpolicy import PolicyRows, decision_starts, fit_policy_mlp
from protolab.experiment.train.trainplay import (
    MODEL_SLOT,
    POLICY_DIR,
    ExampleJob,
    LadderJob,
    example_seeds,
    feature_column,
    games_of,
    ladder_first_seed,
    play_examples,
    play_ladder,
)
from protolab.experiment.train.trainspec import (
    TRAIN_FORMAT,
    TrainSpec,
    expert_problem,
    spec_from_record,
    train_strategies,
)
from protolab.version import protolab_version
from sim.pool import ENGINE_VERSION, Pool
from strategies.declared import MODEL_OUTPUTS
from strategies.errors import StrategyError
from strategies.ladder import pair_row
from strategies.model import Model
from strategies.spec import make_seat

LEARNED = f"learned:model={MODEL_SLOT}"
Say = Callable[[str], None]


class Trainer:
    """One training: its spec, pool, folder, runner (jobs.Local or jobs.OnRay) and record (train.json)."""

    def __init__(self, spec: TrainSpec, folder: Path, runner: Any, say: Say, progress: bool = True):
        self.spec, self.folder, self.runner, self.say, self.show = spec, Path(folder), runner, say, progress
        self.files = tuple((c.path, c.text) for c in spec.cards)
        self.pool: Pool = pool_of(spec.sets, self.files)
        self.console: Any = None

    # -- the record ----------------------------------------------------------------------------

    def fresh_record(self) -> dict[str, Any]:
        s = self.spec
        return {
            "format": TRAIN_FORMAT,
            "kind": "train",
            "name": s.name,
            "model_name": s.model,
            "spec": s.to_dict(),
            "spec_hash": s.hash,
            "pool_hash": self.pool.hash,
            "sets": list(s.sets),
            "feature_digest": FEATURE_DIGEST,
            "features": len(FEATURES),
            "generations": [],
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }

    def save(self, record: dict[str, Any]) -> None:
        write_atomic(self.folder / TRAIN_FILE, json.dumps(record, indent=1).encode())

    # -- one generation ------------------------------------------------------------------------

    def players(self, g: int) -> tuple[tuple[str, str], float]:
        if g == 0:
            return (self.spec.data.expert, self.spec.data.expert), 0.0
        if self.spec.data.improver:  # expert iteration: the search guided by the previous model
            guided = f"{self.spec.data.improver},model={MODEL_SLOT}"
            return (guided, guided), 0.0
        return (LEARNED, LEARNED), self.spec.data.explore

    def example_jobs(self, g: int, model: str) -> list[ExampleJob]:
        d, out = self.spec.data, (self.folder / f"gen-{g}" / "examples").absolute()  # workers start elsewhere
        out.mkdir(parents=True, exist_ok=True)
        strategies, explore = self.players(g)
        return [
            ExampleJob(
                self.spec.sets,
                self.files,
                strategies,
                model,
                explore,
                g,
                self.spec.turn_cap,
                example_seeds(self.spec.seed, g, first, min(d.shard_games, d.games - first)),
                str(out / f"shard-{i:05d}.parquet"),
                d.policy,
            )
            for i, first in enumerate(range(0, d.games, d.shard_games))
        ]

    def progress(self, total: int, what: str) -> Progress | None:
        if not self.show:
            return None
        p = Progress(self.console, total, 0, True)
        if p.bar is not None:
            p.bar.update(p.task, description=what)
        return p

    def run(self, fn: Callable, jobs: list, total: int, what: str) -> list:
        bar = self.progress(total, what)
        try:
            return self.runner.map(fn, jobs, bar, games_of)
        finally:
            if bar is not None:
                bar.close()

    def examples(self, g: int, model: str) -> dict[str, Any]:
        t0 = time.monotonic()
        strategies, explore = self.players(g)
        receipts = self.run(play_examples, self.example_jobs(g, model), self.spec.data.games, "examples")
        policy = [r["policy"] for r in receipts if "policy" in r]
        return {
            "players": [s.replace(MODEL_SLOT, f"gen-{g - 1}/model.json") for s in strategies],
            "explore": explore,
            "games": self.spec.data.games,
            "rows": int(sum(r["rows"] for r in receipts)),
            **(
                {
                    "policy_rows": int(sum(p["rows"] for p in policy)),
                    "policy_decisions": int(sum(p["decisions"] for p in policy)),
                }
                if policy
                else {}
            ),
            "shards": receipts,
            "seconds": round(time.monotonic() - t0, 1),
        }

    def training_rows(self, record: dict[str, Any], g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """(features, outcome, held-out mask, generations used) of the fit of generation g."""
        used = list(range(max(0, g - self.spec.data.window + 1), g + 1))
        cols = [feature_column(f) for f in FEATURES]
        xs, ys, held = [], [], []
        for u in used:
            for shard in record["generations"][u]["examples"]["shards"]:
                t = pq.read_table(
                    self.folder / f"gen-{u}" / "examples" / shard["file"], columns=["seed", "outcome", *cols]
                )
                xs.append(np.column_stack([t.column(c).to_numpy() for c in cols]).astype(np.float32))
                ys.append(t.column("outcome").to_numpy().astype(np.float64))
                held.append(held_out(t.column("seed").to_numpy(), self.spec.fit.validation))
        return np.concatenate(xs), np.concatenate(ys), np.concatenate(held), used

    def policy_rows(self, record: dict[str, Any], used: list[int]) -> PolicyRows:
        """The policy target of the fit: every decision recorded in these generations' policy files."""
        cols = [feature_column(f) for f in FEATURES]
        scored = self.spec.fit.search_value > 0  # the search's values are read only when the fit uses them
        xs, shares, scores, starts, held, n = [], [], [], [], [], 0
        for u in used:
            for shard in record["generations"][u]["examples"]["shards"]:
                t = pq.read_table(
                    self.folder / f"gen-{u}" / POLICY_DIR / shard["policy"]["file"],
                    columns=["seed", "turn", "player", "share", *(["score"] if scored else []), *cols],
                )
                seed = t.column("seed").to_numpy()
                first = decision_starts(seed, t.column("turn").to_numpy(), t.column("player").to_numpy())
                xs.append(np.column_stack([t.column(c).to_numpy() for c in cols]).astype(np.float32))
                shares.append(t.column("share").to_numpy())
                if scored:
                    scores.append(t.column("score").to_numpy())
                starts.append(first + n)
                held.append(held_out(seed[first], self.spec.fit.validation))
                n += len(seed)
        return PolicyRows(
            np.concatenate(xs),
            np.concatenate(shares),
            np.concatenate(starts),
            np.concatenate(held),
            np.concatenate(scores) if scored else None,
        )

    def fit(self, record: dict[str, Any], g: int) -> tuple[FitResult, list[int]]:
        x, y, held, used = self.training_rows(record, g)
        if held.all() or not held.any():
            share = self.spec.fit.validation
            raise SpecError(
                f"{self.spec.source}: key 'train.fit.validation': {share:g} of the games of generations "
                f"{used} hold out {'all' if held.all() else 'none'} of their {len(held):,} examples; "
                "expected more games (train.data.games) or another share, so that both the fit and "
                "its held-out check have games"
            )
        seed = int(mix64(np.array([self.spec.seed ^ (g + 1)], np.uint64))[0]) % 2**32
        if self.spec.data.policy:
            pol = self.policy_rows(record, used)
            return fit_policy_mlp(x, y, held, pol, self.spec.hidden, self.spec.activation, self.spec.fit, seed), used
        return fit_mlp(x, y, held, self.spec.hidden, self.spec.activation, self.spec.fit, seed), used

    def ladder(self, model: str) -> dict[str, Any]:
        t0 = time.monotonic()
        lad, first = self.spec.ladder, ladder_first_seed(self.spec.seed)
        jobs = [
            LadderJob(
                self.spec.sets,
                self.files,
                LEARNED,
                o,
                model,
                first + k // 2,
                min(lad.shard_games, lad.games - k),
                self.spec.turn_cap,
            )
            for o in lad.opponents
            for k in range(0, lad.games, lad.shard_games)
        ]
        results = self.run(play_ladder, jobs, lad.games * len(lad.opponents), "ladder")
        pairs = []
        for o in lad.opponents:
            part = [r for r, j in zip(results, jobs, strict=True) if j.b == o]
            pairs.append(combine(o, part))
        return {"pairs": pairs, "first_seed": first, "seconds": round(time.monotonic() - t0, 1)}

    def generation(self, record: dict[str, Any], g: int) -> dict[str, Any]:
        t0 = time.monotonic()
        previous = self.model_text(record, g - 1) if g else ""
        self.say(
            f"[bold]Generation {g}[/bold]: {self.spec.data.games:,} games by "
            f"{'the expert ' + self.spec.data.expert if g == 0 else 'the model of generation ' + str(g - 1)}"
        )
        entry: dict[str, Any] = {"generation": g, "examples": self.examples(g, previous)}
        record["generations"].append(entry)
        ex = entry["examples"]
        decisions = (
            f" and {ex['policy_decisions']:,} decisions ({ex['policy_rows']:,} policy rows)"
            if "policy_rows" in ex
            else ""
        )
        self.say(f"  {ex['rows']:,} examples{decisions} in {ex['seconds']:.0f} s; fitting")
        result, used = self.fit(record, g)
        model = build_model(result, self.model_meta(record, g, used))
        path = self.folder / f"gen-{g}" / "model.json"
        model.save(str(path))
        entry["fit"] = fit_entry(result, used)
        entry["model"] = {"file": f"gen-{g}/model.json", "hash": model.hash, "sha256": file_sha256(path)}
        self.say(
            f"  model {model.hash}: held-out log loss {result.val_loss:.4f} (constant {result.base_loss:.4f}), "
            f"{result.epochs} epochs in {result.seconds:.0f} s; ladder"
            + (
                f" (held-out policy cross-entropy {result.policy['val_loss']:.4f}, uniform "
                f"{result.policy['uniform_loss']:.4f})"
                if result.policy
                else ""
            )
        )
        entry["ladder"] = self.ladder(path.read_text())
        for p in entry["ladder"]["pairs"]:
            self.say(
                f"  vs {p['b']}: {100 * p['win_rate_a']:.1f}% ({100 * p['ci_low']:.1f}-{100 * p['ci_high']:.1f}) "
                f"of {p['games']:,} games"
            )
        entry["seconds"] = round(time.monotonic() - t0, 1)
        self.save(record)
        return entry

    def model_text(self, record: dict[str, Any], g: int) -> str:
        return (self.folder / record["generations"][g]["model"]["file"]).read_text()

    def model_meta(self, record: dict[str, Any], g: int, used: list[int]) -> dict[str, Any]:
        s = self.spec
        return {
            "name": s.model,
            "trained_by": "protolab train",
            "training": s.name,
            "spec_hash": s.hash,
            "seed": s.seed,
            "generation": g,
            "data_generations": used,
            "pool_hash": self.pool.hash,
            "sets": list(s.sets),
            "card_files": [{"path": c.path, "sha256": c.sha256} for c in s.cards],
            "feature_digest": FEATURE_DIGEST,
            "libraries": record.get("libraries", {}),
            "protolab_version": protolab_version(),
        }


# -- helpers --------------------------------------------------------------------------------------


def held_out(seeds: np.ndarray, share: float) -> np.ndarray:
    """The held-out games: chosen by their seed, so the same games whatever the shards."""
    return (np.asarray(seeds, np.uint64) % np.uint64(1_000_003)) < np.uint64(int(share * 1_000_003))


def combine(opponent: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The shards of one ladder pair as one pair (strategies.ladder.play_pair's shape)."""
    total = {k: sum(p[k] for p in parts) for k in ("wins_a", "wins_b", "games")}
    return pair_row("learned", opponent, total["wins_a"], total["wins_b"], total["games"])


def fit_entry(r: FitResult, used: list[int]) -> dict[str, Any]:
    return {
        "data_generations": used,
        "rows": r.rows,
        "epochs": r.epochs,
        "best_epoch": r.best_epoch,
        "train_loss": r.train_loss,
        "val_loss": r.val_loss,
        "val_accuracy": r.val_accuracy,
        "constant_loss": r.base_loss,
        "seconds": r.seconds,
        "curve": r.curve,
        **({"policy": r.policy} if r.policy else {}),
    }


def build_model(r: FitResult, meta: dict[str, Any]) -> Model:
    """The fitted layers as the player's model (strategies/model.py); two outputs with the policy's."""
    outputs = MODEL_OUTPUTS[: len(r.layers[-1].bias)]
    return Model.from_arrays([(layer.weights, layer.bias, layer.activation) for layer in r.layers], meta, outputs)


# -- the folder, resuming, the output -------------------------------------------------------------


def train_folder(spec: TrainSpec, out: str | None) -> Path:
    if out is not None:
        return Path(out)
    return Path(spec.output) / f"{spec.name}-train-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def read_record(folder: Path) -> dict[str, Any] | None:
    path = folder / TRAIN_FILE
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
        if not isinstance(record.get("generations"), list) or "spec_hash" not in record:
            raise ValueError("no generations or spec_hash")
    except (OSError, ValueError, AttributeError) as e:
        raise RunDirError(f"{path}: not a training record protolab wrote ({e}); give a new --out") from None
    return record


def resumed_spec(folder: Path) -> TrainSpec:
    """The spec a training folder recorded (`--resume DIR` without SPEC)."""
    record = read_record(folder)
    if record is None:
        raise RunDirError(f"{folder}: no {TRAIN_FILE}; expected a training folder protolab train wrote")
    try:
        return spec_from_record(record["spec"], load_inputs(folder), str(folder / TRAIN_FILE))
    except (KeyError, TypeError) as e:
        raise RunDirError(f"{folder / TRAIN_FILE}: key 'spec': cannot be read back ({e}); was it edited?") from None


def check_generation(folder: Path, entry: dict[str, Any]) -> str | None:
    """Why a recorded generation's files cannot be trusted (None: every file is there and unchanged)."""
    if not all(k in entry for k in ("examples", "fit", "model", "ladder")):
        return "not finished"
    g = entry["generation"]
    files = [(f"gen-{g}/examples/{s['file']}", s["sha256"]) for s in entry["examples"]["shards"]]
    files += [
        (f"gen-{g}/{POLICY_DIR}/{s['policy']['file']}", s["policy"]["sha256"])
        for s in entry["examples"]["shards"]
        if "policy" in s
    ]
    for rel, digest in [*files, (entry["model"]["file"], entry["model"]["sha256"])]:
        path = folder / rel
        if not path.is_file():
            return f"{rel} is missing"
        if file_sha256(path) != digest:
            return f"{rel} has changed since it was written"
    return None


def kept_generations(trainer: Trainer, record: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded generations a resumed training keeps: the leading ones whose files check out."""
    if record["spec_hash"] != trainer.spec.hash:
        raise SpecError(
            f"{trainer.folder / TRAIN_FILE}: key 'spec_hash': this folder holds the training of another "
            f"spec ({record['spec_hash']}, this spec is {trainer.spec.hash}); give a new --out"
        )
    if record.get("feature_digest") != FEATURE_DIGEST:
        raise SpecError(
            f"{trainer.folder / TRAIN_FILE}: key 'feature_digest': its examples were made with other "
            f"features ({record.get('feature_digest')}, the player's are {FEATURE_DIGEST}); "
            "give a new --out"
        )
    kept = []
    for entry in record["generations"]:
        why = check_generation(trainer.folder, entry)
        if why is not None:
            trainer.say(f"  generation {entry.get('generation')}: {why}; playing it again")
            break
        kept.append(entry)
    return kept


def chosen(spec: TrainSpec, record: dict[str, Any]) -> dict[str, Any]:
    """The generation whose model is written: the last, or the best mean ladder win rate (ties: later)."""
    gens = record["generations"]
    if spec.ladder.choose == "last":
        return gens[-1]
    return max(reversed(gens), key=lambda e: np.mean([p["win_rate_a"] for p in e["ladder"]["pairs"]]))


def publish(trainer: Trainer, record: dict[str, Any], models: Path) -> dict[str, Any]:
    """Write the chosen model as MODELS/NAME.json (Model.save) and its model card MODELS/NAME.md."""
    entry = chosen(trainer.spec, record)
    model = Model.load(str(trainer.folder / entry["model"]["file"]))
    model.meta.update(
        {
            "chosen": trainer.spec.ladder.choose,
            "ladder": entry["ladder"]["pairs"],
            "training_seconds": record["seconds"],
        }
    )
    name = trainer.spec.model
    models.mkdir(parents=True, exist_ok=True)
    model.save(str(models / f"{name}.json"))
    record["output"] = {
        "name": name,
        "generation": entry["generation"],
        "choose": trainer.spec.ladder.choose,
        "hash": model.hash,
        "file": str(models / f"{name}.json"),
        "card": str(models / f"{name}.md"),
    }
    write_atomic(models / f"{name}.md", model_card(record).encode())
    return record["output"]


def provenance(trainer: Trainer, record: dict[str, Any]) -> dict[str, Any]:
    """The training's block in the shape of a run's (analysis/runs/provenance.py)."""
    s = trainer.spec
    later = f"{s.data.improver},model=(previous generation)" if s.data.improver else "learned"
    games = sum(e["examples"]["games"] + sum(p["games"] for p in e["ladder"]["pairs"]) for e in record["generations"])
    return {
        "run_id": trainer.folder.name,
        "path": str(trainer.folder),
        "arm": None,
        "design": "train",
        "tiers": None,
        "strategies": {
            "generation 0": [s.data.expert, s.data.expert],
            **({"later generations": [later, later]} if s.generations > 1 else {}),
        },
        "sets": list(s.sets),
        "card_files": [{"path": c.path, "sha256": c.sha256} for c in s.cards],
        "pool_hash": trainer.pool.hash,
        "seed": s.seed,
        "games": int(games),
        "draft": "random",
        "spec_hash": s.hash,
        "protolab_version": protolab_version(),
        "engine_version": ENGINE_VERSION,
        "models": [
            {
                "model": record["output"]["name"],
                "file": record["output"]["file"],
                "hash": record["output"]["hash"],
                "trained_pool_hash": trainer.pool.hash,
                "same_pool": True,
            }
        ],
    }


def start(trainer: Trainer) -> dict[str, Any]:
    """The record to go on from: a new one, or the folder's with its trustworthy generations."""
    trainer.folder.mkdir(parents=True, exist_ok=True)
    record = read_record(trainer.folder)
    if record is None:
        record = trainer.fresh_record()
        save_inputs(trainer.folder, {c.path: c.text for c in trainer.spec.cards})
    else:
        record["generations"] = kept_generations(trainer, record)
        record["spec"] = trainer.spec.to_dict()
    record["libraries"] = {**libraries(), **versions(), "protolab": protolab_version(), "engine": ENGINE_VERSION}
    return record


def check_players(spec: TrainSpec, pool: Pool) -> None:
    """Build the expert and each ladder opponent against the pool, before any folder is made or game
    played: a missing model file or an unknown card in a restriction is one line naming the key."""
    why = expert_problem(spec.data.expert)  # a recorded spec (--resume) was not checked as a file is
    if why is not None:
        raise SpecError(f"{spec.source}: key 'train.data.expert': {why}")
    for key, text in train_strategies(spec):
        try:
            make_seat(text, pool)
        except StrategyError as e:
            raise SpecError(f"{spec.source}: key '{key}': {e}") from None


def recorded_models(folder: Path) -> Path | None:
    """The models folder the training in `folder` was given (train.json `models`), None for a new
    folder or one recorded before it was kept: where a resumed training writes its model."""
    record = read_record(folder) if folder.is_dir() else None
    models = record.get("models") if record else None
    return Path(models) if isinstance(models, str) and models else None


def main_train(trainer: Trainer, models: Path) -> dict[str, Any]:
    """Train every generation not yet recorded, then write the chosen model and its card into
    `models`, recorded first (absolute) so that a resumed training writes it there too. A new
    training folder that fails before its first generation is recorded is removed again (nothing in
    it to resume from); an existing one is left as it was."""
    t0 = time.monotonic()
    check_players(trainer.spec, trainer.pool)
    fresh = not trainer.folder.exists()
    try:
        record = start(trainer)
        record["models"] = str(models.resolve())
        trainer.save(record)
        return _train(trainer, record, models, t0)
    except Exception:
        kept = read_record(trainer.folder) if (trainer.folder / TRAIN_FILE).exists() else None
        if fresh and not (kept and kept["generations"]):
            shutil.rmtree(trainer.folder, ignore_errors=True)
        raise


def _train(trainer: Trainer, record: dict[str, Any], models: Path, t0: float) -> dict[str, Any]:
    done = len(record["generations"])
    s = trainer.spec
    trainer.say(
        f"[bold]Training[/bold] {s.name}: {s.generations} generations of {s.data.games:,} games, "
        f"net {list(s.hidden)} {s.activation}, {len(FEATURES)} features, pool {trainer.pool.hash}; "
        f"{trainer.runner.where}" + (f" ({done} generations recorded)" if done else "")
    )
    for g in range(done, s.generations):
        trainer.generation(record, g)
    del record["generations"][s.generations :]
    record["seconds"] = round(sum(e["seconds"] for e in record["generations"]), 1)
    record["this_session_seconds"] = round(time.monotonic() - t0, 1)
    out = publish(trainer, record, models)
    record["provenance"] = provenance(trainer, record)
    trainer.save(record)
    trainer.say(
        f"Model {out['name']} (generation {out['generation']}, {out['choose']}): {out['hash']} -> "
        f"{out['file']}, card {out['card']}"
    )
    return record
