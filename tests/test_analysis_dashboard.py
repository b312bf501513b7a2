"""The dashboard in a real headless Chromium: it loads with no console errors and no network,
every chart has rendered data, the card table sorts, and a screenshot is kept in test-artifacts/."""

from pathlib import Path

import pytest
from fixtures_analysis.chromium import launched
from fixtures_analysis.synth import synth_run

from analysis.dashboard import render
from analysis.open import open_runs
from analysis.report import build_report

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

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


def test_dashboard_renders_in_chromium(page, browser):
    browser.open(page.resolve().as_uri())
    browser.evaluate("new Promise(r => setTimeout(r, 500))")
    charts = browser.evaluate(CHARTS_JS)
    ids = {c["id"] for c in charts}
    assert {"chart-protocols", "chart-matchups", "chart-compile-curves", "chart-game-length",
            "chart-compiles-by-protocol", "chart-strategies"} <= ids
    for c in charts:
        assert c["traces"] > 0 and all(n > 0 for n in c["points"]), c
        assert c["drawn"] > 0 and c["marks"] > 0, c
    assert browser.evaluate("document.querySelectorAll('#cards tbody tr').length") == 90
    assert browser.errors() == []
    outside = [u for u in browser.requests() if not u.startswith(("file:", "data:", "about:", "blob:"))]
    assert outside == []
    shot = browser.screenshot(ARTIFACTS / "dashboard.png")
    assert shot.stat().st_size > 50_000


def test_card_table_sorts_on_click(page, browser):
    browser.open(page.resolve().as_uri())
    col = browser.evaluate("Array.from(document.querySelectorAll('#cards th')).findIndex("
                           "h => h.textContent.startsWith('n face-up'))")
    values = f"Array.from(document.querySelectorAll('#cards tbody tr')).map(r => +r.cells[{col}].dataset.v)"
    browser.evaluate(f"document.querySelectorAll('#cards th')[{col}].click()")
    asc = browser.evaluate(values)
    assert asc == sorted(asc)
    browser.evaluate(f"document.querySelectorAll('#cards th')[{col}].click()")
    desc = browser.evaluate(values)
    assert desc == sorted(desc, reverse=True) and desc != asc
    assert browser.errors() == []
