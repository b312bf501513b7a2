"""How figures look in terminal tables (analysis/pages/cells.py): one formatter per kind of figure, with a
blank where there is none (never `nan%` or `+nan`); wide tables stay readable: a 30 x 30 matchup matrix
in 120 columns."""

import io
import math

import numpy as np
import pytest
from rich.console import Console

from analysis.pages.cells import matrix_tables, missing, num, pct, pts


def test_a_wide_matrix_splits_into_readable_blocks():
    names = [f"Protocol{i:02d}" for i in range(30)]
    cols = ["vs"] + [n[-5:] for n in names]
    rows = [[a] + [pct((i * 7 + j * 3) % 100 / 100) for j in range(30)] for i, a in enumerate(names)]
    out = io.StringIO()
    console = Console(file=out, width=120)
    tables = matrix_tables("Matchups", cols, rows, console.width)
    for t in tables:
        console.print(t)
    text = out.getvalue()
    assert len(tables) > 1
    assert "…" not in text and "..." not in text
    assert all(len(line) <= 120 for line in text.splitlines())
    assert all(c in text for c in cols[1:]) and all(r[1] in text for r in rows)


def test_a_narrow_matrix_stays_one_table():
    rows = [["Fire", "", "55.0%"], ["Water", "45.0%", ""]]
    assert len(matrix_tables("Matchups", ["vs", "Fire", "Water"], rows, 120)) == 1


@pytest.mark.parametrize("x", [None, math.nan, np.float64("nan")])
def test_no_figure_is_a_blank_of_the_caller_s_choice(x):
    assert missing(x)
    assert pct(x) == pts(x) == num(x) == "-"
    assert pct(x, "") == pts(x, "") == ""


def test_a_rate_is_a_percentage_and_a_change_signed_points():
    assert pct(0.1234) == "12.3%" == f"{100 * 0.1234:.1f}%"
    assert pct(np.float64(0.5)) == "50.0%"
    assert pts(0.012) == "+1.2" and pts(-0.0449) == "-4.5" and pts(0.0) == "+0.0"
    assert num(12345.0) == "12,345"
    assert not missing(0.0) and not missing(0)
