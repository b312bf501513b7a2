"""Trio and per-matchup tables: one DuckDB query each, equal to a plain count over the rows, shown as
top and bottom in the terminal (with a pointer to the rest) and whole in the dashboard."""

from __future__ import annotations

import csv
import io
from collections import Counter

import pytest
from fixtures_analysis.round_robin import round_robin_rows
from fixtures_analysis.synth import write_run

from analysis.runs.open import open_runs
from analysis.studies.balance import queries as Q
from analysis.studies.balance.dashboard import render
from analysis.studies.balance.report import build_report, print_report
from protolab.cli import main
from sim.stats import wilson

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)


@pytest.fixture(scope="module")
def rr(tmp_path_factory):
    rows = round_robin_rows()
    run_dir = write_run(tmp_path_factory.mktemp("rr") / "run", rows, shard_games=200)
    runs = open_runs(run_dir)
    yield rows, runs, run_dir
    runs.close()


def label(row: dict, seat: int) -> str:
    return ", ".join(sorted(row[f"seat{seat}_protocol_{p}"] for p in ("left", "middle", "right")))


def test_trio_win_rates_equal_a_plain_count(rr):
    rows, runs, _ = rr
    games, wins, draws = Counter(), Counter(), Counter()
    for r in rows:
        for seat in (0, 1):
            t = label(r, seat)
            if r["winner"] < 0:
                draws[t] += 1
            else:
                games[t] += 1
                wins[t] += r["winner"] == seat
    tw = Q.trio_win_rates(runs)
    assert len(tw) == 56 and list(tw["win_rate"]) == sorted(tw["win_rate"], reverse=True)
    for r in tw.itertuples():
        assert (r.games, r.wins, r.draws) == (games[r.trio], wins[r.trio], draws[r.trio])
        assert (r.win_rate_low, r.win_rate_high) == pytest.approx(wilson(wins[r.trio], games[r.trio]))


def test_trio_matchups_and_first_player_per_matchup_equal_a_plain_count(rr):
    rows, runs, _ = rr
    pair_games, pair_wins, pair_first = Counter(), Counter(), Counter()
    m_games, m_first, m_pairs = Counter(), Counter(), {}
    for r in rows:
        if r["winner"] < 0:
            continue
        t0, t1 = label(r, 0), label(r, 1)
        key = (min(t0, t1), max(t0, t1))
        pair_games[key] += 1
        pair_wins[key] += r["winner"] == (0 if t0 <= t1 else 1)
        pair_first[key] += r["winner"] == r["first_player"]
        m = str(r["matchup"])
        m_games[m] += 1
        m_first[m] += r["winner"] == r["first_player"]
        m_pairs.setdefault(m, set()).add((t0, t1))
    tm = Q.trio_matchups(runs)
    assert len(tm) == len(pair_games) == 280
    for r in tm.itertuples():
        key = (r.trio_a, r.trio_b)
        assert (r.games, r.wins, r.first_wins) == (pair_games[key], pair_wins[key], pair_first[key])
    fp = Q.first_player(runs)
    assert fp.iloc[0]["matchup"] == "all" and fp.iloc[0]["games"] == sum(m_games.values())
    assert list(fp["matchup"][1:]) == sorted(m_games, key=int)  # numeric order
    for r in fp.iloc[1:].itertuples():
        assert (r.games, r.first_wins) == (m_games[r.matchup], m_first[r.matchup])
        pairs = m_pairs[r.matchup]
        unordered = {tuple(sorted(x)) for x in pairs}
        want = (
            " vs ".join(next(iter(pairs)))
            if len(pairs) == 1
            else " vs ".join(next(iter(unordered))) + " (seats swapped)"
            if len(unordered) == 1
            else f"drafted ({len(unordered)} trio pairs)"
        )
        assert r.trios == want
        assert (r.win_rate_low, r.win_rate_high) == pytest.approx(wilson(m_first[r.matchup], m_games[r.matchup]))


def test_text_report_shows_top_and_bottom_with_a_pointer(rr):
    from rich.console import Console

    _, runs, run_dir = rr
    rep = build_report(runs)
    console = Console(file=io.StringIO(), width=200)
    print_report(rep, console)
    text = console.file.getvalue()
    tw = rep.tables["trio_win_rates"]
    best = text.index("Trio win rate (decided games, either seat): best 10")
    worst = text.index("Trio win rate: worst 10")
    assert tw.iloc[0]["trio"] in text[best:worst] and tw.iloc[-1]["trio"] in text[worst:]
    assert tw.iloc[30]["trio"] not in text[best:]  # the middle is left out ...
    flat = " ".join(text.split())  # captions wrap
    assert f"20 of 56 trios shown; all: protolab report {run_dir} --format csv --table trio_win_rates" in flat
    assert "(the 10 highest and lowest)" in text  # ... and of the 280 matchups
    assert f"20 of 280 matchups shown; all: protolab report {run_dir} --format csv --table first_player" in flat
    shown = text[text.index("First-player win rate per matchup") : text.index("Trio win rate (decided")]
    assert shown.count(" vs ") == 20 and "(seats swapped)" in shown


def test_every_trio_is_in_the_csv_the_pointer_names(rr, capsys):
    _, _, run_dir = rr
    assert main(["report", str(run_dir), "--format", "csv", "--table", "trio_win_rates"]) == 0
    got = list(csv.DictReader(x for x in io.StringIO(capsys.readouterr().out) if not x.startswith("#")))
    assert len(got) == 56
    assert {"trio", "games", "wins", "draws", "win_rate", "win_rate_low", "win_rate_high"} <= set(got[0])


def test_dashboard_has_a_sortable_table_of_every_trio(rr):
    _, runs, _ = rr
    page = render(build_report(runs))
    start = page.index('<table class="sortable" id="trios">')
    table = page[start : page.index("</table>", start)]
    assert table.count("<tr") == 57  # header + 56 trios
    assert "Trio win rate: 56 trios" in page
