"""Faults at any moment, small: the suite's versions of the two fault benchmarks (issue 38).

- Ctrl-C at seeded random moments through start-up and play (benchmarks/sigint_sweep.py, which
  sends 100 across every command): each stop ends within 5 s, exit 130, one line, no crash, no
  swallowed stop, nothing of its Ray left.
- A chaos run (benchmarks/chaos_run.py, 2 million games on the two-node cluster): a worker killed
  mid-run, one SIGINT to the driver and a `--resume`, and the rows equal an undisturbed run's.

Real processes and a real local Ray; the scripts are run as a user runs them."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import sim

ROOT = Path(sim.__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    "RAY_USAGE_STATS_ENABLED": "0",
}


def script(name: str, *args: str, tmp_path: Path) -> dict:
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / name), *args, "--json"],
        cwd=tmp_path,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.stdout.strip(), r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_ctrl_c_at_seeded_random_moments_stops_every_time_in_one_line(tmp_path):
    counts = script(
        "sigint_sweep.py",
        *("--signals", "3", "--commands", "run,power,run", "--seed", "4", "--window", "9", "--no-resume"),
        tmp_path=tmp_path,
    )
    assert counts["failed"] == 0 and counts["segfaults"] == 0 and counts["swallowed"] == 0, counts
    assert counts["stopped_ok"] >= 2, counts  # the signals found the commands running
    assert counts["slowest_stop_s"] <= 5.0, counts


@pytest.mark.slow
def test_a_short_chaos_run_keeps_every_row(tmp_path):
    result = script(
        "chaos_run.py",
        *("--games", "48000", "--shard-games", "2000", "--strategies", "greedy", "greedy"),
        *("--kill-every", "1", "--kills", "1", "--workers", "2"),
        tmp_path=tmp_path,
    )
    assert result["worker_kills"] == 1 and result["sigint_exit"] == 130, result
    assert 12 <= result["shards_kept_at_sigint"] < result["shards"] == 24 and result["complete"], result
    assert result["rows_equal"], result
