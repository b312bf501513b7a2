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

from analysis.pages.cells import pct, shown_path
from analysis.pages.shell import fig_html, interval_bars, layout, plain_table, render_page
from analysis.runs.open import RunError
from analysis.runs.provenance import as_html, csv_header, print_lines
from analysis.studies.base import Options, Study, write_tables

TUNE_FILE = "tune.json"
TABLES = ("candidates", "protocols", "trials")


def _points(x: float) -> str:
    return f"{100 * x:+.1f}"


def _change(row: dict[str, Any]) -> tuple[str, str]:
    """A protocol's paired change and its interval, in points."""
    return _points(row["change"]), f"{_points(row['change_low'])} to {_points(row['change_high'])}"


def _moved(row: dict[str, Any]) -> bool:
    """Significant: the change's own interval, the one shown beside it, leaves 0."""
    return row["change_low"] > 0 or row["change_high"] < 0


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

    def afterword(self, page_file: Any) -> list[str]:
        """The lines `protolab tune` ends with: the page and the folder as given (relative when under here)."""
        return [
            f"{self.PAGE_LABEL}: {shown_path(str(page_file))} (self-contained, works offline; protolab dashboard "
            f"{shown_path(self.run)} --serve)"
        ]

    # -- tables ---------------------------------------------------------------------------------

    def candidates(self) -> pd.DataFrame:
        """One row per proposed candidate, the target's numbers first: its baseline, its rate after
        and its paired change with that change's 95% interval (fresh seeds, looked at once)."""
        target = self.record.get("target")
        base = self.record["baseline"]
        rows = []
        for c in self.record["candidates"]:
            row: dict[str, Any] = {"rank": c["rank"]}
            if target:
                t = c["target_change"]
                row.update(
                    {
                        "target": target,
                        "baseline": base["protocols"][target]["win_rate"],
                        "after": c["protocols"][target]["win_rate"],
                        "change": t["change"],
                        "change_low": t["low"],
                        "change_high": t["high"],
                    }
                )
            row.update(
                {
                    "changes": "; ".join(change_text(x) for x in c["changes"]),
                    "cards": c["cards"],
                    "imbalance": c["imbalance"],
                    "baseline_imbalance": base["imbalance"],
                    "games": c["games"],
                    "search_games": c["search_games"],
                    "stopped": c["search_stopped"],
                    "variant": shown_path(c["variant"]),
                    "rule_notes": " | ".join(c.get("rule_notes", [])),
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

    def answer(self) -> str:
        return self.record.get("answer") or ""

    def print(self, console) -> None:
        r, base = self.record, self.record["baseline"]
        print_lines(self.provenance, console)
        console.print(f"[bold]{self.answer()}[/bold]")
        for w in r.get("warnings", []):
            console.print(f"[yellow]warning:[/yellow] {w}")
        console.print(
            f"Balance search {r['name']}: {len(r['trials'])} trials, {r.get('search_games', 0):,} games, "
            f"{r.get('seconds', 0):.0f} s; baseline imbalance {100 * base['imbalance']:.1f} points "
            f"({base['games']:,} fresh games)"
        )
        for c in r["candidates"]:
            console.print(
                f"\n[bold]candidate {c['rank']}[/bold] (variants/candidate-{c['rank']}.toml): "
                f"{'; '.join(change_text(x) for x in c['changes'])}\n"
                f"  imbalance {100 * c['imbalance']:.1f} points (official cards {100 * base['imbalance']:.1f}) on "
                f"{c['games']:,} fresh games (search: {c['search_games']:,} games, {c['search_stopped']}); "
                f"variant: {shown_path(c['variant'])}"
            )
            for x in c.get("printed", []):
                console.print(f"  {x['card']} {x['box']}: {x['old']!r} -> {x['new']!r}", markup=False)
            for note in c.get("rule_notes", []):
                console.print(f"  {note}", markup=False)
            t = Table("protocol", "before", "after", "paired change", "its 95% CI", "moved")
            for p in self._shown(c):
                b, a = base["protocols"][p], c["protocols"][p]
                t.add_row(p, pct(b["win_rate"]), pct(a["win_rate"]), *_change(a), "yes" if _moved(a) else "")
            console.print(t)
            rest = len(base["protocols"]) - len(self._shown(c))
            if rest:
                console.print(
                    f"  the other {rest} protocols did not move significantly (their 95% CI holds 0) nor further "
                    "outside the band"
                )
        for c in r.get("rejected", []):
            console.print(f"not proposed: {'; '.join(change_text(x) for x in c['changes'])}: {c['why']}", markup=False)

    def _shown(self, c: dict[str, Any]) -> list[str]:
        """The target first, then every protocol whose paired change is significant or which ends
        further outside the band (what the score charges), largest change first."""
        target = self.record.get("target")
        rows, base = c["protocols"], self.record["baseline"]["protocols"]
        lo, hi = (x / 100 for x in self.record["spec"].get("tune", {}).get("band", [45, 55]))

        def out(x: float) -> float:
            return max(0.0, x - hi) + max(0.0, lo - x)

        moved = [
            p
            for p, a in rows.items()
            if p != target and "change" in a and (_moved(a) or out(a["win_rate"]) - out(base[p]["win_rate"]) >= 0.005)
        ]
        moved.sort(key=lambda p: -abs(rows[p]["change"]))
        return ([target] if target else []) + moved

    def _fig_rates(self) -> go.Figure:
        df = self.protocols().sort_values("baseline")
        fig = go.Figure(
            go.Scatter(
                x=df["baseline"],
                y=df["protocol"],
                mode="markers",
                name="baseline",
                error_x=interval_bars(df["baseline"], df["baseline_low"], df["baseline_high"]),
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

    def _page_candidates(self) -> pd.DataFrame:
        """The candidates table as the page shows it: rates in percent, changes in points, rounded."""
        df = self.candidates()
        if df.empty:
            return df
        out = df.copy()
        for col in ("baseline", "after"):
            if col in out:
                out[col] = out[col].map(pct)
        if "change" in out:
            out["change"] = [
                f"{_points(m)} ({_points(lo)} to {_points(hi)})"
                for m, lo, hi in zip(df["change"], df["change_low"], df["change_high"], strict=True)
            ]
            out = out.drop(columns=["change_low", "change_high"])
        for col in ("imbalance", "baseline_imbalance"):
            out[col] = out[col].map(lambda x: f"{100 * x:.1f}")
        return out.rename(
            columns={
                "change": "paired change, points (its 95% CI)",
                "imbalance": "imbalance, points",
                "baseline_imbalance": "official cards' imbalance, points",
            }
        )

    def _page_trials(self) -> pd.DataFrame:
        df = self.trials()
        if not df.empty:
            df["imbalance"] = df["imbalance"].map(lambda x: "" if x != x else f"{100 * x:.1f}")
        return df.rename(columns={"imbalance": "imbalance, points"})

    def page(self) -> str:
        r = self.record
        cands = self._page_candidates()
        table = (
            f'<div class="scroll">{plain_table(cands, "candidates")}</div>'
            if not cands.empty
            else '<p id="candidates">No candidate proposed.</p>'
        )
        notes = "".join(
            f'<p class="warn rule-note">candidate {c["rank"]}: {html.escape(n)}</p>'
            for c in r["candidates"]
            for n in c.get("rule_notes", [])
        )
        rejected = "".join(
            f"<li>{html.escape('; '.join(change_text(x) for x in c['changes']))}: {html.escape(c['why'])}</li>"
            for c in r.get("rejected", [])
        )
        body = (
            f"<section><h2>Proposed candidates (fresh seeds)</h2>{table}{notes}"
            + (f"<h3>Not proposed</h3><ul>{rejected}</ul>" if rejected else "")
            + "</section>\n"
            f"<section>{fig_html(self._fig_rates(), 'rates')}</section>\n"
            f"<section>{fig_html(self._fig_trials(), 'trials')}</section>\n"
            f'<section><h2>Trials</h2><div class="scroll">{plain_table(self._page_trials(), "trials-table")}'
            "</div></section>"
        )
        target = html.escape(str(r.get("target") or "every protocol into the band"))
        header = (
            f'\n<p class="answer"><b>{html.escape(self.answer())}</b></p>'
            f"\n<p>Target: {target}; {len(r['trials'])} trials, {r.get('search_games', 0):,} search games; "
            f"pool {html.escape(str(r.get('pool_hash', '')))}; baseline imbalance "
            f"{100 * r['baseline']['imbalance']:.1f} points.</p>{as_html(self.provenance)}"
        )
        return render_page(" tune", "protolab balance search", self.run_id, header, body)

    def to_json(self) -> str:
        if self.table:
            return json.dumps({self.table: self._table(self.table).to_dict("records")}, indent=1, default=str)
        keep = (
            "target",
            "answer",
            "name",
            "baseline",
            "candidates",
            "rejected",
            "warnings",
            "search_games",
            "seconds",
            "pool_hash",
            "provenance",
        )
        return json.dumps({k: self.record.get(k) for k in keep}, indent=1, default=str)

    def table_csv(self, name: str | None = None) -> str:
        return csv_header(self.provenance) + self._table(name or self.DEFAULT_TABLE).to_csv(index=False)

    def write_csv(self, out_dir: str | Path) -> list[Path]:
        return write_tables({name: self.table_csv(name) for name in TABLES}, out_dir)
