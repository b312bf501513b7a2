"""The analysis subcommands of `protolab`: report, compare, dashboard (registered by protolab/cli.py)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from analysis.pages.shell import GamePage, make_server, write_page
from analysis.runs.open import RunError, Runs
from analysis.runs.provenance import csv_header
from analysis.studies import Options, Study, kind_of, open_study
from analysis.studies.ab.compare import compare_runs, print_comparison
from analysis.studies.balance.report import TABLE_NAMES, Report, records
from analysis.studies.balance.rule_note import csv_lines
from protolab.commands.common import UsageError, add_format, check_range, console, serve_until_stopped
from protolab.commands.game_links import MAX_EMBEDDED, example_section
from protolab.commands.reading import MAX_THREADS, add_read_args, arms_of, open_given, warn
from protolab.commands.registry import command_parser


def _band(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--band",
        type=float,
        default=0.05,
        help="flag win rates outside 50%% +/- BAND beyond chance (default 0.05: 45-55%%)",
    )


def _flag_played(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--flag-played",
        action="store_true",
        help="raise balance flags from a playtest's games too (a person's games, `protolab play`: not by default)",
    )


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


def _options(args: argparse.Namespace) -> Options:
    """The study options of a command: its runs opened with its read options, warnings on stderr
    unless the output (a terminal table) shows them."""

    def opened(paths: list[str]) -> Runs:
        runs = open_given(paths, args)
        warn(runs, getattr(args, "format", "html") == "table")
        return runs

    return Options(
        args.band,
        args.correction,
        args.alpha,
        getattr(args, "table", None),
        args.verify,
        open_fn=opened,
        flag_played=getattr(args, "flag_played", False),
    )


@contextlib.contextmanager
def _readable() -> Iterator[None]:
    """A run that cannot be read as asked is the user's error: one line, exit status 2."""
    try:
        yield
    except RunError as e:
        raise UsageError(str(e)) from None


def _output(study: Study, args: argparse.Namespace) -> None:
    """`report` in the chosen format: JSON, CSV of one table (or every table under --out), the terminal."""
    if args.format == "json":
        print(study.to_json())
    elif args.format == "csv" and args.out:
        files: list[Path] = []
        _written(args.out, lambda: files.extend(study.write_csv(args.out)))
        for f in files:
            print(f)
    elif args.format == "csv":
        sys.stdout.write(study.table_csv(args.table))
    else:
        study.print(console(wide=True))


def cmd_report(args: argparse.Namespace) -> int:
    _check(args)
    with _readable():
        kind = kind_of(args.runs)
        if args.table and args.table not in kind.TABLE_NAMES:
            raise UsageError(f"unknown table {args.table!r}; tables: {', '.join(kind.TABLE_NAMES)}")
        if args.out is not None and args.format != "csv":
            raise UsageError(f"--out {args.out}: goes with --format csv (one CSV file per table)")
        _check_out_dir(args.out)
        study = kind.open(args.runs, _options(args))
        _output(study, args)
    if args.timing:
        for name, s in study.timings.items():
            print(f"{name:24s} {s:7.3f} s", file=sys.stderr)
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
        print(
            json.dumps(
                {"meta": c.meta, "summary": c.summary, "table": records(c.table), "changed_cards": records(c.cards)},
                indent=1,
            )
        )
    elif args.format == "csv":
        sys.stdout.write(
            csv_header(c.meta.get("provenance") or [])
            + csv_lines(c.meta.get("rule_notes"))
            + c.table.to_csv(index=False)
        )
    else:
        print_comparison(c, console(wide=True), limit=args.limit)
    return 0


def _serve(page: str, port: int, game_page: GamePage | None = None) -> None:
    """Serve the page on 127.0.0.1 until Ctrl-C (with `game_page`, also /game/N)."""
    try:
        server = make_server(page, port, game_page)
    except OSError as e:
        raise UsageError(f"cannot serve on 127.0.0.1:{port}: {e}") from None
    serve_until_stopped(server, f"serving on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")


def _examples(args: argparse.Namespace) -> Callable[[Report], tuple[str, GamePage | None]]:
    """The example games section of one run's page, from its report (protolab/commands/game_links.py)."""

    def section(report: Report) -> tuple[str, GamePage | None]:
        runs = open_given(args.runs, args)
        try:
            return example_section(args.runs[0], runs, report, args.serve, args.examples)
        finally:
            runs.close()

    return section


def cmd_dashboard(args: argparse.Namespace) -> int:
    _check(args)
    if args.out is not None:
        _check_out_file(args.out)
    check_range("--examples", args.examples, 0, 1000)
    game_page = None
    with _readable():
        study = open_study(args.runs, _options(args))
        if len(args.runs) == 1:  # one run's page links its example games, if its kind's page does
            page, game_page = study.page_linking_games(_examples(args))
        else:
            page = study.page()
    out = args.out
    if out is None and not args.serve:
        out = f"dashboard-{study.run_id}.html"
    if out:
        _written(out, lambda: write_page(out, page))
        print(f"wrote {out} ({len(page) / 1e6:.1f} MB, works offline)")
    if args.serve:
        _serve(page, args.port, game_page)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register report, compare and dashboard on the `protolab` parser."""

    p = command_parser(sub, "report")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folder(s) written by `protolab run`")
    add_format(p, "the key tables in the terminal; json: every table; csv: one table (--table) or all (--out)")
    p.add_argument("--table", metavar="NAME", help=f"only this table ({', '.join(TABLE_NAMES)})")
    p.add_argument("--out", metavar="DIR", help="with --format csv: write every table as DIR/NAME.csv")
    p.add_argument("--timing", action="store_true", help="print seconds per table to stderr")
    _band(p)
    _flag_played(p)
    add_read_args(p)
    p.set_defaults(func=cmd_report)

    p = command_parser(sub, "compare")
    p.add_argument("base", metavar="BASE_RUN")
    p.add_argument("variant", metavar="VARIANT_RUN")
    add_format(p, "the change of each protocol; json: with the summary and the cards that changed")
    p.add_argument("--limit", type=int, default=25, help="rows shown in the terminal table (default 25)")
    add_read_args(p)
    p.set_defaults(func=cmd_compare)

    p = command_parser(sub, "dashboard")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", metavar="FILE.html", help="where to write it (default dashboard-RUN_ID.html)")
    p.add_argument("--serve", action="store_true", help="serve it on http://127.0.0.1:PORT/ until Ctrl-C")
    p.add_argument("--port", type=int, default=8000, help="port for --serve (default 8000; 0: any free port)")
    p.add_argument(
        "--examples",
        type=int,
        default=MAX_EMBEDDED,
        metavar="N",
        help=f"board pages of example games carried in the file (default {MAX_EMBEDDED}; 0: none; "
        "each is its game replayed once per turn, slow for search strategies)",
    )
    _band(p)
    _flag_played(p)
    add_read_args(p)
    p.set_defaults(func=cmd_dashboard)
