"""The dashboard in a real headless Chromium: it loads with no console errors and no network,
every chart has rendered data, the card table sorts, and a screenshot is kept in test-artifacts/;
the summary comes first, the filters act on every table, a card page shows its text (and the
official text beside a variant's), the A/B page ranks effects by evidence, and the metagame section
is there at any number of protocols."""

import random
import time
from pathlib import Path

import pytest
from fixtures_analysis.chromium import launched
from fixtures_analysis.synth import synth_run, write_run

from analysis.runs.open import open_runs
from analysis.studies.ab.arms import ab_compare, render_ab
from analysis.studies.balance.arms import arm_paths
from analysis.studies.balance.dashboard import TOP_TRIOS, render
from analysis.studies.balance.dashboard_summary import SHOWN, ranked_flags
from analysis.studies.balance.report import build_report

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts"

CHARTS_JS = """(() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => ({
  id: p.id,
  traces: (p.data || []).length,
  points: (p.calcdata || []).map(cd => cd.length && cd[0].z ? cd[0].z.length : cd.length),
  drawn: p.querySelectorAll('g.trace, g.hm image, g.heatmaplayer image').length,
  marks: p.querySelectorAll('g.trace path, g.trace .point, image').length
})))()"""


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    d = tmp_path_factory.mktemp("dash")
    run = synth_run(d / "run", games=20_000, shard_games=10_000, workers=1)
    out = d / "dashboard.html"
    out.write_text(render(build_report(open_runs(run))), encoding="utf-8")
    return out


browser = pytest.fixture(scope="module")(launched)


@pytest.mark.slow
def test_dashboard_renders_in_chromium(page, browser):
    browser.open(page.resolve().as_uri())
    browser.evaluate("new Promise(r => setTimeout(r, 500))")
    charts = browser.evaluate(CHARTS_JS)
    ids = {c["id"] for c in charts}
    assert {
        "chart-protocols",
        "chart-matchups",
        "chart-compile-curves",
        "chart-game-length",
        "chart-compiles-by-protocol",
        "chart-strategies",
    } <= ids
    for c in charts:
        assert c["traces"] > 0 and all(n > 0 for n in c["points"]), c
        assert c["drawn"] > 0 and c["marks"] > 0, c
    assert browser.evaluate("document.querySelectorAll('#card-table tbody tr').length") == 90
    assert browser.errors() == []
    outside = [u for u in browser.requests() if not u.startswith(("file:", "data:", "about:", "blob:"))]
    assert outside == []
    shot = browser.screenshot(ARTIFACTS / "dashboard.png")
    assert shot.stat().st_size > 50_000


def test_card_table_sorts_on_click(page, browser):
    browser.open(page.resolve().as_uri())
    col = browser.evaluate(
        "Array.from(document.querySelectorAll('#card-table th')).findIndex(h => h.textContent.startsWith('n face-up'))"
    )
    values = f"Array.from(document.querySelectorAll('#card-table tbody tr')).map(r => +r.cells[{col}].dataset.v)"
    browser.evaluate(f"document.querySelectorAll('#card-table th')[{col}].click()")
    asc = browser.evaluate(values)
    assert asc == sorted(asc)
    browser.evaluate(f"document.querySelectorAll('#card-table th')[{col}].click()")
    desc = browser.evaluate(values)
    assert desc == sorted(desc, reverse=True) and desc != asc
    assert browser.errors() == []


# -- the dashboard as a tool (issue 26, item 4) ------------------------------------------------------


def _select(browser, name: str, value: str) -> None:
    browser.evaluate(
        f"(() => {{ const s = document.querySelector('#filters [name={name}]'); s.value = {value!r}; "
        "s.dispatchEvent(new Event('change', {bubbles: true})); })()"
    )


def _shown(browser, table: str) -> list[str]:
    """The data-p of the rows of `table` the filters leave visible (in its view, which may not be
    the one shown: tests/analysis/studies/test_dashboard_views.py)."""
    return browser.evaluate(
        f"Array.from(document.querySelectorAll('#{table} tbody tr'))"
        ".filter(r => !r.hidden && !r.closest('tbody').hidden).map(r => r.dataset.p)"
    )


def test_the_summary_is_the_first_thing_on_the_page(page, browser):
    report = build_report(open_runs(page.parent / "run"), band=0.0)  # a band of 0: protocols are flagged
    flags = report.tables["balance_flags"]
    out = page.parent / "flagged.html"
    out.write_text(render(report), encoding="utf-8")
    browser.open(out.resolve().as_uri())
    first = browser.evaluate(
        "(() => { const s = document.querySelector('main > .view:not([hidden])').firstElementChild; "
        "return {id: s.id, top: s.getBoundingClientRect().top, "
        "verdicts: Array.from(s.querySelectorAll('.verdict b')).map(b => b.textContent), "
        "text: s.textContent}; })()"
    )
    assert first["id"] == "summary" and first["top"] < 200
    ranked = ranked_flags(flags)
    assert first["verdicts"] == [str(x) for x in ranked["name"].head(SHOWN)] and first["verdicts"]
    assert "95% CI" in first["text"] and "master seed" in first["text"] and "pool" in first["text"]
    assert browser.errors() == []


def test_a_protocol_filter_hides_other_protocols_rows_and_shows_them_again(page, browser):
    browser.open(page.resolve().as_uri())
    every = {t: len(_shown(browser, t)) for t in ("cards", "protocol-table", "trios")}
    _select(browser, "protocol", "Fire")
    assert _shown(browser, "cards") == ["Fire"] * 6 and _shown(browser, "protocol-table") == ["Fire"]
    trios = _shown(browser, "trios")
    assert trios and all("Fire" in p.split("|") for p in trios) and len(trios) < every["trios"]
    _select(browser, "flag", "any")  # flagged rows only, of Fire
    flagged = browser.evaluate("Object.keys(JSON.parse(document.getElementById('filter-data').textContent).flags)")
    assert all(r in flagged for r in _shown(browser, "protocol-table"))
    browser.evaluate("document.querySelector('#filters [name=reset]').click()")
    assert {t: len(_shown(browser, t)) for t in every} == every
    assert browser.errors() == []


@pytest.fixture(scope="module")
def variant_page(ab_run, tmp_path_factory):
    """The dashboard of the A/B run's variant arm (Fire 1 worth 3, from a card file)."""
    out = tmp_path_factory.mktemp("variant") / "dashboard.html"
    runs = open_runs(f"{ab_run}#fire1-worth-3")
    out.write_text(render(build_report(runs)), encoding="utf-8")
    return out


CARD_PAGE_JS = """(id => { const a = document.getElementById(id); return {shown: getComputedStyle(a).display !== 'none',
  faces: Array.from(a.querySelectorAll('.face')).map(f => ({changed: f.classList.contains('changed'),
                                                           text: f.textContent})),
  text: a.textContent}; })"""


def test_a_card_page_shows_its_text_and_the_variant_beside_the_official(variant_page, browser, pool):
    browser.open(variant_page.resolve().as_uri() + "#card-Fire-1")
    fire1 = browser.evaluate(CARD_PAGE_JS + "('card-Fire-1')")
    assert fire1["shown"] and [f["changed"] for f in fire1["faces"]] == [False, True]
    official, variant = (f["text"] for f in fire1["faces"])
    card = pool.card("Fire 1")
    assert "value 1" in official and "value 3" in variant and "fire1_worth_3.toml" in variant
    assert all(t in official and t in variant for t in (card.top, card.middle, card.bottom) if t)
    assert "WR face-up" in fire1["text"] and "deck games" in fire1["text"]
    fire2 = browser.evaluate(CARD_PAGE_JS + "('card-Fire-2')")
    assert not fire2["shown"]  # one card page at a time: the one linked to
    browser.evaluate("location.hash = '#card-Fire-2'")
    fire2 = browser.evaluate(CARD_PAGE_JS + "('card-Fire-2')")
    assert fire2["shown"] and len(fire2["faces"]) == 1 and pool.card("Fire 2").middle in fire2["text"]
    _select(browser, "set", "Main 2")
    sets = browser.evaluate("JSON.parse(document.getElementById('filter-data').textContent).sets")
    shown = _shown(browser, "protocol-table")
    assert shown and all(sets[p] == "Main 2" for p in shown) and len(shown) < len(sets)
    assert browser.errors() == []


def test_the_ab_page_ranks_every_arm_effect_by_evidence(ab_run, browser, tmp_path):
    out = tmp_path / "ab.html"
    out.write_text(render_ab(ab_compare(arm_paths([str(ab_run)]))), encoding="utf-8")
    browser.open(out.resolve().as_uri())
    col = browser.evaluate(
        "Array.from(document.querySelectorAll('#ab-ranking th')).findIndex(h => h.textContent.startsWith('evidence'))"
    )
    rows = browser.evaluate(
        f"Array.from(document.querySelectorAll('#ab-ranking tbody tr')).map(r => "
        f"[r.cells[0].textContent, r.cells[1].textContent, +r.cells[{col}].dataset.v])"
    )
    evidence = [e for _, _, e in rows]
    assert len(rows) > 10 and evidence == sorted(evidence, reverse=True) and evidence[0] > evidence[-1]
    assert {a for a, _, _ in rows} == {"fire1-worth-3"} and "first player" in {n for _, n, _ in rows}
    before = browser.evaluate(
        "!!(document.getElementById('ranking').compareDocumentPosition("
        "document.getElementById('ab-0')) & Node.DOCUMENT_POSITION_FOLLOWING)"
    )
    assert before and browser.errors() == []


def _many_protocols(n: int, games: int) -> list[dict]:
    """Random trio-vs-trio games among n synthetic protocols, the lower-numbered a little stronger."""
    rng = random.Random(7)
    names = [f"P{i:02d}" for i in range(n)]
    rows = []
    for g in range(games):
        six = rng.sample(names, 6)
        a, b = six[:3], six[3:]
        edge = sum(names.index(p) for p in b) - sum(names.index(p) for p in a) + rng.uniform(-20, 20)
        row = {"seed": g // 2, "winner": 0 if edge > 0 else 1}
        for s, trio in ((0, a), (1, b)):
            row.update({f"seat{s}_protocol_{p}": x for p, x in zip(("left", "middle", "right"), trio, strict=True)})
        rows.append(row)
    return rows


def test_the_metagame_section_appears_above_18_protocols(tmp_path, browser):
    run = write_run(tmp_path / "run", _many_protocols(20, 2000), shard_games=1000)
    out = tmp_path / "dashboard.html"
    t0 = time.perf_counter()
    out.write_text(render(build_report(open_runs(run))), encoding="utf-8")
    assert time.perf_counter() - t0 < 60
    browser.open(out.resolve().as_uri())
    meta = browser.evaluate(
        "(() => { const s = document.getElementById('metagame'); return {text: s.textContent, "
        "rows: Array.from(s.querySelectorAll('tbody tr')).map(r => r.cells[0].textContent)}; })()"
    )
    assert "20 protocols" in meta["text"] and "summarised" in meta["text"]
    assert "warning: the payoff model rests on" in meta["text"]  # 2,000 games of 387,600 trio pairs
    assert {f"P{i:02d}" for i in range(20)} <= set(meta["rows"])
    trios = [r for r in meta["rows"] if ", " in r]
    assert 0 < len(trios) <= TOP_TRIOS
    assert browser.errors() == []


def test_every_flag_row_and_card_page_says_why_and_matchup_cells_show_games(page, browser):
    """Every card page and every protocol row says why it is or is not flagged; each matchup cell
    shows its game count (the hover adds the interval)."""
    browser.open(page.resolve().as_uri())
    whys = browser.evaluate(
        "Array.from(document.querySelectorAll('article.card-page')).map(a => "
        "(a.querySelector('.flag-why') || a.querySelector('.flagline') || {textContent: ''}).textContent)"
    )
    assert len(whys) == 90 and all(w.startswith(("flagged", "not flagged", "not tested")) for w in whys), whys[:3]
    assert sum(w.startswith("not flagged: ") for w in whys) > 40
    rows = browser.evaluate(
        "Array.from(document.querySelectorAll('#protocol-table tbody tr')).map(r => r.lastElementChild.textContent)"
    )
    assert rows and all(w.startswith(("flagged: ", "not flagged: ")) for w in rows), rows[:3]
    cells = browser.evaluate("document.getElementById('chart-matchups').data[0].text.flat().filter(t => t)")
    hover = browser.evaluate("document.getElementById('chart-matchups').data[0].hovertext.flat()")
    games = [g for g in (h.rsplit(", ", 1)[1] for h in hover) if g.strip() != "games"]  # a cell with none: blank
    assert len(cells) == len(games) > 100 and all(c.endswith(g) for c, g in zip(cells, games, strict=True))
    assert browser.errors() == []
