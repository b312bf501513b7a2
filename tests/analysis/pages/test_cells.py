"""Wide terminal tables stay readable: a 30 x 30 matchup matrix in 120 columns."""

import io

from rich.console import Console

from analysis.pages.cells import matrix_tables, pct


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
