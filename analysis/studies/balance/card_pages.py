"""A page per card inside the dashboard's cards view (`#card-Fire-1`, shown when its link is
followed): the card's text in the run's pool, the official text beside it when a card file of the
run changed it, its card value when the run measured it, its play and win rates, its flag, and the
example games the dashboard carries for it and its protocol."""

from __future__ import annotations

import html

import pandas as pd

from analysis.pages.cells import pct, pts
from analysis.pages.shell import filter_attrs
from analysis.runs.card_texts import CardText
from analysis.studies.balance.dashboard_summary import card_anchor, protocol_anchor
from analysis.studies.balance.report import against

BOXES = ("top", "middle", "bottom")


def _face(title: str, value: int, text: tuple[str, str, str], changed: bool) -> str:
    boxes = "".join(
        f'<p><span class="box">{b}</span><br>{html.escape(t) or "<i>(blank)</i>"}</p>'
        for b, t in zip(BOXES, text, strict=True)
    )
    return (
        f'<div class="face{" changed" if changed else ""}"><b>{html.escape(title)}</b> '
        f'<span class="value">value {value}</span>{boxes}</div>'
    )


def texts_html(t: CardText | None) -> str:
    """The card's text, and the official text beside it when the run's card files changed it."""
    if t is None:
        return '<p class="muted">No text: the run\'s pool could not be rebuilt from its manifest.</p>'
    if t.official is None or t.official_value is None:
        return f'<div class="texts">{_face(f"{t.name} ({t.source})", t.value, t.text, False)}</div>'
    return (
        f'<div class="texts">{_face("official", t.official_value, t.official, False)}'
        f"{_face(f'this run: {t.source}', t.value, t.text, True)}</div>"
    )


def _stat(label: str, value: str) -> str:
    return f"<div><dt>{html.escape(label)}</dt><dd>{html.escape(value)}</dd></div>"


def impact_html(c: pd.Series | None) -> str:
    """Play rates and win rates from the card impact table (decided seat-games whose deck holds it)."""
    if c is None:
        return '<p class="muted">No play data: the run kept no card counts (events or cards tables).</p>'
    items = [
        ("deck games", f"{int(c['deck_games']):,}"),
        ("played face-up", pct(c["up_rate"])),
        ("played face-down", pct(c["down_rate"])),
        ("drawn", pct(c["drawn_rate"])),
        (
            "WR face-up",
            f"{pct(c['up_wr'])} (95% CI {pct(c['up_wr_low'])}-{pct(c['up_wr_high'])}, {int(c['up']):,} games)",
        ),
        ("WR face-down", f"{pct(c['down_wr'])} ({int(c['down']):,} games)"),
        ("WR never played", f"{pct(c['never_wr'])} ({int(c['never']):,} games)"),
        ("face-up minus never, points", f"{pts(c['iwd'])} (95% CI {pts(c['iwd_low'])} to {pts(c['iwd_high'])})"),
    ]
    return '<dl class="stats">' + "".join(_stat(k, v) for k, v in items) + "</dl>"


def value_html(rows: pd.DataFrame) -> str:
    """The card's values from a card-value run (one row per restriction), if measured."""
    if rows.empty:
        return ""
    what = {"avoid": "never played", "noup": "never face-up"}
    items = [
        (
            f"value vs {what.get(r['restriction'], r['restriction'])}, points",
            f"{pts(r['value'])} (95% CI {pts(r['value_low'])} to {pts(r['value_high'])}; adj. p "
            f"{r['p_adjusted']:.2g}; {int(r['games']):,} games)",
        )
        for _, r in rows.iterrows()
    ]
    return '<h3>Card value (restricted play)</h3><dl class="stats">' + "".join(_stat(k, v) for k, v in items) + "</dl>"


def flag_html(f: pd.DataFrame) -> str:
    """The card's flag line and, below it, why it is or is not flagged (flags.reason); a card with no
    flag row says why it was not tested."""
    if f.empty:
        return (
            '<p class="flagline">not tested for a flag: the run has no card events, or the card or the other '
            "cards of its protocol were never played face up</p>"
        )
    x = f.iloc[0]
    state = f"flagged {x['direction']} {against(x)}" if x["flagged"] else "not flagged"
    why = f'<p class="flag-why muted">{html.escape(str(x["why"]))}</p>' if isinstance(x.get("why"), str) else ""
    return (
        f'<p class="flagline {x["direction"] if x["flagged"] else ""}">{html.escape(state)}: face-up win rate '
        f"{pct(x['win_rate'])} (95% CI {pct(x['win_rate_low'])}-{pct(x['win_rate_high'])}, "
        f"{int(x['games']):,} games), adjusted p {x['p_adjusted']:.2g}</p>{why}"
    )


GAMES_JS = """
document.querySelectorAll('.card-games').forEach(function (box) {
  var found = box.dataset.names.split('|').map(function (n) {
    var tr = Array.prototype.find.call(document.querySelectorAll('#example-games tr[data-name]'),
                                       function (r) { return r.dataset.name === n; });
    if (!tr) return '';
    return '<p>' + tr.cells[2].innerHTML + ': ' + tr.cells[3].innerHTML + '</p>';
  }).join('');
  box.innerHTML = found || '<p class="muted">No example games for this card or its protocol on this page ' +
    '(protolab dashboard RUN writes them; --serve draws any game).</p>';
});
"""


def card_page(name: str, protocol: str, parts: dict[str, str]) -> str:
    """One card's view; `parts` are its HTML pieces (text, flag, impact, value). Its example games
    are the rows of the page's example games section for the card and its protocol (GAMES_JS)."""
    games = f'<div class="card-games" data-names="{html.escape(name)}|{html.escape(protocol)}"></div>'
    return (
        f'<article class="card-page" id="{card_anchor(name)}"{filter_attrs(protocol, name)}>'
        '<a class="close" href="#_" title="close">\u00d7</a>'
        f'<h3>{html.escape(name)} <span class="muted"><a href="#{protocol_anchor(protocol)}">'
        f"{html.escape(protocol)} protocol</a> · "
        f'<a href="#" data-pick-protocol="{html.escape(protocol)}">show only {html.escape(protocol)}</a> · '
        f'<a href="#cards">card table</a></span></h3>{parts.get("flag", "")}{parts["text"]}'
        f"<h3>Play and win rates</h3>{parts['impact']}{parts.get('value', '')}<h3>Example games</h3>{games}"
        "</article>"
    )


def deck_index(names_by_protocol: dict[str, list[str]]) -> str:
    """Every card as a link, grouped by protocol: the card pages' table of contents."""
    rows = "".join(
        f"<div{filter_attrs(p)}><b>{html.escape(p)}</b> "
        + "".join(f'<a href="#{card_anchor(n)}">{html.escape(n.removeprefix(p).strip() or n)}</a>' for n in names)
        + "</div>"
        for p, names in names_by_protocol.items()
    )
    return f'<div class="deck">{rows}</div>'


def card_pages_html(
    texts: dict[str, CardText],
    impact: pd.DataFrame | None,
    value: pd.DataFrame | None,
    flags: pd.DataFrame,
    notes: list[str],
) -> str:
    """The card pages section: an index of every card, and one view per card (hidden until opened)."""
    impact = impact if impact is not None and not impact.empty else pd.DataFrame(columns=["card", "protocol"])
    value = value if value is not None and not value.empty else pd.DataFrame(columns=["card"])
    cards = {n: t.protocol for n, t in texts.items()}
    cards.update({str(r.card): str(r.protocol) for r in impact.itertuples() if r.card not in cards})
    if not cards:
        return ""
    by_card = impact.set_index("card") if len(impact) else None
    by_protocol: dict[str, list[str]] = {}
    pages = []
    for name, protocol in sorted(cards.items(), key=lambda kv: (kv[1], texts[kv[0]].value if kv[0] in texts else 0)):
        by_protocol.setdefault(protocol, []).append(name)
        row = by_card.loc[name] if by_card is not None and name in by_card.index else None
        pages.append(
            card_page(
                name,
                protocol,
                {
                    "text": texts_html(texts.get(name)),
                    "impact": impact_html(row),
                    "flag": flag_html(flags[(flags["kind"] == "card") & (flags["name"] == name)]),
                    "value": value_html(value[value["card"] == name]),
                },
            )
        )
    note = "".join(f'<p class="warn">{html.escape(n)}</p>' for n in notes)
    return (
        f'<section id="card-pages"><h2>Card pages</h2><p class="muted">Every card of the pool: open one for '
        f"its text (and the official text beside it when the run changed it), its play and win rates, its "
        f"card value when measured, and its example games.</p>{note}{deck_index(by_protocol)}{''.join(pages)}"
        f"<script>document.addEventListener('DOMContentLoaded', function () {{{GAMES_JS}}});</script></section>"
    )
