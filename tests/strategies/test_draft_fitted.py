"""The fitted draft (strategies/_draft.pyx, strategies/draft.py), pick metrics (analysis/studies/balance/picks.py)
and their error handling."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from analysis.runs.open import Runs
from analysis.studies.balance.picks import first_pick, has_picks, pick_metrics
from protolab.cli import main
from protolab.experiment.run.plan import make_plan
from protolab.experiment.spec import SpecError, load_spec
from sim.pool import load_pool
from strategies.seats import play_games

POOL = load_pool(sets=["Main 1", "Aux 1"])
TABLE = """
[protocols]
Fire = 0.3
Water = 0.2
Death = 0.1
[counters.Hate]
Fire = 0.5
"""


def _table(tmp_path: Path, text: str = TABLE, name: str = "t.toml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def _picks(draft: str, seeds=range(12)) -> tuple[list[list[str]], np.ndarray]:
    cols = play_games(POOL, seeds, strategies=("random", "random"), draft=draft)
    return [[POOL.protocols[i] for i in row] for row in cols["picks"]], cols["first_player"]


def test_picks_the_best_available(tmp_path):
    picks, _ = _picks(f"fitted:{_table(tmp_path)},style=greedy")
    for row in picks:
        assert row[0] == "Fire"  # A: the strongest protocol
        assert set(row[1:3]) == {"Water", "Death"}  # B: the two strongest left


def test_counter_picks_when_the_table_says_so(tmp_path):
    path = _table(tmp_path)
    countering, _ = _picks(f"fitted:{path},style=counter")
    plain, _ = _picks(f"fitted:{path},style=greedy")
    assert all(row[0] == "Fire" and row[5] == "Hate" for row in countering)  # B's last pick answers A's Fire
    assert all(row[5] != "Hate" for row in plain)


def test_full_style_avoids_a_countered_protocol(tmp_path):
    # Fire is strongest, but Hate answers it for far more: A expects B to take Fire and plans Hate
    picks, _ = _picks(f"fitted:{_table(tmp_path)}")
    assert all(row[0] != "Fire" for row in picks)


def test_deterministic_and_seeded(tmp_path):
    draft = f"fitted:{_table(tmp_path)},temp=0.2"
    a, fa = _picks(draft, range(40))
    b, fb = _picks(draft, range(40))
    assert a == b and (fa == fb).all()
    assert len({tuple(r) for r in a}) > 2  # the temperature samples, per seed
    assert all(len(set(r)) == 6 for r in a)


def test_fixed_trios_record_no_picks():
    cols = play_games(POOL, range(2), protocols=[(("Fire", "Water", "Death"), ("Hate", "Light", "Life"))])
    assert (cols["picks"] == -1).all()


def _runs(rows: list[tuple[int, int, list[str] | None]]) -> Runs:
    con = duckdb.connect()
    con.execute("create table games (first_player tinyint, winner tinyint, picks varchar[])")
    con.executemany("insert into games values (?, ?, ?)", rows)
    return Runs(con=con, paths=[], manifests=[], games_files=[], events_files=[])


def test_pick_metrics_known_answers():
    six = ["A", "B", "C", "D", "E", "F"]
    runs = _runs([(0, 0, six), (1, 1, ["B", "A", "C", "D", "E", "F"]), (0, -1, six), (0, 1, None)])
    assert has_picks(runs)
    m = pick_metrics(runs).set_index("protocol")
    assert m.loc["A", "picks"] == 3 and m.loc["A", "pick_rate"] == 1.0
    assert m.loc["A", "avg_position"] == pytest.approx(4 / 3)  # picks 1, 2, 1
    # the first picker won both decided games: in game 1 seat 0, in game 2 seat 1
    assert m.loc["A", "wins_p1"] == 1 and m.loc["A", "games_p1"] == 1  # game 1: A's first pick
    assert m.loc["A", "wins_p2"] == 0 and m.loc["A", "games_p2"] == 1  # game 2: B's first pick
    assert m.loc["F", "win_rate"] == 0.0 and m.loc["D", "win_rate"] == 1.0  # pick 6 is B's, pick 4 A's
    assert m.loc["F", "games"] == 2 and m.loc["F", "picks"] == 3  # the draw is picked, not decided
    fp = first_pick(runs).set_index("picker")
    assert fp.loc["first", "games"] == 2 and fp.loc["first", "wins"] == 2
    assert fp.loc["second", "wins"] == 0


def test_no_picks_column_means_no_draft_section():
    con = duckdb.connect()
    con.execute("create table games (first_player tinyint, winner tinyint)")
    assert not has_picks(Runs(con=con, paths=[], manifests=[], games_files=[], events_files=[]))


@pytest.mark.parametrize(
    "text,key",
    [
        ("[protocols]\nFier = 0.1\n", "protocols.Fier"),
        ("[protocols]\nFire = 'high'\n", "protocols.Fire"),
        ('[trios]\n"Fire, Fire, Water" = 0.1\n', 'trios."Fire, Fire, Water"'),
        ("[counters.Fire]\nFire = 0.1\n", "counters.Fire.Fire"),
        ("[extra]\n", "extra"),
    ],
)
def test_bad_table_is_one_line_exit_2(tmp_path, capsys, text, key):
    path = _table(tmp_path, text, "bad.toml")
    code = main(
        ["ladder", "greedy", "random", "--games", "2", "--set", "Main 1", "--set", "Aux 1", "--draft", f"fitted:{path}"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and path in err and f"'{key}'" in err


def test_bad_table_in_a_spec_names_spec_and_key(tmp_path):
    _table(tmp_path, "[protocols]\nFier = 0.1\n", "bad.toml")
    spec = tmp_path / "s.toml"
    spec.write_text(
        'name = "x"\nseed = 1\ngames = 2\n[pool]\nsets = ["Main 1", "Aux 1"]\n'
        '[draft]\nmode = "draft"\npolicy = "fitted:bad.toml"\n'
    )
    with pytest.raises(SpecError, match=r"s\.toml: key 'draft\.policy\[0\]': bad\.toml: key 'protocols\.Fier'"):
        make_plan(load_spec(spec))
    spec.write_text(spec.read_text().replace("bad.toml", "missing.toml"))
    with pytest.raises(SpecError, match=r"key 'draft.policy': cannot read the draft table 'missing.toml'"):
        load_spec(spec)
