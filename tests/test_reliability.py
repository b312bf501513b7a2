"""Faults from the reliability audit (issue 27): a good run exits 0, deep nesting and full disks
are one line, and the smaller cases each end in their fix or one readable error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

EXIT_RACE = """
import sys, time
import duckdb, pandas, pyarrow  # a finalization that takes a while, like protolab's
from strategies.user import _time_limit
t0 = time.monotonic()
with _time_limit(10):             # the decision clock ticks every second from here
    pass
time.sleep(max(0.0, 0.95 - (time.monotonic() - t0) + float(sys.argv[1])))
"""


def test_decision_clock_does_not_kill_a_finished_process(tmp_path):
    # Exit just before the clock's next tick: the tick lands while the interpreter shuts down, after it
    # put back the default SIGALRM action; the process must still exit 0 (not 142, "Alarm clock").
    script = tmp_path / "exit_race.py"
    script.write_text(EXIT_RACE)
    for delay in ("-0.02", "0", "0.03"):
        done = subprocess.run([sys.executable, str(script), delay], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, (delay, done.returncode, done.stderr[-500:])
