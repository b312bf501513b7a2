"""The one screen a dashboard opens on: the verdicts (every flagged protocol and card, with its
interval, games and adjusted p, strongest evidence first), the run's key numbers, and what produced
them (strategies per seat, sets, variant files, pool hash, seed, games: analysis/runs/provenance.py).
The full flag table follows below it, in the same view; a verdict links to its protocol's row in
the protocols view or to its card's page in the cards view."""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from analysis.pages.cells import pct
from analysis.pages.shell import filter_attrs
from analysis.runs.provenance import fields
from analysis.studies.balance.report import Report, against
from analysis.studies.balance.rule_note import notes_html

SHOWN = 12  # verdicts on the first screen; the rest are in the flag table below


def _anchor(kind: str, name: str) -> str:
    return kind + "-" + "-".join("".join(ch if ch.isalnum() else " " for ch in name).split())


def card_anchor(card: str) -> str:
    """The in-page id of a card's page: `card-Fire-1` (letters, digits and dashes only)."""
    return _anchor("card", card)


def protocol_anchor(protocol: str) -> str:
    """The in-page id of a protocol's row in the protocols view: `protocol-Fire`."""
    return _anchor("protocol", protocol)


def ranked_flags(flags: pd.DataFrame) -> pd.DataFrame:
    """The flagged rows, strongest evidence first (smallest adjusted p, then the larger distance
    from 50%): a finding from a handful of games does not lead."""
    f = flags[flags["flagged"]]
    return f.assign(_gap=-(f["win_rate"] - 0.5).abs()).sort_values(["p_adjusted", "_gap"]).drop(columns="_gap")


def _verdict(x: pd.Series, cards: set[str]) -> str:
    name = str(x["name"])
    if x["kind"] == "card" and name in cards:
        title = f'<a href="#{card_anchor(name)}">{html.escape(name)}</a>'
    else:
        title = f'<a href="#{protocol_anchor(name)}" title="its row in Protocols">{html.escape(name)}</a>'
    protocol = str(x["protocol"]) if x["kind"] == "card" and isinstance(x.get("protocol"), str) else name
    arrow = "\u25b2" if x["direction"] == "above" else "\u25bc"
    ci = f"95% CI {pct(x['win_rate_low'], '')}-{pct(x['win_rate_high'], '')} · {int(x['games']):,} games"
    return (
        f'<div class="verdict {x["direction"]}"{filter_attrs(protocol, name)} '
        f'title="{html.escape(str(x["metric"]))}"><b>{title}</b> <span class="tag">{x["kind"]} {arrow}</span><br>'
        f'<span class="rate">{pct(x["win_rate"], "")}</span> <span class="ci">{ci}</span><br>'
        f'<span class="why">{x["direction"]} {html.escape(against(x))}; adj. p '
        f"{x['p_adjusted']:.2g}</span></div>"
    )


def verdicts_html(flags: pd.DataFrame, cards: set[str], statement: str) -> str:
    """The flagged rows as a grid of verdicts (at most SHOWN), or the line saying none is flagged."""
    f = ranked_flags(flags)
    if f.empty:
        return f'<p class="ok">Nothing flagged. <span class="muted">{html.escape(statement)}.</span></p>'
    kinds = f["kind"].value_counts()
    head = (
        f"<p><b>{len(f)} flagged</b>: {int(kinds.get('protocol', 0))} protocols, {int(kinds.get('card', 0))} "
        f'cards, strongest evidence first. <span class="muted">{html.escape(statement)}.</span></p>'
    )
    more = (
        f'<p class="muted">{len(f) - SHOWN} more in <a href="#flags">Balance flags</a>.</p>' if len(f) > SHOWN else ""
    )
    grid = "".join(_verdict(x, cards) for _, x in f.head(SHOWN).iterrows())
    return f'{head}<div class="verdicts">{grid}</div>{more}'


def produced_by_html(blocks: list[dict[str, Any]]) -> str:
    """Each run's provenance as a compact list of labelled facts."""
    return "".join(
        '<dl class="prov">'
        + "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in fields(b))
        + "</dl>"
        for b in blocks
    )


def facts_html(o: pd.Series) -> str:
    """The run's key numbers: games, draws, the first player's edge, game length."""
    items = [
        (f"{int(o['games']):,}", "games"),
        (f"{int(o['draws']):,}", "draws"),
        (
            pct(o["first_player_win_rate"], ""),
            f"first player wins (95% CI {pct(o['first_player_win_rate_low'], '')}-"
            f"{pct(o['first_player_win_rate_high'], '')})",
        ),
        (f"{o['mean_turns']:.1f}", f"turns on average (median {o['median_turns']:.0f})"),
    ]
    return (
        '<div class="facts">'
        + "".join(f"<div><b>{html.escape(v)}</b> {html.escape(t)}</div>" for v, t in items)
        + "</div>"
    )


def summary_html(r: Report, warnings: str, cards: set[str]) -> str:
    """The summary section: verdicts, key numbers, warnings and provenance, in one screen."""
    f = r.tables["balance_flags"]
    statement = str(f.attrs.get("statement", r.meta.get("flags_statement", "")))
    return (
        f'<section id="summary"><h2>Summary</h2>{verdicts_html(f, cards, statement)}'
        f"{notes_html(r.meta.get('rule_notes'))}{warnings}"
        f'<div class="about"><div>{facts_html(r.tables["overview"].iloc[0])}</div>'
        '<details open><summary class="muted">Produced by</summary>'
        f"{produced_by_html(r.meta.get('provenance') or [])}</details></div></section>"
    )
