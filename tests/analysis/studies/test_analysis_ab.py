"""A/B done right: paired comparison of sides that share seeds (known answers worked out by hand,
and the DuckDB join checked against a per-cluster reference), no silent pooling of arms in report
and dashboard, and the A/B page (forest plot, changed cards' play rates)."""

import json
import math
import re
import shutil
from statistics import NormalDist

import numpy as np
import pytest
from fixtures_analysis.known import T1, T2
from fixtures_analysis.synth import write_run

from analysis.runs.manifest import Manifest
from analysis.runs.open import open_runs
from analysis.stats.proportions import Z95, newcombe_diff, paired_rate_diff, paired_rate_diff_clusters
from analysis.studies.ab.compare import compare_runs
from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

ARMS = ("official", "fire1-worth-3")  # the shared ab_run fixture (tests/conftest.py)


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def game(seed: int, first: int, winner: int, swap: bool = False) -> dict:
    """One game of T1 against T2 on seed `seed` (T1 at seat 1 when `swap`)."""
    a, b = (T2, T1) if swap else (T1, T2)
    row = {"seed": seed, "matchup": 0, "first_player": first, "winner": winner}
    row.update({f"seat0_protocol_{p}": x for p, x in zip(("left", "middle", "right"), a, strict=True)})
    row.update({f"seat1_protocol_{p}": x for p, x in zip(("left", "middle", "right"), b, strict=True)})
    return row


def row(c, name: str) -> dict:
    return c.table.set_index("name").loc[name].to_dict()


# -- the statistic, by hand --------------------------------------------------------------------------

# Ten seeds, one game each, seat 0 (T1) always moves first. The first player wins seeds 0-4 in the
# base and seeds 0-6 in the variant: per-seed differences d = (0,0,0,0,0,1,1,0,0,0).
#   mean d = 0.2; s_d^2 = (8 * 0.2^2 + 2 * 0.8^2) / 9 = 1.6 / 9; se = sqrt(1.6 / 90) = 0.1333...
#   95% CI: 0.2 -+ 1.95996 * 0.13333 = (-0.06133, 0.46133); z = 1.5, p = 0.13361.
#   Unpaired variance (same clusters, covariance dropped): 2.5/90 + 2.1/90 = 4.6/90 -> ratio 4.6/1.6 = 2.875.
BASE_WINS, VARIANT_WINS = 5, 7


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    d = tmp_path_factory.mktemp("hand")
    base = write_run(d / "base", [game(s, 0, 0 if s < BASE_WINS else 1) for s in range(10)], run_id="hand-base")
    variant = write_run(
        d / "variant", [game(s, 0, 0 if s < VARIANT_WINS else 1) for s in range(10)], run_id="hand-variant"
    )
    return base, variant


def test_paired_difference_known_answer(hand):
    c = compare_runs(open_runs([hand[0]]), open_runs([hand[1]]))
    se = math.sqrt(1.6 / 90)
    assert c.design.paired and c.design.clusters == 10 and "match seed for seed" in c.design.how
    for name, sign in (("first player", 1), ("Fire", 1), ("Hate", -1)):  # T1 holds Fire, T2 holds Hate
        r = row(c, name)
        assert r["design"] == "paired"
        assert r["change"] == pytest.approx(sign * 0.2)
        assert r["se"] == pytest.approx(se)
        assert (r["change_low"], r["change_high"]) == pytest.approx(
            tuple(sorted((sign * 0.2 - Z95 * se, sign * 0.2 + Z95 * se)))
        )
        assert r["change_low"] == pytest.approx(-0.0613279 if sign > 0 else -0.4613279, abs=1e-6)
        assert r["p_value"] == pytest.approx(0.1336144, abs=1e-6)
        assert r["variance_ratio"] == pytest.approx(4.6 / 1.6)
    # the paired interval is narrower than the unpaired (Newcombe) one kept beside it
    r = row(c, "first player")
    assert r["change_high"] - r["change_low"] < r["unpaired_high"] - r["unpaired_low"]
    assert c.meta["design"] == "paired" and c.meta["seed_clusters"] == 10


def test_what_a_quiet_comparison_could_have_missed_is_said(hand):
    """Nothing is flagged on ten seeds; the summary says how large a change could hide: for a paired
    row, (z at alpha / tests + z at 80% power) times its paired standard error, by hand."""
    c = compare_runs(open_runs([hand[0]]), open_runs([hand[1]]))
    tests = c.meta["tests"]
    z = NormalDist().inv_cdf(1 - 0.05 / tests / 2) + NormalDist().inv_cdf(0.8)
    assert row(c, "Fire")["detectable"] == pytest.approx(z * math.sqrt(1.6 / 90))
    assert not c.table["significant"].any()
    line = next(x for x in c.summary if x.startswith("Underpowered below"))
    assert "80% power" in line and f"{100 * z * math.sqrt(1.6 / 90):.1f}" in line


def test_paired_rate_diff_formula_directly():
    out = paired_rate_diff_clusters([1] * 10, [1] * 5 + [0] * 5, [1] * 10, [1] * 7 + [0] * 3)
    assert out["change"] == pytest.approx(0.2) and out["se"] == pytest.approx(math.sqrt(1.6 / 90))
    assert out["se_unpaired"] == pytest.approx(math.sqrt(4.6 / 90)) and out["variance_ratio"] == pytest.approx(2.875)
    # identical sides: no variance, no change, p = 1; one cluster: nothing to estimate
    same = paired_rate_diff(5, 10, 5, 10, 0.0, 0.1, 10)
    assert same["change"] == 0 and same["se"] == 0 and same["p_value"] == 1
    assert np.isnan(paired_rate_diff(1, 1, 0, 1, 0.5, 0.5, 1)["p_value"])


# -- the DuckDB join against a per-cluster reference, with draws and seat-swapped pairs ---------------


def correlated_games(seeds: int, flip: float, seed: int = 5) -> tuple[list[dict], list[dict]]:
    """Seat-swapped pairs (two games per seed), some draws; the variant replays the base and
    changes the winner of a share `flip` of the games: strongly correlated sides."""
    rng = np.random.default_rng(seed)
    base, variant = [], []
    for s in range(seeds):
        first = s % 2
        for swap in (False, True):
            w = int(rng.choice([-1, 0, 1], p=[0.05, 0.55, 0.40]))
            v = int(rng.choice([-1, 0, 1])) if rng.random() < flip else w
            base.append(game(s, first, w, swap))
            variant.append(game(s, first, v, swap))
    return base, variant


def reference(base: list[dict], variant: list[dict], name: str) -> dict:
    """Per-seed (n, w) for the first player or for Fire (in T1), summed in plain Python."""

    def cells(games: list[dict]) -> tuple[list[int], list[int]]:
        n, w = {}, {}
        for g in games:
            seat = g["first_player"] if name == "first player" else (0 if g["seat0_protocol_left"] == T1[0] else 1)
            n[g["seed"]] = n.get(g["seed"], 0) + (g["winner"] >= 0)
            w[g["seed"]] = w.get(g["seed"], 0) + (g["winner"] == seat)
        keys = sorted(n)
        return [n[k] for k in keys], [w[k] for k in keys]

    (na, wa), (nb, wb) = cells(base), cells(variant)
    return paired_rate_diff_clusters(na, wa, nb, wb)


@pytest.fixture(scope="module")
def correlated(tmp_path_factory):
    d = tmp_path_factory.mktemp("corr")
    base, variant = correlated_games(300, 0.15)
    paths = (
        write_run(d / "base", base, run_id="corr-base", shard_games=250),
        write_run(d / "variant", variant, run_id="corr-variant", shard_games=250),
    )
    return base, variant, compare_runs(open_runs([paths[0]]), open_runs([paths[1]]))


@pytest.mark.parametrize("name", ["first player", "Fire"])
def test_paired_sql_matches_the_cluster_reference(correlated, name):
    base, variant, c = correlated
    want, got = reference(base, variant, name), row(c, name)
    assert c.design.clusters == 300 and c.design.games == 600
    assert got["change"] == pytest.approx(want["change"])
    for k in ("se", "se_unpaired", "variance_ratio", "p_value"):
        assert got[k] == pytest.approx(want[k]), k
    assert (got["change_low"], got["change_high"]) == pytest.approx((want["low"], want["high"]))


def test_paired_interval_is_narrower_on_correlated_data(correlated):
    _, _, c = correlated
    paired = c.table[c.table["design"] == "paired"]
    assert len(paired) == 7  # six protocols and the first player
    width = paired["change_high"] - paired["change_low"]
    assert (width < paired["unpaired_high"] - paired["unpaired_low"]).all()
    assert (paired["variance_ratio"] > 2).all()
    # the Newcombe interval is what the unpaired design would have reported
    r = row(c, "Fire")
    _, lo, hi = newcombe_diff(r["wins_base"], r["games_base"], r["wins_variant"], r["games_variant"])
    assert (r["unpaired_low"], r["unpaired_high"]) == pytest.approx((float(lo), float(hi)))
    assert any("paired seed by seed" in s and "median factor" in s for s in c.summary)


# -- when the sides do not share their games, the comparison stays unpaired --------------------------


def unpaired_case(tmp_path, variant_rows: list[dict]):
    base_rows, _ = correlated_games(50, 0.15)
    b = write_run(tmp_path / "b", base_rows, run_id="u-base")
    v = write_run(tmp_path / "v", variant_rows, run_id="u-variant")
    return compare_runs(open_runs([b]), open_runs([v]))


def test_unrelated_runs_stay_unpaired(tmp_path):
    base_rows, _ = correlated_games(50, 0.15)
    c = unpaired_case(tmp_path, [{**g, "seed": g["seed"] + 1000} for g in base_rows])
    assert not c.design.paired and "share no seeds" in c.design.how and c.meta["design"] == "unpaired"
    assert (c.table["design"] == "unpaired").all()
    r = row(c, "first player")
    _, lo, hi = newcombe_diff(r["wins_base"], r["games_base"], r["wins_variant"], r["games_variant"])
    assert (r["change_low"], r["change_high"]) == pytest.approx((float(lo), float(hi)))


@pytest.mark.parametrize(
    "change, why",
    [
        ("first_player", "different games"),  # same seed, another first player: not the same game
        ("trio", "different games"),  # same seed, other trios
        ("extra", "one side only"),  # a seed the base did not play
    ],
)
def test_sides_that_share_only_some_games_stay_unpaired(tmp_path, change, why):
    _, variant_rows = correlated_games(50, 0.15)
    rows = [dict(g) for g in variant_rows]
    if change == "first_player":
        rows[7]["first_player"] = 1 - rows[7]["first_player"]
    elif change == "trio":
        rows[8]["seat0_protocol_left"] = "Love"
    else:
        rows.append(game(9999, 0, 0))
    c = unpaired_case(tmp_path, rows)
    assert not c.design.paired and why in c.design.how
    assert (c.table["design"] == "unpaired").all()


# -- the shared A/B run: compare, report, dashboard ---------------------------------------------------


@pytest.fixture(scope="module")
def arms(ab_run):
    return [f"{ab_run}#{a}" for a in ARMS]


def test_compare_two_arms_is_paired_with_changed_card_use(capsys, ab_run, arms):
    code, out, err = run_cli(capsys, "compare", *arms, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    meta = data["meta"]
    assert meta["design"] == "paired" and "two arms of one A/B run" in meta["how"]
    assert meta["seed_clusters"] == 1500 and meta["games_per_side"] == 3000  # 6,000 games, seat-swapped pairs
    assert meta["changed_cards"] == ["Fire 1"] and meta["median_variance_ratio"] > 1
    assert meta["base"].endswith("#official") and meta["variant"].endswith("#fire1-worth-3")
    rows = {r["name"]: r for r in data["table"]}
    assert rows["first player"]["design"] == "paired" and rows["Fire 1"]["design"] == "unpaired"
    protocols = [r for r in data["table"] if r["kind"] == "protocol" and r["variance_ratio"] is not None]
    assert protocols and all(r["change_low"] <= r["change"] <= r["change_high"] for r in protocols)
    assert data["meta"]["tests"] == sum(r["p_adjusted"] is not None for r in data["table"])  # one correction
    card = data["changed_cards"][0]
    assert card["card"] == "Fire 1"
    runs = open_runs([arms[0]]), open_runs([arms[1]])
    up = [r.sql("select sum(up)::bigint as up from cards where card = 'Fire 1'")["up"][0] for r in runs]
    assert (card["up_base"], card["up_variant"]) == tuple(up)
    assert card["up_rate_base"] == pytest.approx(up[0] / card["deck_games_base"])
    assert card["up_rate_base"] + card["never_rate_base"] <= 1 + 1e-12
    # the terminal output shows the play-rate change beside the win-rate change
    code, out, _ = run_cli(capsys, "compare", *arms)
    assert code == 0 and "Changed cards" in out and "Design: paired" in out
    assert f"{card['up_rate_base']:.1%} -> {card['up_rate_variant']:.1%}" in out


def test_the_protocol_a_variant_changes_is_its_focus_tested_first_on_its_own(capsys, ab_run, arms):
    """fire1-worth-3 changes a Fire card: Fire leads the table and the summary with its own interval,
    corrected as a family of one (its p unadjusted), the other rates corrected separately."""
    c = compare_runs(open_runs([arms[0]]), open_runs([arms[1]]))
    assert c.meta["focus"] == ["Fire"]
    fire = c.table.iloc[0]
    assert (fire["name"], fire["kind"], fire["family"]) == ("Fire", "protocol", "focus")
    assert fire["p_adjusted"] == pytest.approx(fire["p_value"])
    focus_at = next(i for i, line in enumerate(c.summary) if line.startswith("Focus: Fire"))
    assert (
        c.summary[focus_at + 1].startswith("- Fire ") and f"{100 * fire['change_low']:+.1f}" in c.summary[focus_at + 1]
    )
    rest = c.table[c.table["family"] == "rest"]
    from analysis.stats.proportions import adjust

    tested = rest[rest["p_value"].notna()]
    assert np.allclose(tested["p_adjusted"], adjust(tested["p_value"].to_numpy(), "holm"))
    code, out, _ = run_cli(capsys, "compare", *arms)
    shown = [line.split("│")[1].strip() for line in out.splitlines() if line.count("│") > 5]
    cards = set(c.table.loc[c.table["kind"] == "card", "name"])
    moved = set(c.table.loc[(c.table["kind"] == "card") & c.table["significant"], "name"])
    assert shown[0] == "Fire" and {n for n in shown if n in cards} <= moved | {"Fire 1"}


def test_report_on_an_ab_run_shows_each_arm(capsys, ab_run, arms):
    code, out, err = run_cli(capsys, "report", ab_run)
    assert code == 0, err
    for a in ARMS:
        assert f"arm {a}" in out and f"#{a}: 3,000 games" in out
    assert "6,000 games" not in out
    code, out, _ = run_cli(capsys, "report", ab_run, "--format", "json", "--table", "overview")
    data = json.loads(out)
    assert data["meta"]["arms"] == list(ARMS)
    assert [data["arms"][a]["tables"]["overview"][0]["games"] for a in ARMS] == [3000, 3000]
    code, out, _ = run_cli(capsys, "report", ab_run, "--format", "csv", "--table", "overview")
    head = [x for x in out.strip().splitlines() if x.startswith("# Produced by ")]  # provenance, one per arm
    lines = [x for x in out.strip().splitlines() if not x.startswith("#")]
    assert [f"#{a}: arm {a}" in h for h, a in zip(head, ARMS, strict=True)] == [True, True]
    assert lines[0].startswith("arm,") and [x.split(",")[0] for x in lines[1:]] == list(ARMS)
    # one arm alone is a plain report
    code, out, _ = run_cli(capsys, "report", arms[0], "--format", "csv", "--table", "overview")
    lines = [x for x in out.strip().splitlines() if not x.startswith("#")]
    assert code == 0 and out.startswith("# Produced by ") and lines[0].startswith("runs,") and len(lines) == 2


def test_an_ab_run_with_other_runs_is_refused(capsys, ab_run, hand):
    for cmd in (("report", ab_run, hand[0]), ("dashboard", hand[0], ab_run), ("compare", ab_run, hand[0])):
        code, out, err = run_cli(capsys, *cmd)
        assert code == 2 and str(ab_run) in err and "#" in err and "Traceback" not in err, cmd
        assert len(err.strip().splitlines()) == 1


def _page_checks(page: str) -> None:
    assert 'id="chart-forest-0"' in page and 'id="chart-card-use-0"' in page
    assert "Change in win rate, fire1-worth-3 minus official" in page
    assert 'id="changed-cards-0"' in page and "Fire 1" in page
    assert "paired: the two arms of one A/B run share every seed" in page


def test_dashboard_on_an_ab_run_writes_the_ab_page(capsys, ab_run, arms, tmp_path):
    out = tmp_path / "ab.html"
    code, text, err = run_cli(capsys, "dashboard", ab_run, "--out", out)
    assert code == 0, err
    page = out.read_text()
    _page_checks(page)
    c = compare_runs(open_runs([arms[0]]), open_runs([arms[1]]))
    u = c.cards.set_index("card").loc["Fire 1"]
    # the play rates are in the bar chart, for each arm, and the win rates in the side-by-side table
    for col in ("up_rate", "down_rate", "never_rate"):
        for side in ("base", "variant"):
            assert f'"{u[f"{col}_{side}"]:.1%}"' in page, (col, side)
    cells = re.findall(r'<table class="sortable" id="changed-cards-0">.*?</table>', page, re.S)[0]
    for side in ("base", "variant"):
        assert f">{u[f'up_wr_{side}']:.1%}<" in cells and f">{u[f'played_wr_{side}']:.1%}<" in cells
    # one arm's dashboard is the ordinary single-run page
    code, _, _ = run_cli(capsys, "dashboard", arms[0], "--out", tmp_path / "one.html")
    assert code == 0 and "chart-forest" not in (tmp_path / "one.html").read_text()


def test_run_ends_an_ab_run_with_the_ab_dashboard(ab_run, tmp_path):
    from rich.console import Console

    from protolab.experiment.run.runner import RunResult, analyse

    copy = shutil.copytree(ab_run, tmp_path / "run")
    manifest = json.loads((copy / "run.json").read_text())
    console = Console(record=True, width=200)
    analyse(
        RunResult(
            run_dir=copy,
            status="complete",
            games=manifest["games"],
            seconds=0.0,
            manifest=Manifest.of(manifest, "run.json"),
        ),
        console,
    )
    text = console.export_text()
    assert "fire1-worth-3 vs official" in text and "A/B dashboard:" in text and "Changed cards" in text
    _page_checks((copy / "dashboard.html").read_text())


# -- a change that changes nothing ---------------------------------------------------------------------

RESTATED_SPEC = """
name = "restated"
seed = 17
games = 60
shard_games = 60
[seats]
strategies = ["greedy", "greedy"]
[draft]
mode = "random"
[[arms]]
name = "official"
[[arms]]
name = "fire-copy"
cards = ["fire.toml"]
"""


@pytest.fixture(scope="module")
def restated(tmp_path_factory):
    """An A/B run whose variant arm plays a copy of the official Fire file: six cards named, none changed."""
    from pathlib import Path

    from protolab.experiment.run.runner import RunOptions, run

    d = tmp_path_factory.mktemp("restated")
    root = Path(__file__).resolve().parents[3]
    shutil.copy(root / "datasets/protocols/fire.toml", d / "fire.toml")
    (d / "restated.toml").write_text(RESTATED_SPEC)
    res = run(str(d / "restated.toml"), RunOptions(workers=2, out=str(d / "runs"), show_progress=False))
    assert res.status == "complete"
    return res.run_dir


def test_a_change_that_changes_nothing_says_both_sides_play_one_pool(capsys, restated):
    sides = [f"{restated}#official", f"{restated}#fire-copy"]
    code, out, err = run_cli(capsys, "compare", *sides, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    meta = data["meta"]
    assert meta["changed_cards"] == [] and meta["focus"] == []
    assert meta["same_pool"] == meta["provenance"][0]["pool_hash"] == meta["provenance"][1]["pool_hash"]
    assert meta["same_games"] is True and meta["design"] == "paired"
    assert data["summary"][0].startswith(f"Same pool: both sides play pool {meta['same_pool']}")
    assert "played the same games" in data["summary"][0]
    assert not any(s.startswith("Underpowered") for s in data["summary"])  # nothing could hide in a change of 0
    assert any("Fire 0" in n and "as they already play" in n for n in meta["notes"])
    code, out, _ = run_cli(capsys, "compare", *sides)
    assert code == 0 and "Same pool: both sides play pool" in " ".join(out.split())


def test_only_the_cards_that_play_differently_are_changed(pool):
    from pathlib import Path

    from analysis.studies.ab.samepool import plays
    from sim.pool import load_pool

    root = Path(__file__).resolve().parents[3]
    official = plays(load_pool(["Main 1", "Aux 1"]))
    files = [root / "datasets/protocols/fire.toml", root / "datasets/experiments/variants/fire1_worth_3.toml"]
    changed = plays(load_pool(["Main 1", "Aux 1"], cards=files))
    assert sorted(n for n in official if official[n] != changed.get(n)) == ["fire 1"]
    copy = plays(load_pool(["Main 1", "Aux 1"], cards=files[:1]))
    assert copy == official
