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
    # the failures themselves first: pytest cuts a long dict short, and a stop that failed must say how
    assert counts["failed"] == 0 and counts["segfaults"] == 0 and counts["swallowed"] == 0, counts["failures"]
    assert counts["stopped_ok"] >= 2, counts  # the signals found the commands running
    assert counts["slowest_stop_s"] <= 5.0, counts


def _sweep():
    """benchmarks/sigint_sweep.py as a module (a script, not a package: loaded by path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sigint_sweep", ROOT / "benchmarks" / "sigint_sweep.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _interrupted(code: str) -> subprocess.CompletedProcess:
    """A Python process that takes a Ctrl-C where `code` raises it, as Python's default handler does."""
    return subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=60)


def test_only_a_signal_before_protolabs_first_line_is_counted_apart():
    """The sweep counts apart a signal that found the interpreter still starting (Python's own
    traceback, through none of protolab's files), never one that found protolab's code running."""
    sweep = _sweep()
    before = _interrupted("import os, signal, time; os.kill(os.getpid(), signal.SIGINT); time.sleep(5)")
    assert before.returncode == -2 and "KeyboardInterrupt" in before.stderr
    assert sweep.before_protolab(before.returncode, before.stderr)
    assert sweep.before_protolab(-2, "")  # ended by SIGINT before Python had its handler
    inside = _interrupted("import protolab; protolab._early_interrupt(2, None)")  # raised in protolab/__init__.py
    assert inside.returncode == -2 and "protolab" in inside.stderr
    assert not sweep.before_protolab(inside.returncode, inside.stderr)
    assert not sweep.before_protolab(130, "protolab: interrupted\n")
    assert not sweep.before_protolab(1, before.stderr)


@pytest.mark.slow
def test_a_short_chaos_run_keeps_every_row(tmp_path):
    result = script(
        "chaos_run.py",
        *("--games", "24000", "--shard-games", "1000", "--strategies", "greedy", "greedy"),
        *("--kill-every", "1", "--kills", "1", "--workers", "2"),
        tmp_path=tmp_path,
    )
    assert result["worker_kills"] == 1 and result["sigint_exit"] == 130, result
    assert 12 <= result["shards_kept_at_sigint"] < result["shards"] == 24 and result["complete"], result
    assert result["rows_equal"], result
