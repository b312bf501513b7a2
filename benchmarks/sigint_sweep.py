"""Ctrl-C at any moment: SIGINT sent at seeded random moments to `protolab` commands, through
start-up, play and the report, and what each stop looked like.

    python benchmarks/sigint_sweep.py --signals 100 --seed 1
    python benchmarks/sigint_sweep.py --tested 100 --seed 7   # until 100 found a command running

Each signal starts one command in its own process group (as a shell does), waits a random time
(seeded; up to the command's --window seconds) and sends SIGINT to the group, as a terminal's
Ctrl-C does, or, every other time at random, to the driver alone. A stop passes when the process
ends within --grace seconds of the signal with exit status 130, its stderr has at most one line
besides the command's own warnings and none of: a traceback, "Exception ignored" (a stop
swallowed), "Fatal Python error" or a segmentation fault (exit 139 or -11), and no process of its
group is left after it. A command that finished before the signal is counted apart (nothing was
tested), and so is one the signal found still in the interpreter's own start, before any line of
protolab ran (the first ~20 ms: Python's site set-up and the import system; docs/testing.md): it
ended by SIGINT (status -2, 130 in a shell) with nothing said or with Python's KeyboardInterrupt
traceback through none of protolab's files, which is what Python does for every program then. A
traceback through a file of protolab's is a failure. A `run` stopped after its folder was made is
resumed (`protolab run --resume`), and its rows must equal those of an undisturbed run of the same
spec (benchmarks/runrows.py).

Prints one line per signal, then the counts; `--json` prints the counts as JSON; exit status 1
when any stop failed. PYTHONFAULTHANDLER is set, so a crash leaves its stack in the line."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from runrows import rows_hash  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RUN_SPEC = """name = "sweep"
seed = 3
games = 6000
shard_games = 500
events = false
[seats]
strategies = ["random", "random"]
"""
BAD = ("Traceback", "Exception ignored", "Fatal Python error", "Segmentation fault")
LAYERS = ("protolab", "sim", "strategies", "analysis")  # protolab's own packages
BEFORE = "before protolab"  # the status of a signal that came before protolab's first line


def before_protolab(returncode: int | None, err: str) -> bool:
    """The signal found the interpreter still starting, before any line of protolab ran: ended by
    SIGINT with nothing said (before Python had a handler) or with Python's KeyboardInterrupt
    traceback through no file of protolab's (site, runpy, the import system)."""
    if returncode != -signal.SIGINT:
        return False
    lines = [line for line in err.splitlines() if line.strip()]
    if not lines:
        return True
    if lines[0] != "Traceback (most recent call last):" or lines[-1] != "KeyboardInterrupt":
        return False
    files = [line.strip().split('"')[1] for line in lines if line.strip().startswith('File "')]
    paths = [str(Path(f).resolve()) for f in files if not f.startswith("<")]  # "<frozen site>": Python's
    homes = own_folders()
    return not any(f.startswith(home) for f in paths for home in homes)


def own_folders() -> list[str]:
    """The folders of protolab's packages as the command's interpreter finds them (found, not
    imported: nothing of protolab runs here)."""
    found = []
    for name in LAYERS:
        spec = importlib.util.find_spec(name)
        found += [str(Path(p).resolve()) + os.sep for p in (spec.submodule_search_locations or [])] if spec else []
    return found


@dataclass
class Case:
    """One command of the sweep: its argv after `protolab` (with {dir}, {run}, {spec} filled in) and
    the window of seconds its signal falls in."""

    name: str
    argv: list[str]
    window: float


CASES = {
    "run": Case("run", ["run", "{spec}", "--workers", "1", "--out", "{dir}/out", "--no-progress"], 25.0),
    "cardvalue": Case(
        "cardvalue", ["cardvalue", "Fire 1", "--games", "200", "--workers", "1", "--out", "{dir}/out"], 25.0
    ),
    "tune": Case("tune", ["tune", "tune_fire", "--trials", "2", "--workers", "2", "--out", "{dir}/tune"], 25.0),
    "train": Case("train", ["train", "train_learned", "--workers", "2", "--out", "{dir}/t", "--models", "{dir}"], 25.0),
    "power": Case("power", ["power", "fire1_ab", "--pilot", "400", "--workers", "1"], 20.0),
    "report": Case("report", ["report", "{run}"], 8.0),
    "dashboard": Case("dashboard", ["dashboard", "{run}", "--out", "{dir}/d.html", "--examples", "1"], 10.0),
    "simulate": Case("simulate", ["simulate", "--games", "20000", "--strategies", "random", "random"], 8.0),
    "ladder": Case("ladder", ["ladder", "greedy", "random", "--games", "400"], 8.0),
}


@dataclass
class Outcome:
    case: str
    delay: float
    group: bool
    status: str  # "ok", "finished first", BEFORE, or what failed
    exit: int | None = None
    seconds: float = 0.0  # from the signal to the end
    resumed: str = ""  # for a stopped run: "equal", "no folder", or what differed
    lines: list[str] = field(default_factory=list)


def protolab(argv: list[str], cwd: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONFAULTHANDLER": "1", "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("COLUMNS", None)
    return subprocess.Popen(
        [sys.executable, "-m", "protolab", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,
    )


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_once(case: Case, delay: float, group: bool, work: Path, run: Path, spec: Path, grace: float) -> Outcome:
    """Start `case`, SIGINT it after `delay` s; judge the stop (see the module docstring)."""
    argv = [a.format(dir=work, run=run, spec=spec) for a in case.argv]
    p = protolab(argv, cwd=work)
    time.sleep(delay)
    if p.poll() is not None:
        p.communicate()
        return Outcome(case.name, delay, group, "finished first", p.returncode)
    (os.killpg if group else os.kill)(p.pid, signal.SIGINT)
    t0 = time.monotonic()
    try:
        out, err = p.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        late = f"still running {grace:g} s after the signal"
        return Outcome(case.name, delay, group, late, None, grace, "", tail(err))
    took = time.monotonic() - t0
    t1 = time.monotonic()
    while group_alive(p.pid) and time.monotonic() - t1 < 10:
        time.sleep(0.1)
    left = group_alive(p.pid)
    if left:
        os.killpg(p.pid, signal.SIGKILL)
    # the command's own warnings, printed before the signal, are not the stop's
    errs = [line for line in err.splitlines() if line.strip() and not line.startswith("protolab: warning:")]
    if before_protolab(p.returncode, err) and not left:
        return Outcome(case.name, delay, group, BEFORE, p.returncode, took, "", tail(err))
    why = []
    if p.returncode in (139, -signal.SIGSEGV):
        why.append("segmentation fault")
    elif p.returncode != 130:
        why.append(f"exit {p.returncode}")
    why += [f"{b!r} on stderr" for b in BAD if b in err]
    if len(errs) > 1:
        why.append(f"{len(errs)} lines on stderr")
    if left:
        why.append("processes of its group left")
    return Outcome(case.name, delay, group, "; ".join(why) or "ok", p.returncode, took, "", tail(err) if why else [])


def tail(text: str, n: int = 12) -> list[str]:
    return text.splitlines()[-n:]


def resume_equal(work: Path, reference: str) -> str:
    """Resume the stopped run under `work/out` and compare its rows with the reference's."""
    runs = [d for d in (work / "out").iterdir() if (d / "run.json").exists()] if (work / "out").exists() else []
    if not runs:
        return "no folder"
    p = protolab(["run", "--resume", str(runs[0]), "--workers", "1", "--no-progress"], cwd=work)
    out, err = p.communicate(timeout=600)
    if p.returncode != 0:
        return f"resume exit {p.returncode}: {tail(err, 3)}"
    got = rows_hash(runs[0])
    return "equal" if got == reference else f"rows differ ({got[:12]} != {reference[:12]})"


def reference_run(base: Path, spec: Path) -> tuple[Path, str]:
    """An undisturbed run of the sweep's spec: its folder (read by report and dashboard) and rows hash."""
    p = protolab(["run", str(spec), "--workers", "1", "--out", str(base / "ref"), "--no-progress"], cwd=base)
    out, err = p.communicate(timeout=900)
    if p.returncode != 0:
        sys.exit(f"the reference run failed (exit {p.returncode}): {err[-2000:]}")
    (run,) = [d for d in (base / "ref").iterdir() if d.is_dir()]
    return run, rows_hash(run)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 2)[2])
    ap.add_argument("--signals", type=int, default=100, help="signals to send in all (default 100)")
    ap.add_argument(
        "--tested",
        type=int,
        help="instead: send signals until this many found protolab running (at most 3 times as many)",
    )
    ap.add_argument("--seed", type=int, default=1, help="seed of the moments, commands and targets (default 1)")
    ap.add_argument(
        "--commands",
        default=",".join(CASES),
        help=f"comma-separated, taken in turn (default all: {','.join(CASES)})",
    )
    ap.add_argument("--grace", type=float, default=5.0, help="seconds a stop may take (default 5)")
    ap.add_argument("--window", type=float, help="the latest moment of a signal, every command (default: each its own)")
    ap.add_argument("--no-resume", action="store_true", help="do not resume stopped runs")
    ap.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    args = ap.parse_args()
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # started in the background (`&`, nohup): children would inherit SIGINT ignored; with a
        # handler here they get the default, as from a terminal (docs/testing.md)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    names = args.commands.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"--commands: unknown {unknown}; known: {','.join(CASES)}")
    rng = random.Random(args.seed)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="sigint-sweep-") as tmp:
        base = Path(tmp)
        spec = base / "sweep.toml"
        spec.write_text(RUN_SPEC)
        needs_run = not args.no_resume or any("{run}" in a for n in names for a in CASES[n].argv)
        run, reference = reference_run(base, spec) if needs_run else (base, "")
        t_start = time.monotonic()
        limit = 3 * args.tested if args.tested else args.signals
        for i in range(limit):
            if args.tested and sum(o.status not in ("finished first", BEFORE) for o in outcomes) >= args.tested:
                break
            case = CASES[names[i % len(names)]]
            delay = round(rng.uniform(0.0, args.window or case.window), 2)
            group = rng.random() < 0.5
            work = base / f"s{i}"
            work.mkdir()
            o = stop_once(case, delay, group, work, run, spec, args.grace)
            if case.name == "run" and o.status == "ok" and not args.no_resume:
                o.resumed = resume_equal(work, reference)
                if o.resumed not in ("equal", "no folder"):
                    o.status = f"resumed: {o.resumed}"
            outcomes.append(o)
            if not args.json:
                extra = f" resume: {o.resumed}" if o.resumed else ""
                target = "group" if group else "driver"
                print(
                    f"{i:3d} {case.name:9s} +{delay:5.2f}s to {target:6s} exit {o.exit!s:4s} "
                    f"in {o.seconds:4.2f}s  {o.status}{extra}",
                    flush=True,
                )
                for line in o.lines:
                    print(f"      | {line}", flush=True)
        elapsed = time.monotonic() - t_start
    tested = [o for o in outcomes if o.status not in ("finished first", BEFORE)]
    failed = [o for o in tested if o.status != "ok"]
    counts = {
        "signals": len(outcomes),
        "stopped_ok": len(tested) - len(failed),
        "failed": len(failed),
        "finished_first": sum(o.status == "finished first" for o in outcomes),
        "before_protolab": sum(o.status == BEFORE for o in outcomes),
        "segfaults": sum(o.exit in (139, -signal.SIGSEGV) for o in tested),
        "swallowed": sum("Exception ignored" in o.status for o in tested),
        "late": sum("still running" in o.status for o in tested),
        "resumed_equal": sum(o.resumed == "equal" for o in outcomes),
        "resumed_differ": sum(o.resumed not in ("", "equal", "no folder") for o in outcomes),
        "slowest_stop_s": round(max((o.seconds for o in tested), default=0.0), 2),
        "per_command": {n: sum(o.case == n for o in tested) for n in names},
        "seconds": round(elapsed, 1),
        "failures": [f"{o.case} +{o.delay}s: {o.status}" for o in failed],
    }
    if args.json:
        print(json.dumps(counts))
    else:
        print(
            f"\n{counts['signals']} signals: {counts['stopped_ok']} stopped cleanly, {counts['failed']} failed, "
            f"{counts['finished_first']} finished first, {counts['before_protolab']} came before protolab's "
            f"first line; segfaults {counts['segfaults']}, swallowed "
            f"{counts['swallowed']}, late {counts['late']}; runs resumed to equal rows {counts['resumed_equal']}, "
            f"differing "
            f"{counts['resumed_differ']}; slowest stop {counts['slowest_stop_s']} s; {counts['seconds']} s"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
