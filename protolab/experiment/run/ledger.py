"""The run's ledger in its folder: run.json (the manifest), the journal of shards recorded since
run.json was last written, and the receipts the workers send for their shards.

Every batch of shards that finish together is journalled in one write (one append and flush, or
one object on a store), so the driver's cost per shard stays far below a worker's: see
benchmarks/driver.py and docs/cluster.md. run.json is rewritten now and then, never more than a
tenth of the time (its size grows with the shards), and at the end; `--resume` reads both."""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from rich.markup import escape

from analysis.runs import runfolder
from analysis.runs.manifest import Manifest, RunSpec
from analysis.runs.models import models_used
from analysis.runs.storage import Location
from protolab.experiment.run.memory import MemoryLedger, own_peak_rss_mb
from protolab.experiment.run.nodes import Loss, logs_dir
from protolab.experiment.run.plan import Plan, ShardPlan, card_files
from protolab.experiment.seeds import SEED_SCHEME
from protolab.experiment.session import versions
from protolab.version import protolab_version
from sim.pool import ENGINE_VERSION

MANIFEST_EVERY = 5.0  # seconds at least between run.json rewrites (the journal covers the gap)
MANIFEST_SHARE = 0.1  # at most this share of the driver's time goes to rewriting run.json


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_manifest(plan: Plan, run_id: str) -> Manifest:
    """The run.json of a new run: what it plays, with what, and no shard yet."""
    spec = plan.spec
    return Manifest(
        run_id=run_id,
        format=runfolder.FORMAT,
        complete=False,
        spec=RunSpec.of(spec.to_dict(), spec.source),
        spec_hash=spec.hash,
        games=plan.total_games,
        shards=[],
        pool_hash=plan.pools[0].hash,
        pool_hashes={a.name: p.hash for a, p in zip(spec.arms, plan.pools, strict=True)},
        engine_version=ENGINE_VERSION,
        protolab_version=protolab_version(),
        versions=versions(),
        seed_scheme=SEED_SCHEME,
        arms=len(spec.arms),
        matchups=plan.n_matchups,
        games_per_matchup=spec.games,
        shard_count=len(plan.shards),
        shard_games=plan.shard_games,
        inputs={cf.path: cf.sha256 for cf in card_files(spec)},
        created=now(),
        finished=None,
        sessions=[],
        models=_models(plan) or None,
    )


def _models(plan: Plan) -> list[dict[str, Any]]:
    """The learned models each arm plays, with whether the arm's pool is the one each was trained on."""
    out = []
    for arm, pool in zip(plan.spec.arms, plan.pools, strict=True):
        out += [{"arm": arm.name, **m} for m in models_used(arm.strategies, pool.hash)]
    return out


def verify_recorded(run_dir: Location, shards: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The recorded shards whose files are whole (checksums), and why each other one is played again."""
    kept, recomputed = [], []
    for entry in shards:
        why = runfolder.verify_shard(run_dir, entry)
        if why is None:
            kept.append(entry)
        else:
            recomputed.append(f"shard {entry['index']}: {why}")
    return kept, recomputed


def record_verified(run_dir: Location, manifest: Manifest, kept: list[dict[str, Any]], shard_count: int) -> None:
    """run.json with the verified shards only, the journal folded into it and cleared."""
    manifest.shards = kept
    runfolder.remove_temp_files(run_dir)
    manifest.complete = len(kept) == shard_count
    if manifest.complete:
        manifest.finished = manifest.finished or now()
    runfolder.write_manifest(run_dir, manifest)
    runfolder.clear_journal(run_dir)


def received_bytes(result: dict) -> int:
    """The size of what a shard task sent the driver, serialised: a receipt (a few hundred bytes)
    when the worker wrote its files, the files themselves in the fallback."""
    return len(pickle.dumps(result, protocol=5))


class Ledger:
    """One session's record of a run: the shards recorded so far and this session's entry in run.json."""

    def __init__(self, run_dir: Location, manifest: Manifest, plan: Plan, session: dict[str, Any]):
        self.run_dir, self.manifest, self.plan = run_dir, manifest, plan
        self.done: dict[int, dict[str, Any]] = {e["index"]: e for e in manifest.shards}
        self.games_done = sum(e["games"] for e in self.done.values())
        self.planned = len(plan.shards)  # fewer when the run stopped once settled (stopping.py)
        self.session = {
            "started": now(),
            **session,
            "shards_computed": 0,
            "games_computed": 0,
            "driver_received_bytes": 0,
            "shards_via_driver": 0,
        }
        manifest.sessions.append(self.session)
        self.memory = MemoryLedger()
        self.t0 = self.last_write = time.perf_counter()
        self.write_seconds = 0.0

    def kept_message(self) -> str:
        return f"{len(self.done)} finished shards are kept in {self.run_dir}/ (protolab run --resume {self.run_dir})"

    def commit(self, finished: list[tuple[ShardPlan, dict]], say: Callable[..., Any]) -> None:
        """Record shards that finished together: fallback files written, then one journal write."""
        if not finished:
            return
        entries = []
        for shard, res in finished:
            entry = res["entry"]
            self.session["driver_received_bytes"] += received_bytes(res)
            if res["data"] is not None:  # the fallback: the worker could not reach the run
                say(
                    f"[yellow]shard {shard.index}: the worker on {res['worker'].get('node')} cannot reach "
                    f"{self.run_dir}; its files came back through the driver (fallback)[/yellow]"
                )
                self.session["shards_via_driver"] += 1
                paths = runfolder.shard_paths(self.run_dir, shard.name)
                for kind, blob in res["data"].items():
                    runfolder.write_atomic(paths[kind], blob)
            entry["worker"] = res["worker"]
            entry["written_by"] = "driver" if res["data"] is not None else "worker"
            self.memory.worker_reported(res["worker"])
            entries.append(entry)
        # Held before journalled: a Ctrl-C between the two still finds these shards in the run.json that
        # close() writes, where the other order let the journal hold shards that run.json lacked.
        for (shard, _), entry in zip(finished, entries, strict=True):
            self.done[shard.index] = entry
            self.games_done += shard.games
            self.session["shards_computed"] += 1
            self.session["games_computed"] += shard.games
        runfolder.append_journal(self.run_dir, entries)

    def node_of(self, shard: int) -> str | None:
        """The Ray node id a recorded shard ran on; None while it is not recorded."""
        entry = self.done.get(shard)
        return entry["worker"].get("node_id") if entry is not None and "worker" in entry else None

    def nodes_lost(self, losses: list[Loss], say: Callable[..., Any]) -> None:
        """Nodes that left mid-run (or worker processes that died): one line each, and this
        session's record of them in run.json (`nodes_lost`, `workers_lost`)."""
        for loss in losses:
            self.session.setdefault("nodes_lost" if loss.left else "workers_lost", []).append(loss.record())
            say(f"[yellow]{escape(loss.line(logs_dir()))}[/yellow]")

    def checkpoint(self) -> None:
        """Rewrite run.json when due: MANIFEST_EVERY seconds after the last rewrite, and never more
        than MANIFEST_SHARE of the time (a run of many shards has a large run.json)."""
        since = time.perf_counter() - self.last_write
        if since > max(MANIFEST_EVERY, self.write_seconds / MANIFEST_SHARE):
            self.memory.sample_local()
            self._write()

    def _write(self) -> None:
        t = time.perf_counter()
        self.manifest.shards = list(self.done.values())
        runfolder.write_manifest(self.run_dir, self.manifest)
        self.last_write = time.perf_counter()
        self.write_seconds = self.last_write - t

    def close(self, status: str) -> None:
        """The session's last run.json: its outcome and memory, every recorded shard; a complete
        run's journal (folded into run.json) is removed. The temporary files of shards still being
        written are left to the runner, which removes them once the session's Ray has ended: here a
        stopped session's workers may still be writing them."""
        self.memory.sample_local()
        self.session["ended"] = now()
        self.session["seconds"] = round(time.perf_counter() - self.t0, 3)
        self.session["outcome"] = status
        self.session.update(self.memory.fields(own_peak_rss_mb()))
        complete = status == "complete" and len(self.done) >= self.planned
        self.manifest.complete = complete
        if complete:
            self.manifest.finished = now()
        self._write()
        if complete:
            runfolder.clear_journal(self.run_dir)
        if status == "complete":  # the play returned: nothing of it is in flight
            runfolder.remove_temp_files(self.run_dir)
