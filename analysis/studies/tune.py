"""The balance-search study: a `protolab tune` folder (tune.json, protolab/experiment/tune/tune.py) read as
its verified candidates: each one's changes, its imbalance and every protocol's win rate before
and after on fresh seeds, and the search's trials (the Pareto front of imbalance and changed cards
over everything it judged)."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go
from rich.table import Table

from analysis.pages.shell import fig_html, layout, plain_table, render_page
from analysis.runs.open import RunError
from analysis.runs.provenance import as_html, csv_header, print_lines
from analysis.studies.base import Options, Study, write_tables

TUNE_FILE = "tune.json"
TABLES = ("candidates", "protocols", "trials")


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def change_text(c: dict[str, Any]) -> str:
    return f"{c['card']} {c['key']}: {json.dumps(c['old'])} -> {json.dumps(c['new'])}"


class Tune(Study):
    kind = "tune"
    TABLE_NAMES = TABLES
    DEFAULT_TABLE = "candidates"
    PAGE_LABEL = "Balance search page"

    def __init__(self, run: str, record: dict[str, Any], table: str | None = None) -> None:
        self.run, self.record, self.table = run, record, table
        self.run_id, self.timings = Path(run).name, {}

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return len(paths) == 1 and (Path(str(paths[0])) / TUNE_FILE).is_file()

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> Tune:
        path = Path(str(paths[0])) / TUNE_FILE
        try:
            record = json.loads(path.read_text())
            missing = [k for k in ("baseline", "candidates", "trials", "name") if k not in record]
        except (OSError, ValueError) as e:
            raise RunError(f"{path}: not a balance search record protolab wrote ({e})") from None
        if missing:
            raise RunError(
                f"{path}: key '{missing[0]}': missing; the search has not finished (run protolab tune "
                "on its spec with --out pointing here to go on)"
            )
        return cls(str(paths[0]), record, options.table)

    # -- tables ---------------------------------------------------------------------------------

    def candidates(self) -> pd.DataFrame:
        target = self.record.get("target")
        rows = []
        for c in self.record["candidates"]:
            row = {
                "rank": c["rank"],
                "changes": "; ".join(change_text(x) for x in c["changes"]),
                "cards": c["cards"],
                "imbalance": c["imbalance"],
                "games": c["games"],
                "search_games": c["search_games"],
                "stopped": c["search_stopped"],
                "variant": c["variant"],
            }
            if target:
                t = c["target_change"]
                row.update(
                    {
                        f"{target}": c["protocols"][target]["win_rate"],
                        "change": t["change"],
                        "change_low": t["low"],
                        "change_high": t["high"],
                    }
                )
            rows.append(row)
        return pd.DataFrame(rows)

    def protocols(self) -> pd.DataFrame:
        base = self.record["baseline"]["protocols"]
        df = pd.DataFrame(
            {
                "protocol": list(base),
                "baseline": [r["win_rate"] for r in base.values()],
                "baseline_low": [r["low"] for r in base.values()],
                "baseline_high": [r["high"] for r in base.values()],
            }
        )
        for c in self.record["candidates"]:
            df[f"candidate_{c['rank']}"] = [c["protocols"][p]["win_rate"] for p in base]
        return df

    def trials(self) -> pd.DataFrame:
        df = pd.DataFrame(self.record["trials"])
        if not df.empty:
            df["changes"] = df["changes"].map("; ".join)
        return df

    def _table(self, name: str) -> pd.DataFrame:
        return {"candidates": self.candidates, "protocols": self.protocols, "trials": self.trials}[name]()

    # -- outputs --------------------------------------------------------------------------------

    @property
    def provenance(self) -> list[dict[str, Any]]:
        return [self.record["provenance"]] if self.record.get("provenance") else []

    def print(self, console) -> None:
        r, base = self.record, self.record["baseline"]
        print_lines(self.provenance, console)
        console.print(
            f"Balance search {r['name']}: {len(r['trials'])} trials, {r.get('search_games', 0):,} games, "
            f"{r.get('seconds', 0):.0f} s; baseline imbalance {100 * base['imbalance']:.1f} points "
            f"({base['games']:,} fresh games)"
        )
        if not r["candidates"]:
            console.print("No candidate was judged to the end; raise tune.trials or tune.games.")
        for c in r["candidates"]:
            console.print(
                f"\n[bold]#{c['rank']}[/bold] {'; '.join(change_text(x) for x in c['changes'])}\n"
                f"  imbalance {100 * c['imbalance']:.1f} points on {c['games']:,} fresh games (search: "
                f"{c['search_games']:,} games, {c['search_stopped']}); variant: {c['variant']}"
            )
            t = Table("protocol", "before", "after", "95% (after)")
            for p in self._movers(c):
                b, a = base["protocols"][p], c["protocols"][p]
                t.add_row(p, _pct(b["win_rate"]), _pct(a["win_rate"]), f"{_pct(a['low'])}-{_pct(a['high'])}")
            console.print(t)

    def _movers(self, c: dict[str, Any], n: int = 6) -> list[str]:
        base = self.record["baseline"]["protocols"]
        return sorted(base, key=lambda p: -abs(c["protocols"][p]["win_rate"] - base[p]["win_rate"]))[:n]

    def _fig_rates(self) -> go.Figure:
        df = self.protocols().sort_values("baseline")
        fig = go.Figure(
            go.Scatter(
                x=df["baseline"],
                y=df["protocol"],
                mode="markers",
                name="baseline",
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": df["baseline_high"] - df["baseline"],
                    "arrayminus": df["baseline"] - df["baseline_low"],
                },
            )
        )
        for c in self.record["candidates"]:
            fig.add_trace(
                go.Scatter(
                    x=df[f"candidate_{c['rank']}"], y=df["protocol"], mode="markers", name=f"candidate {c['rank']}"
                )
            )
        lo, hi = self.record["spec"].get("tune", {}).get("band", [45, 55])
        fig.add_vrect(x0=lo / 100, x1=hi / 100, fillcolor="#2a7a2a", opacity=0.08, line_width=0)
        return layout(
            fig,
            "Win rate by protocol, fresh seeds (the band shaded)",
            height=80 + 22 * len(df),
            xaxis={"tickformat": ".0%"},
        )

    def _fig_trials(self) -> go.Figure:
        df = self.trials()
        fig = go.Figure()
        for stopped, part in df.groupby("stopped"):
            fig.add_trace(
                go.Scatter(
                    x=part["cards"],
                    y=100 * part["imbalance"],
                    mode="markers",
                    name=str(stopped),
                    text=part["changes"],
                    hovertemplate="%{text}<br>%{y:.1f} points",
                )
            )
        return layout(
            fig,
            "Every trial: imbalance (search seeds) against changed cards",
            height=380,
            xaxis={"title": "changed cards", "dtick": 1},
            yaxis={"title": "imbalance, points"},
        )

    def page(self) -> str:
        r = self.record
        cands = self.candidates()
        shown = cands.drop(columns=[c for c in ("change_low", "change_high") if c in cands])
        body = (
            f"<section><h2>Verified candidates (fresh seeds)</h2>"
            f'<div class="scroll">{plain_table(shown, "candidates")}</div></section>\n'
            f"<section>{fig_html(self._fig_rates(), 'rates')}</section>\n"
            f"<section>{fig_html(self._fig_trials(), 'trials')}</section>\n"
            f'<section><h2>Trials</h2><div class="scroll">{plain_table(self.trials(), "trials-table")}'
            "</div></section>"
        )
        target = html.escape(str(r.get("target") or "every protocol into the band"))
        header = (
            f"\n<p>Target: {target}; {len(r['trials'])} trials, {r.get('search_games', 0):,} search games; "
            f"pool {html.escape(str(r.get('pool_hash', '')))}; baseline imbalance "
            f"{100 * r['baseline']['imbalance']:.1f} points.</p>{as_html(self.provenance)}"
        )
        return render_page(" tune", "protolab balance search", self.run_id, header, body)

    def to_json(self) -> str:
        if self.table:
            return json.dumps({self.table: self._table(self.table).to_dict("records")}, indent=1, default=str)
        keep = ("name", "target", "baseline", "candidates", "search_games", "seconds", "pool_hash", "provenance")
        return json.dumps({k: self.record.get(k) for k in keep}, indent=1, default=str)

    def table_csv(self, name: str | None = None) -> str:
        return csv_header(self.provenance) + self._table(name or self.DEFAULT_TABLE).to_csv(index=False)

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return write_tables({name: self.table_csv(name) for name in TABLES}, out_dir)
