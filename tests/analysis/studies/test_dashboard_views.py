"""The dashboard as a few linked views (issue 52, item 6): verdict, protocols, cards, matchups and
games, one shown at a time in the one offline file. Every table, chart and section of the page as it
was (one long page) is in exactly one view; links go between views; a playtest's statement heads
every view; every figure each view writes lies inside its interval. In a real headless Chromium
(tests/fixtures_analysis/chromium.py): each view loads on its own from file:// with no console error
and no request out, and its links navigate."""

from __future__ import annotations

import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fixtures_analysis import intervals
from fixtures_analysis.chromium import launched
from fixtures_analysis.known import person_run, planted_run

from analysis.runs.open import open_runs
from analysis.studies.balance.dashboard import CHARTS, VIEWS, render
from analysis.studies.balance.report import build_report
from protolab.cli import main

VIEW_IDS = [v for v, _ in VIEWS]

# The one long page as it was (before the views), every section, table and chart in page order, as
# Inventory lists them for the planted run below; and where each is now: (its key, its view). A
# section without an id is known by its heading ("section:" a chart's, which has none); two ids were
# the names of two views and moved off them.
TODAY = [
    ("section#summary", "section#summary", "verdict"),
    ("section#flags", "section#flags", "verdict"),
    ("table#flag-table", "table#flag-table", "verdict"),
    ("section#protocols", "section:Protocols: win rate as part of a trio (click a header to sort)", "protocols"),
    ("table#protocol-table", "table#protocol-table", "protocols"),
    ("section:", "section:", "protocols"),
    ("div#chart-protocols", "div#chart-protocols", "protocols"),
    ("section:", "section:", "matchups"),
    ("div#chart-matchups", "div#chart-matchups", "matchups"),
    ("section:", "section:", "games"),
    ("div#chart-compile-curves", "div#chart-compile-curves", "games"),
    ("section:", "section:", "games"),
    ("div#chart-game-length", "div#chart-game-length", "games"),
    ("section#cards", "section#card-impact", "cards"),
    ("table#cards", "table#card-table", "cards"),
    ("section#card-pages", "section#card-pages", "cards"),
    ("section#trios", "section#trios", "matchups"),
    ("table#trios", "table#trios", "matchups"),
    ("section#metagame", "section#metagame", "matchups"),
    ("table#sortable", "table#sortable", "matchups"),  # the metagame's two tables
    ("table#sortable", "table#sortable", "matchups"),
    ("section#example-games", "section#example-games", "games"),
    ("table#examples", "table#examples", "games"),
]


class Inventory(HTMLParser):
    """Every section, table and chart of a page with the view it lies in ("" outside any view):
    a section by its id, else by its heading."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, str]] = []
        self.views: list[str] = []  # the views in page order
        self._divs: list[str | None] = []  # per open <div>: the view it opens, if it is one
        self._heading: int | None = None  # the found entry whose heading is being read

    @property
    def view(self) -> str:
        return next((v for v in reversed(self._divs) if v), "")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        ident = a.get("id") or ""
        if tag == "div":
            is_view = "view" in (a.get("class") or "").split()
            self._divs.append(ident if is_view else None)
            if is_view:
                self.views.append(ident)
            if ident.startswith("chart-"):
                self.found.append((f"div#{ident}", self.view))
        elif tag == "table":
            self.found.append((f"table#{ident or a.get('class')}", self.view))
        elif tag == "section":
            self.found.append((f"section#{ident}" if ident else "section:", self.view))
        elif tag == "h2" and self.found and self.found[-1][0] == "section:":
            self._heading = len(self.found) - 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._divs:
            self._divs.pop()
        elif tag == "h2":
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            key, view = self.found[self._heading]
            self.found[self._heading] = (key + data, view)


def inventory(page: str) -> Inventory:
    parser = Inventory()
    parser.feed(page)
    return parser


def view_html(page: str, view: str) -> str:
    """The HTML of one view (from its opening tag to the next view's, or to </main>)."""
    start = page.index(f'<div class="view" id="{view}"')
    ends = [i for i in (page.find('<div class="view" id="', start + 1), page.find("</main>", start)) if i > 0]
    return page[start : min(ends)]


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> Path:
    """A run of T1 against T2, T1 winning 150 of 200, seat 0 playing Fire 1 face up in each: its
    protocols are flagged, and it has card pages and example game rows."""
    return planted_run(tmp_path_factory.mktemp("views") / "run", 200, 150, "views", card=True)


@pytest.fixture(scope="module")
def page(planted, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("views-page") / "dashboard.html"
    assert main(["dashboard", str(planted), "--out", str(out), "--examples", "0"]) == 0
    return out


def test_every_table_chart_and_section_of_the_long_page_is_in_exactly_one_view(page):
    """The page holds what the long page held, no more and no fewer, each item in the view it
    belongs to; the charts this run has none of (compile rate per protocol, strategy ratings) and
    the sections it has none of (loop draws, card value) are placed by the same code, checked below."""
    inv = inventory(page.read_text(encoding="utf-8"))
    assert inv.views == VIEW_IDS
    assert [k for k, v in inv.found if v == ""] == []  # nothing outside the views
    assert sorted(inv.found) == sorted((now, view) for _, now, view in TODAY)
    every = {"protocols", "matchups", "compile-curves", "game-length", "compiles-by-protocol", "strategies"}
    assert set(CHARTS) == every
    assert CHARTS["compiles-by-protocol"] == "protocols" and CHARTS["strategies"] == "games"


def test_views_link_to_each_other(page):
    """A verdict names its protocol's row in the protocols view; a card, its page in the cards view;
    every in-page link names something on the page."""
    text = page.read_text(encoding="utf-8")
    verdict = view_html(text, "verdict")
    assert 'href="#protocol-Fire"' in verdict and 'href="#protocol-Hate"' in verdict
    assert '<tr id="protocol-Fire"' in view_html(text, "protocols")
    cards = view_html(text, "cards")
    assert 'href="#card-Fire-1"' in cards and 'id="card-Fire-1"' in cards
    ids = set(re.findall(r'\sid="([^"]+)"', text))
    targets = set(re.findall(r'href="#([^"]+)"', text)) - {"_"}
    assert targets and targets <= ids, targets - ids


def test_every_view_writes_each_figure_inside_its_interval(page):
    text = page.read_text(encoding="utf-8")
    counts = {}
    for view in VIEW_IDS:
        part = view_html(text, view)
        assert intervals.outside_page(part) == [], view
        counts[view] = sum(1 for _ in intervals.written(part))
    assert all(counts[v] > 0 for v in ("verdict", "protocols", "cards", "matchups")), counts


def test_a_one_game_playtest_dashboard_warns_nothing(tmp_path):
    """One game, left drawn: no matchup is decided, so the heatmap has no rate to centre on (it
    warned "All-NaN slice encountered")."""
    run = person_run(tmp_path / "one", ["human", "greedy"], games=1, winner=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        page = render(build_report(open_runs(run)))
    assert "A playtest: these 1 games were played by a person" in page and 'id="chart-matchups"' in page


# -- in a real headless Chromium ---------------------------------------------------------------------

browser = pytest.fixture(scope="module")(launched)

SHOWN_JS = """(() => ({
  shown: Array.from(document.querySelectorAll('main > .view')).filter(v => !v.hidden).map(v => v.id),
  visible: Array.from(document.querySelectorAll('main > .view')).filter(v => v.offsetHeight > 0).map(v => v.id),
  tab: (document.querySelector('#filters .toc a.on') || {}).textContent,
  top: window.scrollY,
}))()"""


def _load(browser, page: Path, fragment: str = "") -> None:
    """Load the file afresh at `fragment` (a query of its own: the same file at another fragment
    would be a navigation within the document, not a load)."""
    browser.open(f"{page.resolve().as_uri()}?{fragment}#{fragment}")


def _offline(browser) -> list[str]:
    return [u for u in browser.requests() if not u.startswith(("file:", "data:", "about:", "blob:"))]


@pytest.mark.parametrize("view", VIEW_IDS)
def test_each_view_loads_on_its_own_offline(page, browser, view):
    _load(browser, page, view)
    got = browser.evaluate(SHOWN_JS)
    label = dict(VIEWS)[view]
    assert got["shown"] == [view] and got["visible"] == [view] and got["tab"] == label
    charts = browser.evaluate(
        f"Array.from(document.getElementById('{view}').querySelectorAll('.js-plotly-plot'))"
        ".map(p => [p.id, p.data.reduce((n, t) => n + ((t.x || t.z || []).length), 0),"
        " p.querySelectorAll('g.trace, image').length, p.getBoundingClientRect().width])"
    )
    assert all((marks > 0 or points == 0) and width > 500 for _, points, marks, width in charts), charts
    assert browser.errors() == [] and _offline(browser) == []


def _click(browser, selector: str) -> None:
    browser.evaluate(f"document.querySelector({selector!r}).click()")
    browser.evaluate("new Promise(r => setTimeout(r, 100))")


def test_links_navigate_between_views(page, browser):
    browser.open(page.resolve().as_uri())
    assert browser.evaluate(SHOWN_JS)["shown"] == ["verdict"]
    _click(browser, '#verdict .verdict a[href="#protocol-Fire"]')
    assert browser.evaluate(SHOWN_JS)["shown"] == ["protocols"]
    row = browser.evaluate(
        "(() => { const r = document.getElementById('protocol-Fire'), b = r.getBoundingClientRect(); "
        "return {target: r.matches(':target'), seen: b.top >= 0 && b.bottom <= innerHeight}; })()"
    )
    assert row == {"target": True, "seen": True}
    _click(browser, '#filters .toc a[href="#cards"]')
    assert browser.evaluate(SHOWN_JS)["shown"] == ["cards"]
    _click(browser, '#card-table a[href="#card-Fire-1"]')
    assert browser.evaluate(SHOWN_JS)["shown"] == ["cards"]
    assert browser.evaluate("getComputedStyle(document.getElementById('card-Fire-1')).display") == "block"
    _click(browser, '#card-Fire-1 a[href="#protocol-Fire"]')
    assert browser.evaluate(SHOWN_JS)["shown"] == ["protocols"]
    browser.evaluate("history.back()")
    browser.evaluate("new Promise(r => setTimeout(r, 200))")
    assert browser.evaluate(SHOWN_JS)["shown"] == ["cards"]
    assert browser.errors() == [] and _offline(browser) == []


def test_a_playtests_statement_heads_every_view(tmp_path, browser):
    run = person_run(tmp_path / "pt", ["human", "greedy"])
    out = tmp_path / "pt.html"
    assert main(["dashboard", str(run), "--out", str(out), "--examples", "0"]) == 0
    _load(browser, out, "verdict")
    for view in VIEW_IDS:
        browser.evaluate(f"location.hash = '#{view}'")
        for scrolled in (0, 5000):
            browser.evaluate(f"window.scrollTo(0, {scrolled})")
            got = browser.evaluate(
                "(() => { const p = document.querySelector('header .played'), b = p.getBoundingClientRect(); "
                "return {text: p.textContent, top: b.top, height: b.height, "
                "view: document.querySelector('main > .view:not([hidden])').id}; })()"
            )
            assert got["view"] == view and got["text"].startswith("A playtest: these 40 games"), got
            assert got["height"] > 0 and 0 <= got["top"] < 80, (view, scrolled, got)
    assert browser.errors() == []


@pytest.fixture(scope="module")
def real_page(ab_run, tmp_path_factory) -> Path:
    """The dashboard of the shared A/B run's official arm (tests/conftest.py), carrying the board
    pages of its first 4 example games."""
    out = tmp_path_factory.mktemp("views-real") / "dashboard.html"
    assert main(["dashboard", f"{ab_run}#official", "--out", str(out), "--examples", "4"]) == 0
    return out


OPENED_JS = """(selector => new Promise(done => {
  window.open = url => { fetch(url).then(r => r.text()).then(t => done({url: String(url), page: t})); return null; };
  document.querySelector(selector).click();
}))"""


def test_a_game_id_opens_its_board_page_from_the_games_view_and_a_card_page(real_page, browser):
    _load(browser, real_page, "games")
    links = browser.evaluate("Array.from(document.querySelectorAll('#games a.open-board')).map(a => a.dataset.game)")
    assert len(set(links)) == 4
    first = browser.evaluate(OPENED_JS + "('#games a.open-board')")
    assert first["url"].startswith("blob:") and f": game {links[0]}</title>" in first["page"]
    card = browser.evaluate(
        "(() => { const a = document.querySelector('.card-page .card-games a.open-board'); "
        "return a && a.closest('.card-page').id; })()"
    )
    assert card is not None  # some card page shows a carried game of its card or protocol
    browser.evaluate(f"location.hash = '#{card}'")
    opened = browser.evaluate(OPENED_JS + f"('#{card} .card-games a.open-board')")
    assert (
        ": game " in opened["page"] and "board" in opened["page"] and browser.evaluate(SHOWN_JS)["shown"] == ["cards"]
    )
    assert browser.errors() == [] and _offline(browser) == []


@pytest.mark.parametrize(
    ("written", "outside"),
    [
        ('<td data-v="0.01">+1.0 (+2.0 to +3.0)</td>', 1),  # a card table's difference cell
        ('<td data-v="0.025">+2.5 (+2.0 to +3.0)</td>', 0),
        ("<p>+29.1 points against the other cards of Fire (95% CI +2.8 to +49.3)</p>", 0),
        ("<b>50.0%</b> first player wins (95% CI 51.0%-60.0%)", 1),
        ('<span class="rate">45.0%</span> <span class="ci">95% CI 40.0%-50.0% · 200 games</span>', 0),
        (
            "<table><tr><th>protocol</th><th>win rate</th><th>95% CI low</th><th>95% CI high</th></tr>"
            '<tr><td data-v="Fire">Fire</td><td data-v="0.7">70.0%</td><td data-v="0.6">60.0%</td>'
            '<td data-v="0.65">65.0%</td></tr></table>',
            1,
        ),
    ],
)
def test_the_page_walker_finds_a_figure_outside_its_interval_as_pages_write_it(written, outside):
    assert len(intervals.outside_page(written)) == outside and sum(1 for _ in intervals.written(written)) >= 1
