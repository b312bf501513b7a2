"""The training study: a `protolab train` folder (train.json, protolab/experiment/train/train.py) read
as its generations (who played the data, how many examples, the fit's held-out loss, the model's
hash) and each generation's ladder against the spec's opponents."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from rich.table import Table

from analysis.pages.cells import pct
from analysis.pages.shell import fig_html, interval_bars, layout, plain_table, render_page
from analysis.runs.provenance import as_html, csv_header, print_lines
from analysis.studies.base import Options, Study, write_tables
from analysis.studies.train import training


class Train(Study):
    kind = "train"
    TABLE_NAMES = training.TABLES
    DEFAULT_TABLE = "generations"
    PAGE_LABEL = "Training page"

    def __init__(self, run: str, record: dict[str, Any], table: str | None = None) -> None:
        self.run, self.record, self.table = run, record, table
        self.run_id, self.timings = Path(run).name, {}

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return len(paths) == 1 and (Path(str(paths[0])) / training.TRAIN_FILE).is_file()

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> Train:
        return cls(str(paths[0]), training.read_training(paths[0]), options.table)

    @property
    def provenance(self) -> list[dict[str, Any]]:
        return [self.record["provenance"]] if self.record.get("provenance") else []

    def _summary(self) -> str:
        r, out = self.record, self.record["output"]
        return (
            f"Training {r['name']}: {len(r['generations'])} generations, {r.get('seconds', 0):,.0f} s; "
            f"model {out['name']} = generation {out['generation']} ({out['choose']}), hash {out['hash']}; "
            f"pool {r['pool_hash']}; features {r['feature_digest']}"
        )

    def print(self, console) -> None:
        print_lines(self.provenance, console)
        console.print(self._summary(), markup=False, highlight=False)
        t = Table(
            "gen", "data played by", "games", "examples", "held-out loss", "constant", "epochs", "model", "seconds"
        )
        for _, g in training.generations(self.record).iterrows():
            t.add_row(
                str(g["generation"]),
                g["players"],
                f"{g['games']:,}",
                f"{g['examples']:,}",
                f"{g['val_loss']:.4f}",
                f"{g['constant_loss']:.4f}",
                str(g["epochs"]),
                g["model_hash"],
                f"{g['seconds']:.0f}",
            )
        console.print(t)
        lad = Table("gen", "opponent", "games", "win rate", "95%")
        for _, p in training.ladder(self.record).iterrows():
            lad.add_row(
                str(p["generation"]),
                p["opponent"],
                f"{p['games']:,}",
                pct(p["win_rate"]),
                f"{pct(p['ci_low'])}-{pct(p['ci_high'])}",
            )
        console.print(lad)

    def _fig_ladder(self) -> go.Figure:
        df = training.ladder(self.record)
        fig = go.Figure()
        for opp, part in df.groupby("opponent", sort=False):
            fig.add_trace(
                go.Scatter(
                    x=part["generation"],
                    y=part["win_rate"],
                    mode="lines+markers",
                    name=str(opp),
                    error_y=interval_bars(part["win_rate"], part["ci_low"], part["ci_high"]),
                )
            )
        fig.add_hline(y=0.5, line_dash="dot", line_color="#888")
        return layout(
            fig,
            "The model's win rate against each opponent, by generation (95% Wilson)",
            height=380,
            xaxis={"title": "generation", "dtick": 1},
            yaxis={"tickformat": ".0%"},
        )

    def _fig_curve(self) -> go.Figure:
        df = training.curve(self.record)
        fig = go.Figure()
        for g, part in df.groupby("generation"):
            fig.add_trace(go.Scatter(x=part["epoch"], y=part["val_loss"], mode="lines", name=f"generation {g}"))
        return layout(
            fig, "Held-out log loss by epoch", height=340, xaxis={"title": "epoch"}, yaxis={"title": "log loss"}
        )

    def page(self) -> str:
        body = (
            f'<section><h2>Generations</h2><div class="scroll">'
            f"{plain_table(training.generations(self.record), 'generations')}</div></section>\n"
            f"<section>{fig_html(self._fig_ladder(), 'ladder-fig')}</section>\n"
            f'<section><h2>Ladder</h2><div class="scroll">{plain_table(training.ladder(self.record), "ladder")}'
            "</div></section>\n"
            f"<section>{fig_html(self._fig_curve(), 'curve')}</section>"
        )
        header = f"\n<p>{self._summary()}</p>{as_html(self.provenance)}"
        return render_page(" train", "protolab training", self.run_id, header, body)

    def to_json(self) -> str:
        if self.table:
            return json.dumps(
                {self.table: training.table(self.record, self.table).to_dict("records")}, indent=1, default=str
            )
        keep = ("name", "model_name", "output", "pool_hash", "feature_digest", "seconds", "libraries", "provenance")
        return json.dumps(
            {
                **{k: self.record.get(k) for k in keep},
                "generations": training.generations(self.record).to_dict("records"),
                "ladder": training.ladder(self.record).to_dict("records"),
            },
            indent=1,
            default=str,
        )

    def table_csv(self, name: str | None = None) -> str:
        return csv_header(self.provenance) + training.table(self.record, name or self.DEFAULT_TABLE).to_csv(index=False)

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return write_tables({name: self.table_csv(name) for name in training.TABLES}, out_dir)
