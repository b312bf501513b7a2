"""How long the `protolab` command takes to answer before it does any work.

    python benchmarks/cli_startup.py [--repeats 10]

Runs `protolab --version`, `protolab --help` and `protolab simulate --help` in fresh processes
and prints the best and median wall time of each (a quiet machine's figure is the best)."""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

CASES = (["--version"], ["--help"], ["simulate", "--help"])


def wall_times(argv: list[str], repeats: int) -> list[float]:
    """Seconds of each of `repeats` runs of protolab ARGV."""
    exe = shutil.which("protolab")
    cmd = [exe, *argv] if exe else [sys.executable, "-m", "protolab", *argv]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    for argv in CASES:
        t = wall_times(argv, args.repeats)
        print(f"protolab {' '.join(argv):18s} best {min(t):.3f} s   median {statistics.median(t):.3f} s")


if __name__ == "__main__":
    main()
