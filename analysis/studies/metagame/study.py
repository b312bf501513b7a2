"""The metagame study: a metagame loop folder (meta.json, protolab/experiment/meta/psro.py) read as the
metagame of every game its iterations played (analysis/studies/balance/meta.py), with the loop's iterations. No
bootstrap, as the loop itself solves it; `protolab meta LOOP_DIR` has the bootstrap intervals.

This module is the worked example of docs/architecture.md, "Adding a study kind": a class with
`claims` and `open`, the five outputs over the kind's own result, and one line in KINDS."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis.pages.shell import plain_table, render_page, warnings_html
from analysis.runs.open import RunError
from analysis.runs.provenance import as_html, csv_header, of_runs
from analysis.studies.balance import meta
from analysis.studies.balance.meta_report import TABLES, meta_html, print_meta, table_of, to_json
from analysis.studies.balance.report import records
from analysis.studies.base import Options, Study, write_tables


class Metagame(Study):
    kind = "metagame"
    TABLE_NAMES = TABLES
    DEFAULT_TABLE = "protocols"
    PAGE_LABEL = "Metagame dashboard"

    def __init__(
        self, run: str, result: meta.MetaResult, provenance: list, warnings: list[str], table: str | None = None
    ) -> None:
        self.run, self.result, self.provenance, self.warnings, self.table = run, result, provenance, warnings, table
        self.run_id, self.timings = Path(run).name, {}

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return len(paths) == 1 and (Path(str(paths[0])) / meta.LOOP_FILE).is_file()

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> Metagame:
        try:
            dirs, manifest = meta.loop_runs(paths[0]) or ([], {})
        except ValueError as e:
            raise RunError(str(e)) from None
        if not dirs:
            raise RunError(f"{paths[0]}: a metagame loop with no finished iteration yet")
        runs = options.open(dirs)
        try:
            res = meta.analyse_runs(runs, bootstrap=0, prior_games=manifest["meta"]["prior_games"])
            provenance, warnings = of_runs(runs), list(runs.warnings)
        finally:
            runs.close()
        res.iterations = meta.iterations_table(manifest)
        res.meta["stopped"] = manifest.get("stopped")
        return cls(str(paths[0]), res, provenance, warnings, options.table)

    def print(self, console) -> None:
        print_meta(self.result, console)

    def page(self) -> str:
        it = self.result.iterations
        shown = it.astype(object).where(it.notna(), "")
        stopped = html.escape(str(self.result.meta.get("stopped") or ""))
        iterations = (
            f'<section><h2>Loop iterations</h2><div class="scroll">{plain_table(shown, "iterations")}'
            f'</div><p class="muted">{stopped}</p></section>'
            if not it.empty
            else ""
        )
        header = f"\n<p>Every game of the loop's iterations; no bootstrap.</p>{as_html(self.provenance)}"
        body = f"{warnings_html(self.warnings)}\n{meta_html(self.result)}\n{iterations}"
        return render_page(" metagame", "protolab metagame loop", self.run_id, header, body)

    def to_json(self) -> str:
        if self.table:
            return json.dumps(
                {"meta": self.result.meta, self.table: records(self._table(self.table))}, indent=1, default=str
            )
        return to_json(self.result)

    def _table(self, name: str) -> pd.DataFrame:
        return table_of(self.result, name)

    def table_csv(self, name: str | None = None) -> str:
        return csv_header(self.provenance) + self._table(name or self.DEFAULT_TABLE).to_csv(index=False)

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return write_tables({name: self.table_csv(name) for name in TABLES}, out_dir)
