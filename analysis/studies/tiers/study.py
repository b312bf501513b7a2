"""The tier study (a run with `tiers`, analysis/studies/tiers/report.py): every finding under every tier, how far
the tiers agree, and which flags hold under all of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from analysis.studies.base import Options, Study
from analysis.studies.tiers import report as tiers


class Tiers(Study):
    kind = "tiers"
    TABLE_NAMES = tiers.TABLE_NAMES
    DEFAULT_TABLE = "agreement"
    PAGE_LABEL = "Tier dashboard"

    def __init__(self, study: tiers.TierStudy, table: str | None = None) -> None:
        self.study, self.table, self.timings = study, table, {}
        self.run, self.run_id = study.run, study.run_id

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return len(paths) == 1 and tiers.is_tier_run(paths[0])

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> Tiers:
        study = tiers.tier_study(paths[0], options.band, options.correction, options.alpha, open_fn=options.open_one)
        return cls(study, options.table)

    def print(self, console) -> None:
        tiers.print_tiers(self.study, console)

    def page(self) -> str:
        return tiers.render_tiers(self.study)

    def to_json(self) -> str:
        if self.table:
            return tiers.to_json(replace(self.study, tables={self.table: self.study.tables[self.table]}))
        return tiers.to_json(self.study)

    def table_csv(self, name: str | None = None) -> str:
        return tiers.table_csv(self.study, name or self.DEFAULT_TABLE)

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return tiers.write_csv(self.study, out_dir)
