"""The balance report (report.py) of run folders pooled, and its dashboard (dashboard.py), as a study:
what the plain and the card-value kinds are, each claiming its own runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Self

from analysis.studies.balance.dashboard import render
from analysis.studies.balance.report import (
    TABLE_NAMES,
    Report,
    build_report,
    print_report,
    print_table,
    table_csv,
    to_json,
    write_csv,
)
from analysis.studies.base import Options, Served, Study


class Pooled(Study):
    """The balance report of the runs a kind opens, read every way a study is (the kind says which runs)."""

    TABLE_NAMES = TABLE_NAMES
    DEFAULT_TABLE = "protocols"

    def __init__(self, run: str, report: Report, timings: dict[str, float], table: str | None = None) -> None:
        self.run, self.report, self.timings, self.table = run, report, timings, table
        self.run_id = report.meta["run_ids"][0]

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> Self:
        """The report of `paths` (every table, or Options.table alone; the balance flags need them all)."""
        t0 = time.perf_counter()
        runs = options.open(list(paths))
        t_open = time.perf_counter() - t0
        only = [options.table] if options.table and options.table != "balance_flags" else None
        rep = build_report(
            runs, options.band, options.correction, options.alpha, only=only, flag_played=options.flag_played
        )
        timings = {
            **rep.timings,
            f"open (verify {options.verify})": t_open,
            "total (open + all tables)": time.perf_counter() - t0,
        }
        return cls(str(paths[0]), rep, timings, options.table)

    def print(self, console) -> None:
        if self.table:
            print_table(self.report, self.table, console)
        else:
            print_report(self.report, console)

    def page(self) -> str:
        return render(self.report)

    def page_linking_games(self, examples: Callable[[Any], tuple[str, Served]]) -> tuple[str, Served | None]:
        section, served = examples(self.report)  # the report's flags and protocols, linked to games
        return render(self.report, section), served

    def to_json(self) -> str:
        if self.table:
            return to_json(replace(self.report, tables={self.table: self.report.tables[self.table]}))
        return to_json(self.report)

    def table_csv(self, name: str | None = None) -> str:
        return table_csv(self.report, self.report.tables[name or self.DEFAULT_TABLE])

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return write_csv(self.report, out_dir)
