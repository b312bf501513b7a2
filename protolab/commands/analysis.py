"""The analysis subcommands of `protolab`: report, compare, dashboard (registered by protolab/cli.py)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from analysis import tiers
from analysis.ab import ab_compare, label_arm, output_arm_reports, render_ab
from analysis.cardvalue import is_card_value_run
from analysis.compare import compare_runs, print_comparison
from analysis.dashboard import make_server, render, write_page
from analysis.open import RunError, Runs
from analysis.provenance import csv_header
from analysis.report import TABLE_NAMES, build_report, print_report, records, table_csv, to_json, write_csv
from analysis.tiers import TABLE_NAMES as TIER_TABLES
from analysis.tiers import is_tier_run, render_tiers, tier_study
from protolab.commands.common import UsageError, console
from protolab.commands.reading import MAX_THREADS, add_read_args, arms_of, open_given, warn
from protolab.commands.registry import summary


def _band(p: argparse.ArgumentParser) -> None:
    p.add_argument("--band", type=float, default=0.05,
                   help="flag win rates outside 50%% +/- BAND beyond chance (default 0.05: 45-55%%)")




def _check(args: argparse.Namespace) -> None:
    if args.threads is not None and not 1 <= args.threads <= MAX_THREADS:
        raise UsageError(f"--threads: expected 1 to {MAX_THREADS}, got {args.threads}")
    if getattr(args, "limit", 1) < 1:
        raise UsageError(f"--limit: expected at least 1 row, got {args.limit}")
    if not 0 <= getattr(args, "port", 0) <= 65535:
        raise UsageError(f"--port: expected 0 (any free port) to 65535, got {args.port}")
    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if getattr(args, "band", 0.05) is not None and not 0 <= getattr(args, "band", 0.05) < 0.5:
        raise UsageError(f"--band must be in [0, 0.5), got {args.band}")


def _check_out_dir(out: str | None) -> None:
    """`report --out DIR`: a folder that exists or can be made, checked before any figure is computed."""
    if out is None:
        return
    p = Path(out)
    existing = next((q for q in (p, *p.parents) if q.exists()), Path("."))
    if not existing.is_dir():
        raise UsageError(f"--out {out}: {existing} is a file; expected a folder for the CSV files")


def _check_out_file(out: str) -> None:
    """`dashboard --out FILE.html`: a file name in an existing folder, checked before the report is built."""
    p = Path(out)
    if p.is_dir():
        raise UsageError(f"--out {out}: is a folder; expected a file name, e.g. {p / 'dashboard.html'}")
    if not p.parent.is_dir():
        raise UsageError(f"--out {out}: no folder {p.parent}; expected a file in an existing folder")


def _written(out: str, write) -> None:
    """Run `write()`; a disk or permission error becomes one line naming the file (the writers go
    through a temporary file, so an existing file is left as it was)."""
    try:
        write()
    except BrokenPipeError:
        raise
    except OSError as e:
        raise UsageError(f"--out {out}: cannot write ({e.strerror or e})") from None




def _report_arms(args: argparse.Namespace, arms: list[str]) -> int:
    """`report` of an A/B run: one report per arm, never pooled (docs/analysis.md)."""

    only = [args.table] if args.table and args.table != "balance_flags" else None
    reports = []
    for path in arms:
        runs = open_given([path], args)
        warn(runs, args.format == "table")
        try:
            reports.append(label_arm(build_report(runs, args.band, args.correction, args.alpha, only=only), path))
        except RunError as e:
            raise UsageError(str(e)) from None
    _written(args.out or "", lambda: output_arm_reports(reports, args.format, args.table, args.out, console(wide=True)))
    return 0


def _tier_study(args: argparse.Namespace):
    """The tier study of a tier-study run (analysis.tiers), each tier opened with the command's options."""

    def opened(path: str) -> Runs:
        runs = open_given([path], args)
        warn(runs, getattr(args, "format", "html") == "table")
        return runs

    try:
        return tier_study(args.runs[0], args.band, args.correction, args.alpha, open_fn=opened)
    except RunError as e:
        raise UsageError(str(e)) from None


def _report_tiers(args: argparse.Namespace) -> int:
    """`report` of a tier study: each finding under every tier, rank agreement, flag verdicts."""

    study = _tier_study(args)
    if args.format == "json":
        if args.table:
            study.tables = {args.table: study.tables[args.table]}
        print(tiers.to_json(study))
    elif args.format == "csv":
        if args.out:
            files: list[Path] = []
            _written(args.out, lambda: files.extend(tiers.write_csv(study, args.out)))
            for f in files:
                print(f)
        else:
            sys.stdout.write(tiers.table_csv(study, args.table or "agreement"))
    else:
        tiers.print_tiers(study, console(wide=True))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    _check(args)
    tiered = len(args.runs) == 1 and is_tier_run(args.runs[0])
    names = TIER_TABLES if tiered else TABLE_NAMES
    if args.table and args.table not in names:
        raise UsageError(f"unknown table {args.table!r}; tables: {', '.join(names)}")
    if args.out is not None and args.format != "csv":
        raise UsageError(f"--out {args.out}: goes with --format csv (one CSV file per table)")
    _check_out_dir(args.out)
    arms = arms_of(args.runs)
    if tiered:
        return _report_tiers(args)
    if arms and is_card_value_run(args.runs[0]):     # `protolab cardvalue`: its baseline arm, card values included
        args.runs, arms = arms[:1], None
    if arms:
        return _report_arms(args, arms)
    t0 = time.perf_counter()
    runs = open_given(args.runs, args)
    t_open = time.perf_counter() - t0
    warn(runs, args.format == "table")
    try:
        only = [args.table] if args.table else None
        if only and args.table == "balance_flags":
            only = None
        rep = build_report(runs, args.band, args.correction, args.alpha, only=only)
    except RunError as e:
        raise UsageError(str(e)) from None
    total = time.perf_counter() - t0
    if args.format == "json":
        if args.table:
            rep.tables = {args.table: rep.tables[args.table]}
        print(to_json(rep))
    elif args.format == "csv":
        if args.out:
            files: list[Path] = []
            _written(args.out, lambda: files.extend(write_csv(rep, args.out)))
            for f in files:
                print(f)
        else:
            sys.stdout.write(table_csv(rep, rep.tables[args.table or "protocols"]))
    else:
        print_report(rep, console(wide=True))
    if args.timing:
        for name, s in rep.timings.items():
            print(f"{name:24s} {s:7.3f} s", file=sys.stderr)
        print(f"{'open (verify ' + args.verify + ')':24s} {t_open:7.3f} s", file=sys.stderr)
        print(f"{'total (open + all tables)':24s} {total:7.3f} s", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    _check(args)
    for side in (args.base, args.variant):
        if arms_of([side]):
            raise UsageError(f"{side}: an A/B run; compare its arms ({side}#ARM) rather than its pooled games")
    base = open_given([args.base], args)
    variant = open_given([args.variant], args)
    warn(base, args.format == "table")
    warn(variant, args.format == "table")
    try:
        c = compare_runs(base, variant, args.correction, args.alpha)
    except RunError as e:
        raise UsageError(str(e)) from None
    if args.format == "json":
        print(json.dumps({"meta": c.meta, "summary": c.summary, "table": records(c.table),
                          "changed_cards": records(c.cards)}, indent=1))
    elif args.format == "csv":
        sys.stdout.write(csv_header(c.meta.get("provenance") or []) + c.table.to_csv(index=False))
    else:
        print_comparison(c, console(wide=True), limit=args.limit)
    return 0


def _ab_page(args: argparse.Namespace, arms: list[str]) -> tuple[str, str]:
    """(run id, the A/B page) of an A/B run: every arm against the first (analysis.ab)."""

    def opened(path: str) -> Runs:
        runs = open_given([path], args)
        warn(runs, False)
        return runs

    try:
        ab = ab_compare(arms, args.correction, args.alpha, open_fn=opened)
    except RunError as e:
        raise UsageError(str(e)) from None
    return ab.run_id, render_ab(ab)


def cmd_dashboard(args: argparse.Namespace) -> int:
    _check(args)
    if args.out is not None:
        _check_out_file(args.out)
    arms = arms_of(args.runs)
    if arms and is_card_value_run(args.runs[0]):     # `protolab cardvalue`: its baseline arm, card values included
        args.runs, arms = arms[:1], None

    if len(args.runs) == 1 and is_tier_run(args.runs[0]):
        study = _tier_study(args)
        run_id, page = study.run_id, render_tiers(study)
    elif arms:
        run_id, page = _ab_page(args, arms)
    else:
        runs = open_given(args.runs, args)
        warn(runs, False)
        try:
            page = render(build_report(runs, args.band, args.correction, args.alpha))
        except RunError as e:
            raise UsageError(str(e)) from None
        run_id = runs.run_ids[0]
    out = args.out
    if out is None and not args.serve:
        out = f"dashboard-{run_id}.html"
    if out:
        _written(out, lambda: write_page(out, page))
        print(f"wrote {out} ({len(page) / 1e6:.1f} MB, works offline)")
    if args.serve:
        try:
            server = make_server(page, args.port)
        except OSError as e:
            raise UsageError(f"cannot serve on 127.0.0.1:{args.port}: {e}") from None
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

    p = sub.add_parser("report", help=summary("report"))
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folder(s) written by `protolab run`")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table",
                   help="table: key tables in the terminal; json: every table; csv: one table (--table) or all (--out)")
    p.add_argument("--table", metavar="NAME", help=f"only this table ({', '.join(TABLE_NAMES)})")
    p.add_argument("--out", metavar="DIR", help="with --format csv: write every table as DIR/NAME.csv")
    p.add_argument("--timing", action="store_true", help="print seconds per table to stderr")
    _band(p)
    add_read_args(p)
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help=summary("compare"))
    p.add_argument("base", metavar="BASE_RUN")
    p.add_argument("variant", metavar="VARIANT_RUN")
    p.add_argument("--format", choices=("table", "json", "csv"), default="table")
    p.add_argument("--limit", type=int, default=25, help="rows shown in the terminal table (default 25)")
    add_read_args(p)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("dashboard", help=summary("dashboard"))
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", metavar="FILE.html", help="where to write it (default dashboard-RUN_ID.html)")
    p.add_argument("--serve", action="store_true", help="serve it on http://127.0.0.1:PORT/ until Ctrl-C")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000; 0: any free port)")
    _band(p)
    add_read_args(p)
    p.set_defaults(func=cmd_dashboard)


