"""A/B runs (a spec with `[[arms]]`): never pooled silently. `report` shows one section per arm,
`dashboard` (and `protolab run` at the end of an A/B run) writes the A/B page: each variant arm
against the first arm, a forest plot of the per-protocol changes with their paired intervals, and
for each card the variant changed how the bots used it (face-up, face-down, never played) and its
win rate when played, side by side for the two arms."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from analysis.pages.cells import pct, pts
from analysis.pages.shell import fig_html, filter_bar, interval_bars, layout, render_page, table_html, warnings_html
from analysis.runs.card_texts import card_texts
from analysis.runs.open import Runs, arm_of, open_runs, split_arm
from analysis.runs.provenance import as_html, of_runs
from analysis.studies.ab.compare import Comparison, compare_runs, print_comparison, shown_rows
from analysis.studies.ab.ranking import ranking_html
from analysis.studies.ab.stopped import apply_stop, describe, stop_record
from analysis.studies.balance import queries
from analysis.studies.balance.report import Report, print_report, records, to_json, write_csv
from analysis.studies.balance.rule_note import notes_html

OpenFn = Callable[[str], Runs]


# -- report, one section per arm -------------------------------------------------------------------


def label_arm(report: Report, path: str) -> Report:
    """Name the arm in the report's run ids, so every header says which arm it is."""
    _, arm = split_arm(path)
    report.meta["arm"] = arm
    report.meta["run_ids"] = [f"{r}#{arm}" for r in report.meta["run_ids"]]
    return report


def arms_json(reports: list[Report]) -> str:
    """One JSON object: {"meta": {"arms": [...]}, "arms": {arm: {"meta", "tables"}}}."""
    return json.dumps(
        {
            "meta": {"runs": reports[0].meta["runs"], "arms": [r.meta["arm"] for r in reports]},
            "arms": {r.meta["arm"]: json.loads(to_json(r)) for r in reports},
        },
        indent=1,
        default=str,
    )


def arms_csv(reports: list[Report], table: str) -> pd.DataFrame:
    """One table of every arm, with the arm as its first column."""
    return pd.concat(
        [r.tables[table].assign(arm=r.meta["arm"])[["arm", *r.tables[table].columns]] for r in reports],
        ignore_index=True,
    )


def write_arms_csv(reports: list[Report], out_dir: str | Path) -> list[Path]:
    """Every table of every arm as OUT_DIR/ARM/NAME.csv."""

    return [f for r in reports for f in write_csv(r, Path(out_dir) / r.meta["arm"])]


def print_arm_reports(reports: list[Report], console) -> None:
    arms = [r.meta["arm"] for r in reports]
    console.print(
        f"[bold]An A/B run with {len(arms)} arms ({', '.join(arms)}): one report per arm, never pooled. "
        f"protolab compare RUN#{arms[0]} RUN#{arms[-1]} compares two arms.[/bold]"
    )
    for r in reports:
        console.rule(f"arm {r.meta['arm']}")
        print_report(r, console)


# -- the A/B comparisons ---------------------------------------------------------------------------


@dataclass
class ABResult:
    """An A/B run's arms (their overview rows) and each variant arm compared with the first arm."""

    run: str
    run_id: str
    arms: list[str]
    overview: pd.DataFrame
    comparisons: list[tuple[str, Comparison]] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)  # one block per arm


def ab_compare(paths: list[str], method: str = "holm", alpha: float = 0.05, open_fn: OpenFn | None = None) -> ABResult:
    """Open each arm (`RUN#arm` paths, the first being the base) once and compare every other arm
    with the first."""
    opener = open_fn or (lambda p: open_runs([p]))
    runs = {arm_of(p): opener(p) for p in paths}
    arms = list(runs)
    overview = pd.concat([queries.overview(r).assign(arm=a) for a, r in runs.items()], ignore_index=True)
    comps = [(a, compare_runs(runs[arms[0]], runs[a], method, alpha)) for a in arms[1:]]
    stop = stop_record(runs[arms[0]].manifests[0])
    if stop is not None:  # a run that stopped once settled: its anytime intervals
        comps = [(a, apply_stop(c, stop, a)) for a, c in comps]
    run_id = runs[arms[0]].run_ids[0]
    blocks = [b for r in runs.values() for b in of_runs(r)]
    for r in runs.values():
        r.close()
    return ABResult(str(split_arm(paths[0])[0]), run_id, arms, overview, comps, blocks)


# -- the page --------------------------------------------------------------------------------------


def forest_rows(c: Comparison) -> pd.DataFrame:
    """The rows of the forest plot: the first player, then each protocol, by change."""
    t = c.table[c.table["kind"].isin(["game", "protocol"]) & c.table["change"].notna()]
    t = t.assign(_g=(t["kind"] == "game").astype(int)).sort_values(["_g", "change"])
    return t.drop(columns="_g").reset_index(drop=True)


def _unpaired_bars(t: pd.DataFrame, y: list[str]) -> go.Scatter:
    """The unpaired 95% interval of each row's difference of rates, drawn faintly beside the paired one."""
    return go.Scatter(
        x=(t["rate_variant"] - t["rate_base"]) * 100,  # the difference of rates it is an interval of
        y=y,
        mode="markers",
        name="unpaired 95% CI (for comparison)",
        marker={"size": 1, "color": "rgba(0,0,0,0)"},
        hoverinfo="skip",
        error_x={
            "type": "data",
            "symmetric": False,
            "color": "#bbb",
            "thickness": 6,
            "width": 0,
            "array": (t["unpaired_high"] - t["rate_variant"] + t["rate_base"]) * 100,
            "arrayminus": (t["rate_variant"] - t["rate_base"] - t["unpaired_low"]) * 100,
        },
    )


def fig_forest(c: Comparison, base: str, variant: str) -> go.Figure:
    """Per protocol (and the first player): the change in win rate, variant minus base, with its 95%
    interval (paired when the arms share seeds); the unpaired interval drawn faintly beside it."""
    t = forest_rows(c)
    y = [("first player" if k == "game" else n) for k, n in zip(t["kind"], t["name"], strict=True)]
    colour = [
        "#a01818" if s and d > 0 else "#1a4fa0" if s else "#444"
        for s, d in zip(t["significant"].fillna(False), t["change"], strict=True)
    ]
    hover = [
        f"{n}: {pct(r.rate_base, '')} -> {pct(r.rate_variant, '')}, {pts(r.change, '')} points "
        f"({r.design} 95% interval {pts(r.change_low, '')} to {pts(r.change_high, '')}); unpaired CI of the "
        f"rates' difference {pts(r.unpaired_low, '')} to {pts(r.unpaired_high, '')}; adjusted p = {r.p_adjusted:.2g}; "
        f"significant ({r.significant_by}): {'yes' if r.significant else 'no'}; "
        f"{r.games_base:,} vs {r.games_variant:,} games"
        for n, r in zip(y, t.itertuples(), strict=True)
    ]
    fig = go.Figure()
    fig.add_vline(x=0, line={"color": "#999", "dash": "dot"})
    if c.design.paired:
        fig.add_trace(_unpaired_bars(t, y))
    fig.add_trace(
        go.Scatter(
            x=t["change"] * 100,
            y=y,
            mode="markers",
            hovertext=hover,
            hoverinfo="text",
            name=f"change, 95% CI ({'paired by seed' if c.design.paired else 'unpaired'})",
            marker={"size": 10, "color": colour},
            error_x={
                "type": "data",
                "symmetric": False,
                "color": "#222",
                "array": (t["change_high"] - t["change"]) * 100,
                "arrayminus": (t["change"] - t["change_low"]) * 100,
            },
        )
    )
    return layout(
        fig,
        f"Change in win rate, {variant} minus {base} (points; red/blue: significant after correction)",
        height=max(360, 24 * len(t) + 140),
        xaxis={"title": "change, points", "zeroline": False},
    )


def fig_card_use(c: Comparison, base: str, variant: str) -> go.Figure | None:
    """Each changed card's play rates (face-up, face-down, never played) for the two arms, side by side."""
    u = c.cards
    if u.empty:
        return None
    fig = go.Figure()
    kinds = (
        ("up_rate", "played face-up", "#2ca02c"),
        ("down_rate", "played face-down", "#9467bd"),
        ("never_rate", "never played", "#7f7f7f"),
    )
    for col, name, colour in kinds:
        x = [[card for card in u["card"] for _ in (0, 1)], [arm for _ in u["card"] for arm in (base, variant)]]
        v = [val for _, r in u.iterrows() for val in (r[f"{col}_base"], r[f"{col}_variant"])]
        fig.add_trace(
            go.Bar(x=x, y=v, name=name, marker={"color": colour}, text=[pct(a, "") for a in v], textposition="outside")
        )
    return layout(
        fig,
        "Changed cards: share of their deck's seat-games played face-up, face-down, never",
        barmode="group",
        yaxis={"tickformat": ".0%", "range": [0, 1.1]},
        height=420,
    )


def fig_card_wr(c: Comparison, base: str, variant: str) -> go.Figure | None:
    """Each changed card's win rate when played face-up (95% Wilson interval) for the two arms."""
    u = c.cards
    if u.empty:
        return None
    fig = go.Figure()
    fig.add_hline(y=0.5, line={"color": "#999", "dash": "dot"})
    for side, arm, colour in (("base", base, "#1f77b4"), ("variant", variant, "#ff7f0e")):
        x = [list(u["card"]), [arm] * len(u)]  # one category per (card, arm): side by side
        fig.add_trace(
            go.Scatter(
                x=x,
                y=u[f"up_wr_{side}"],
                mode="markers",
                name=f"{arm}: WR face-up",
                marker={"size": 11, "color": colour},
                error_y=interval_bars(u[f"up_wr_{side}"], u[f"up_wr_low_{side}"], u[f"up_wr_high_{side}"]),
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=u[f"never_wr_{side}"],
                mode="markers",
                name=f"{arm}: WR never played",
                marker={"size": 8, "symbol": "x", "color": colour},
            )
        )
    return layout(
        fig,
        "Changed cards: win rate when played face-up (95% CI) and when never played",
        yaxis={"tickformat": ".0%", "title": "win rate"},
        height=380,
    )


def _rows_table(c: Comparison, i: int) -> str:
    shown = shown_rows(c)
    t = shown.assign(saved=[("" if pd.isna(v) else f"{v:.1f}x") for v in shown["variance_ratio"]])
    cols = [
        ("name", "name", "text"),
        ("kind", "kind", "text"),
        ("base", "rate_base", "pct"),
        ("games", "games_base", "int"),
        ("variant", "rate_variant", "pct"),
        ("games ", "games_variant", "int"),
        ("change, points (95% CI)", "change", "diff"),
        ("design", "design", "text"),
        ("variance saved", "saved", "text"),
        ("adj. p", "p_adjusted", "text"),
        ("significant", "significant_text", "text"),
    ]
    t["p_adjusted"] = [("" if pd.isna(p) else f"{p:.2g}") for p in t["p_adjusted"]]
    t["significant_text"] = [
        f"yes ({by})" if s is True or s == 1 else ""
        for s, by in zip(t["significant"], t["significant_by"], strict=True)
    ]
    t["_p"] = t["name"].where(t["kind"] == "protocol", "")
    return table_html(t, cols, f"rows-{i}", ("_p", None))


def _arm_columns(label: str, key: str, kind: str, base: str, variant: str) -> list[tuple[str, str, str]]:
    """The table columns of one figure in each arm: `label base` (column key_base), then `label variant`."""
    return [(f"{label} {base}", f"{key}_base", kind), (f"{label} {variant}", f"{key}_variant", kind)]


def _cards_table(c: Comparison, base: str, variant: str, i: int) -> str:
    if c.cards.empty:
        why = "; ".join(c.meta.get("notes", [])) or "the arms use the same card files, or the run has no events"
        return f"<p class='muted'>No changed cards to show ({html.escape(why)}).</p>"
    cols = [
        ("card", "card", "text"),
        *_arm_columns("deck games", "deck_games", "int", base, variant),
        *_arm_columns("face-up", "up_rate", "pct", base, variant),
        ("face-up change, points (95% CI)", "up_rate_change", "diff"),
        *_arm_columns("face-down", "down_rate", "pct", base, variant),
        *_arm_columns("never", "never_rate", "pct", base, variant),
        *_arm_columns("WR face-up", "up_wr", "pct", base, variant),
        ("WR face-up change, points (95% CI)", "up_wr_change", "diff"),
        *_arm_columns("WR played", "played_wr", "pct", base, variant),
        *_arm_columns("WR never", "never_wr", "pct", base, variant),
    ]
    return f'<div class="scroll">{table_html(c.cards, cols, f"changed-cards-{i}")}</div>'


def _section(i: int, base: str, variant: str, c: Comparison) -> str:
    figs = [
        (f"forest-{i}", fig_forest(c, base, variant)),
        (f"card-use-{i}", fig_card_use(c, base, variant)),
        (f"card-wr-{i}", fig_card_wr(c, base, variant)),
    ]
    charts = "".join(fig_html(f, "chart-" + name) for name, f in figs if f is not None)
    summary = "".join(f"<li>{html.escape(s.removeprefix('- '))}</li>" for s in c.summary)
    changed = ", ".join(c.meta.get("changed_cards", [])) or "none found"
    return f"""<section id="ab-{i}"><h2>{html.escape(variant)} vs {html.escape(base)}</h2>
<ul class="summary">{summary}</ul>{notes_html(c.meta.get("rule_notes"))}
<p class="muted">Changed cards (from the arms' card files): {html.escape(changed)}.</p>
{charts}
<p class="muted">Play rates are shares of the decided seat-games whose deck holds the card (a seat-game in which
it was played both ways counts as face-up and as face-down). A change in win rate when played face-up can be a
change in when the bots play it: read it beside the play rates.</p>
<h2>Changed cards, side by side</h2>{_cards_table(c, base, variant, i)}
<h2>Every rate compared (click a header to sort)</h2><div class="scroll">{_rows_table(c, i)}</div></section>"""


def _overview_html(ab: ABResult) -> str:
    o = ab.overview
    rows = "".join(
        f"<tr><td>{html.escape(str(r.arm))}</td><td class='n'>{r.games:,}</td><td class='n'>{r.decided:,}"
        f"</td><td class='n'>{r.draws:,}</td><td class='n'>{pct(r.first_player_win_rate, '')}</td>"
        f"<td class='n'>{r.mean_turns:.1f}</td></tr>"
        for r in o.itertuples()
    )
    return (
        "<table class='sortable'><thead><tr><th>arm</th><th>games</th><th>decided</th><th>draws</th>"
        f"<th>first player wins</th><th>mean turns</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def render_ab(ab: ABResult) -> str:
    """The A/B page as one HTML string (plotly.js inline: it works with no network)."""
    sections = "".join(_section(i, ab.arms[0], v, c) for i, (v, c) in enumerate(ab.comparisons))
    design = ab.comparisons[0][1].design.how if ab.comparisons else ""
    warnings = dict.fromkeys(w for _, c in ab.comparisons for w in c.meta.get("warnings", []))
    stop = next((c.meta["stop"] for _, c in ab.comparisons if "stop" in c.meta), None)
    stopped = f"<p><b>Sequential run</b>: {html.escape(describe(stop))}.</p>" if stop else ""
    header = f"""{stopped}
<p>Each arm against {html.escape(ab.arms[0])}; {html.escape(design)}. One arm's full dashboard: protolab dashboard
{html.escape(ab.run)}#ARM</p>{as_html(ab.provenance)}"""
    body = f"""<section id="arms"><h2>Arms</h2>{_overview_html(ab)}</section>
{warnings_html(list(warnings))}
{ranking_html(ab.comparisons, ab.arms[0])}
{sections}"""
    protocols = sorted({str(n) for _, c in ab.comparisons for n in c.table.loc[c.table["kind"] == "protocol", "name"]})
    sets = _protocol_sets(ab.provenance[0] if ab.provenance else {}, protocols)
    links = [("arms", "Arms"), ("ranking", "Ranking")] + [(f"ab-{i}", v) for i, (v, _) in enumerate(ab.comparisons)]
    return render_page(
        " A/B",
        "protolab A/B dashboard",
        f"{ab.run_id}: A/B, {len(ab.arms)} arms",
        header,
        body,
        css=".summary li{margin:3px 0}",
        nav=filter_bar(sets, None, links),
    )


def _protocol_sets(block: dict[str, Any], protocols: list[str]) -> dict[str, str]:
    """protocol -> its set in the base arm's pool (empty sets where the pool cannot be rebuilt)."""
    texts, _ = card_texts(block) if block else ({}, [])
    sets = {t.protocol: t.set for t in texts.values()}
    return {p: sets.get(p, "") for p in protocols}


def print_ab(ab: ABResult, console, run_dir: Any = None) -> None:
    """Each comparison in the terminal, with the command that reproduces it."""

    where = run_dir if run_dir is not None else ab.run
    for variant, c in ab.comparisons:
        console.print(
            f"\n[bold]{variant} vs {ab.arms[0]}[/bold] (protolab compare {where}#{ab.arms[0]} {where}#{variant})"
        )
        print_comparison(c, console)


def comparison_json(c: Comparison) -> dict[str, Any]:
    """A comparison as JSON-ready data: meta (design included), summary, every row, changed cards."""
    return {"meta": c.meta, "summary": c.summary, "table": records(c.table), "changed_cards": records(c.cards)}
