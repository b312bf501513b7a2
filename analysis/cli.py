"""The analysis subcommands of `protolab`: report, compare, dashboard (registered by sim/cli.py)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from analysis.open import RunError, Runs, open_runs
from analysis.stats import CORRECTIONS


def _usage(e: Exception) -> Exception:
    """sim.cli.UsageError: one line on stderr, exit status 2 (`python -m sim.cli` runs the
    importable module's main too, so this is the class it catches)."""
    from sim.cli import UsageError

    return UsageError(str(e))


def _open(paths: list[str], args: argparse.Namespace) -> Runs:
    try:
        return open_runs(paths, threads=args.threads)
    except RunError as e:
        raise _usage(e) from None


def _console():
    """Rich console; when the output is not a terminal, wide enough for the matchup matrix."""
    import os

    from rich.console import Console

    return Console() if sys.stdout.isatty() or os.environ.get("COLUMNS") else Console(width=160)


def _stat_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--correction", choices=sorted(CORRECTIONS), default="holm",
                   help="multiple-comparison correction: holm (family-wise) or bh (false discovery rate); default holm")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level after correction (default 0.05)")
    p.add_argument("--threads", type=int, help="DuckDB threads (default: all cores)")


def _band(p: argparse.ArgumentParser) -> None:
    p.add_argument("--band", type=float, default=0.05,
                   help="flag win rates outside 50%% +/- BAND beyond chance (default 0.05: 45-55%%)")


def _check(args: argparse.Namespace) -> None:
    if not 0 < args.alpha < 1:
        raise _usage(ValueError(f"--alpha must be between 0 and 1, got {args.alpha}"))
    if getattr(args, "band", 0.05) is not None and not 0 <= getattr(args, "band", 0.05) < 0.5:
        raise _usage(ValueError(f"--band must be in [0, 0.5), got {args.band}"))


def cmd_report(args: argparse.Namespace) -> int:
    from analysis.report import TABLE_NAMES, build_report, print_report, to_json, write_csv

    _check(args)
    if args.table and args.table not in TABLE_NAMES:
        raise _usage(ValueError(f"unknown table {args.table!r}; tables: {', '.join(TABLE_NAMES)}"))
    t0 = time.perf_counter()
    runs = _open(args.runs, args)
    try:
        only = [args.table] if args.table else None
        if only and args.table == "balance_flags":
            only = None
        rep = build_report(runs, args.band, args.correction, args.alpha, only=only)
    except RunError as e:
        raise _usage(e) from None
    total = time.perf_counter() - t0
    if args.format == "json":
        if args.table:
            rep.tables = {args.table: rep.tables[args.table]}
        print(to_json(rep))
    elif args.format == "csv":
        if args.out:
            for f in write_csv(rep, args.out):
                print(f)
        else:
            rep.tables[args.table or "protocols"].to_csv(sys.stdout, index=False)
    else:
        print_report(rep, _console())
    if args.timing:
        for name, s in rep.timings.items():
            print(f"{name:24s} {s:7.3f} s", file=sys.stderr)
        print(f"{'total (open + all tables)':24s} {total:7.3f} s", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import json

    from analysis.compare import compare_runs, print_comparison
    from analysis.report import records

    _check(args)
    base = _open([args.base], args)
    variant = _open([args.variant], args)
    try:
        c = compare_runs(base, variant, args.correction, args.alpha)
    except RunError as e:
        raise _usage(e) from None
    if args.format == "json":
        print(json.dumps({"meta": c.meta, "summary": c.summary, "table": records(c.table)}, indent=1))
    elif args.format == "csv":
        c.table.to_csv(sys.stdout, index=False)
    else:
        print_comparison(c, _console(), limit=args.limit)
    return 0


def cmd_dashboard(args: argparse.Namespace) -> int:
    from analysis.dashboard import make_server, render
    from analysis.report import build_report

    _check(args)
    runs = _open(args.runs, args)
    try:
        page = render(build_report(runs, args.band, args.correction, args.alpha))
    except RunError as e:
        raise _usage(e) from None
    out = args.out
    if out is None and not args.serve:
        out = f"dashboard-{runs.run_ids[0]}.html"
    if out:
        Path(out).write_text(page, encoding="utf-8")
        print(f"wrote {out} ({len(page) / 1e6:.1f} MB, works offline)")
    if args.serve:
        try:
            server = make_server(page, args.port)
        except OSError as e:
            raise _usage(ValueError(f"cannot serve on 127.0.0.1:{args.port}: {e}")) from None
        print(f"serving on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register report, compare and dashboard on the `protolab` parser."""
    from analysis.report import TABLE_NAMES

    p = sub.add_parser("report", help="balance report of run folders (win rates, matchups, compiles, cards)")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folder(s) written by `protolab run`")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table: key tables in the terminal; json: every table; csv: one table (--table) or all (--out)")
    p.add_argument("--table", metavar="NAME", help=f"only this table ({', '.join(TABLE_NAMES)})")
    p.add_argument("--out", metavar="DIR", help="with --format csv: write every table as DIR/NAME.csv")
    p.add_argument("--timing", action="store_true", help="print seconds per table to stderr")
    _band(p)
    _stat_args(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="A/B comparison of two runs (e.g. official pool vs a card variant)")
    p.add_argument("base", metavar="BASE_RUN")
    p.add_argument("variant", metavar="VARIANT_RUN")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--limit", type=int, default=25, help="rows shown in the terminal table (default 25)")
    _stat_args(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("dashboard", help="self-contained HTML dashboard of a run (works offline)")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", metavar="FILE.html", help="where to write it (default dashboard-RUN_ID.html)")
    p.add_argument("--serve", action="store_true", help="serve it on http://127.0.0.1:PORT/ until Ctrl-C")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000; 0: any free port)")
    _band(p)
    _stat_args(p)
    p.set_defaults(func=cmd_dashboard)
