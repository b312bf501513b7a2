"""The A/B study (a run with `[[arms]]`, analysis/studies/ab/arms.py): never pooled. Its report is one report
per arm; its page and the end of `protolab run` compare every arm with the first."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from analysis.runs.open import peek_manifest, split_arm
from analysis.runs.provenance import csv_header
from analysis.studies.ab.arms import (
    ABResult,
    ab_compare,
    arms_csv,
    arms_json,
    label_arm,
    print_ab,
    print_arm_reports,
    render_ab,
    write_arms_csv,
)
from analysis.studies.ab.stopped import describe, stop_record
from analysis.studies.balance.arms import arm_paths
from analysis.studies.balance.report import TABLE_NAMES, Report, build_report
from analysis.studies.balance.rule_note import csv_lines
from analysis.studies.base import Options, Study


class AB(Study):
    kind = "ab"
    TABLE_NAMES = TABLE_NAMES
    DEFAULT_TABLE = "protocols"
    PAGE_LABEL = "A/B dashboard"

    def __init__(self, run: str, arms: list[str], options: Options) -> None:
        self.run, self.arms, self.options, self.timings = run, arms, options, {}

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return bool(arm_paths(list(paths)))

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> AB:
        """Each arm is opened when first needed: the report reads the arms one by one, the page compares them."""
        return cls(str(paths[0]), arm_paths(list(paths)) or [], options)

    @cached_property
    def reports(self) -> list[Report]:
        o = self.options
        only = [o.table] if o.table and o.table != "balance_flags" else None
        return [label_arm(build_report(o.open_one(p), o.band, o.correction, o.alpha, only=only), p) for p in self.arms]

    @cached_property
    def comparison(self) -> ABResult:
        return ab_compare(self.arms, self.options.correction, self.options.alpha, open_fn=self.options.open_one)

    @property
    def run_id(self) -> str:  # type: ignore[override]
        return self.comparison.run_id

    def print(self, console) -> None:
        stop = stop_record(peek_manifest(split_arm(self.arms[0])[0])) if self.arms else None
        if stop is not None:
            console.print(f"[bold]Sequential A/B[/bold]: {describe(stop)}", highlight=False, soft_wrap=True)
        print_arm_reports(self.reports, console)

    def summarise(self, console) -> None:
        print_ab(self.comparison, console)

    def afterword(self, page_file: Any) -> list[str]:
        first = self.comparison.arms[0]
        return [f"One arm's full report: protolab report {self.run}#{first}", *super().afterword(page_file)]

    def page(self) -> str:
        return render_ab(self.comparison)

    def to_json(self) -> str:
        table = self.options.table
        if table:
            for r in self.reports:
                r.tables = {table: r.tables[table]}
        return arms_json(self.reports)

    def table_csv(self, name: str | None = None) -> str:
        blocks = [b for r in self.reports for b in r.meta.get("provenance") or []]
        notes = [n for r in self.reports for n in r.meta.get("rule_notes") or []]
        return (
            csv_header(blocks)
            + csv_lines(notes)
            + arms_csv(self.reports, name or self.DEFAULT_TABLE).to_csv(index=False)
        )

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return write_arms_csv(self.reports, out_dir)
