"""Peak memory of every process of one session: the driver, the workers (their own reports, from
any node) and, for a local Ray, Ray's own processes (sampled from /proc). See docs/data.md, `sessions`."""

from __future__ import annotations

import resource
from pathlib import Path
from typing import Any

from protolab.experiment import reaper
from protolab.experiment.session import local_ray


def own_peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident memory so far (VmHWM), None if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        return None
    return None


class MemoryLedger:
    """Peak memory of every process of one session: the workers (their own reports, from any node)
    and, for a local Ray, Ray's own processes (sampled from /proc). See docs/data.md, `sessions`."""

    def __init__(self) -> None:
        self.workers: dict[tuple[str, int], float] = {}
        self.ray: dict[int, float] = {}

    def worker_reported(self, facts: dict[str, Any]) -> None:
        key = (str(facts.get("node")), int(facts.get("pid", 0)))
        self.workers[key] = max(self.workers.get(key, 0.0), float(facts.get("peak_rss_mb", 0.0)))

    def sample_local(self) -> None:
        """Read the peak of every process of the local Ray (a peak only grows: sampling now and at
        the end misses only processes that came and went in between, which are Ray's retries)."""
        local = local_ray()
        if local is None:
            return
        for pid in [*reaper.session_pids(local.root), local.watcher.proc.pid]:
            mb = peak_rss_mb(pid)
            if mb is not None:
                self.ray[pid] = max(self.ray.get(pid, 0.0), mb)

    def fields(self, driver_mb: float) -> dict[str, Any]:
        """The session's memory keys, in MB (docs/data.md)."""
        local = local_ray() is not None
        if local:  # every worker is on this machine: sampled ones too
            for key in self.workers:
                if key[1] in self.ray:
                    self.workers[key] = max(self.workers[key], self.ray.pop(key[1]))
        workers = list(self.workers.values())
        ray_total = round(sum(self.ray.values()), 1) if local else None
        workers_total = round(sum(workers), 1)
        return {
            "driver_peak_rss_mb": driver_mb,
            "driver_play_peak_rss_mb": driver_mb,
            "worker_peak_rss_mb": max(workers, default=0.0),
            "workers_total_peak_rss_mb": workers_total,
            "worker_processes": len(workers),
            "ray_total_peak_rss_mb": ray_total,
            "total_peak_rss_mb": round(driver_mb + workers_total + (ray_total or 0.0), 1),
        }


def record_driver_peak(session: dict[str, Any]) -> None:
    """Raise the session's driver and total figures to the driver's peak now (after the report and
    dashboard, which run in the driver once the games are played)."""
    now = own_peak_rss_mb()
    before = session.get("driver_peak_rss_mb", now)
    session["driver_peak_rss_mb"] = now
    if session.get("total_peak_rss_mb") is not None:
        session["total_peak_rss_mb"] = round(session["total_peak_rss_mb"] - before + now, 1)
