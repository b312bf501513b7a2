"""`protolab tune`: a balance search whose spec errors are one line naming the key, whose output a
designer can run (`--cards`), whose verdicts come from fresh seeds, and which repeats exactly:
the same spec gives the same trials, a search extended in its folder equals one run to the end,
and Ray workers give what this process gives (through the job mapper every feature uses)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
from fixtures_analysis import intervals

from analysis.stats.balance import front, imbalance, outcomes
from protolab.cli import main
from protolab.experiment.jobs import JobFailed, Local, OnRay, finished, remote
from protolab.experiment.spec import SpecError, load_spec
from protolab.experiment.tune.tune import _knobs_of, main_tune, prepare
from protolab.experiment.tune.tuneplay import player
from sim.pool import load_pool

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)

SPEC = """name = "tune-small"
seed = 3
games = {verify}

[pool]
sets = ["Main 1", "Aux 1"]

[seats]
strategies = ["greedy", "greedy"]

[draft]
mode = "random"

[tune]
protocol = "Fire"
cards = ["Fire 1", "Fire 3"]
kinds = ["value", "may"]
trials = {trials}
generation = 3
batch = 100
games = 300
verify = 2
"""


def write(tmp_path: Path, text: str, name: str = "tune.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def small(tmp_path: Path, trials: int = 4, verify: int = 400, name: str = "tune.toml") -> Path:
    return write(tmp_path, SPEC.format(trials=trials, verify=verify), name)


def one_error(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("protolab: error: "), (code, err)
    return err[0]


@pytest.mark.parametrize(
    "old, new, key, words",
    [
        ('cards = ["Fire 1", "Fire 3"]', 'cards = ["Fire 1", "Fire 9"]', "tune.cards[1]", "no card 'Fire 9'"),
        ('cards = ["Fire 1", "Fire 3"]', 'cards = ["Colour *"]', "tune.cards[0]", "no protocol 'Colour'"),
        ('kinds = ["value", "may"]', 'kinds = ["amount"]', "tune.kinds", "the change space is empty"),
        ('kinds = ["value", "may"]', 'kinds = ["value", "colour"]', "tune.kinds[1]", "expected one of value"),
        ("trials = 4", "trails = 4", "tune.trails", "unknown key"),
        ('protocol = "Fire"', 'protocol = "Frie"', "tune.protocol", "unknown protocol 'Frie'"),
        ('mode = "random"', 'mode = "round_robin"', "draft.mode", 'expected "random" with [tune]'),
        ("batch = 100", "batch = 1000", "tune.batch", "at most tune.games"),
    ],
)
def test_a_bad_tune_spec_is_one_line_naming_the_key(tmp_path, capsys, old, new, key, words):
    text = SPEC.format(trials=4, verify=400)
    assert old in text
    path = write(tmp_path, text.replace(old, new))
    line = one_error(capsys, "tune", path, "--workers", "1", "--out", tmp_path / "out")
    assert f"key '{key}'" in line and words in line and str(path) in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_spec_without_tune_and_a_tune_spec_given_to_run_are_refused(tmp_path, capsys):
    plain = write(tmp_path, 'name = "plain"\nseed = 1\ngames = 4\n', "plain.toml")
    assert "key 'tune': missing" in one_error(capsys, "tune", plain, "--workers", "1")
    assert "protolab tune SPEC" in one_error(capsys, "run", small(tmp_path), "--workers", "1")


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """One small search in this process, kept for the tests below."""
    tmp = tmp_path_factory.mktemp("tune")
    spec = load_spec(small(tmp, trials=5))
    record = main_tune(spec, tmp / "search", player(Local()), lambda *_: None)
    return spec, tmp / "search", record


def test_the_record_has_the_verified_shape_and_runnable_variants(searched, capsys):
    spec, folder, record = searched
    assert len(record["trials"]) == 5
    assert set(record["baseline"]["protocols"]) == set(load_pool(["Main 1", "Aux 1"]).protocols)
    assert record["candidates"] or record["rejected"], "a search of 5 trials verifies at least one candidate"
    for c in record["candidates"] + record["rejected"]:
        assert c["target_change"]["low"] <= c["target_change"]["change"] <= c["target_change"]["high"]
        assert all("change_low" in r for r in c["protocols"].values())
    for c in record["candidates"]:
        assert c["games"] == spec.games and c["changes"] and len({x["card"] for x in c["changes"]}) <= 3
        for p, r in c["protocols"].items():
            assert 0 <= r["low"] <= r["win_rate"] <= r["high"] <= 1, p
        assert main(["cards", "check", c["variant"]]) == 0
        pool = load_pool(["Main 1", "Aux 1"], cards=[c["variant"]])
        for x in c["changes"]:
            assert x["card"] in {s.name for s in pool.specs}
    capsys.readouterr()
    stored = json.loads((folder / "tune.json").read_text())
    assert stored["trials"] == record["trials"] and stored["candidates"] == record["candidates"]


def test_only_a_significant_candidate_nearer_balance_is_proposed_and_its_name_is_its_file(searched):
    _, folder, record = searched
    base = record["baseline"]["imbalance"]
    for c in record["candidates"]:
        t = c["target_change"]
        assert (t["low"] > 0 or t["high"] < 0) and c["imbalance"] < base
        text = Path(c["variant"]).read_text()
        assert Path(c["variant"]).name == f"candidate-{c['rank']}.toml"
        assert tomllib.loads(text)["variant"] == f"tune-small candidate {c['rank']}"
    for c in record["rejected"]:
        t = c["target_change"]
        assert c["why"] and c["rank"] is None and "variant" not in c
        assert (t["low"] <= 0 <= t["high"]) or c["imbalance"] >= base
    files = sorted(p.name for p in (folder / "variants").glob("*.toml"))
    assert files == sorted(f"candidate-{c['rank']}.toml" for c in record["candidates"])
    if record["candidates"]:
        assert record["answer"].startswith("Fire wins") and "candidate 1 of" in record["answer"]
    else:
        assert record["answer"].startswith("Nothing beats the official cards: Fire wins")


def test_the_answer_and_the_target_lead_every_format(searched, capsys, tmp_path):
    _, folder, record = searched
    assert main(["report", str(folder)]) == 0
    out = capsys.readouterr().out
    assert record["answer"][:40] in out.replace("\n", " ")
    for c in record["candidates"]:
        assert f"candidate {c['rank']} (variants/candidate-{c['rank']}.toml)" in out
    assert main(["report", str(folder), "--table", "candidates", "--format", "csv"]) == 0
    header = [x for x in capsys.readouterr().out.splitlines() if not x.startswith("#")][0]
    if record["candidates"]:
        assert header.startswith("rank,target,baseline,after,change,change_low,change_high")
    assert main(["report", str(folder), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data)[:2] == ["target", "answer"]
    page = tmp_path / "page.html"
    assert main(["dashboard", str(folder), "--out", str(page)]) == 0
    html = page.read_text()
    assert record["answer"].split(":")[0] in html
    for c in record["candidates"]:
        t = c["target_change"]
        assert f"{100 * t['change']:+.1f} ({100 * t['low']:+.1f} to {100 * t['high']:+.1f})" in html


def test_verification_uses_seeds_the_search_never_saw(searched):
    from protolab.experiment.tune.tuneplay import search_seeds, verify_seeds

    spec, _, record = searched
    played = sum(t["games"] for t in record["trials"]) + 10_000
    assert not set(search_seeds(spec.seed, 0, played)) & set(verify_seeds(spec.seed, spec.games))


def test_the_same_spec_repeats_and_an_extended_search_equals_one_run_to_the_end(searched, tmp_path):
    spec, folder, record = searched
    again = main_tune(load_spec(small(tmp_path, trials=5)), tmp_path / "again", player(Local()), lambda *_: None)
    assert again["trials"] == record["trials"]
    assert again["candidates"] == [
        {**c, "variant": c["variant"].replace(str(folder), str(tmp_path / "again"))} for c in record["candidates"]
    ]
    short = main_tune(load_spec(small(tmp_path, trials=3)), tmp_path / "ext", player(Local()), lambda *_: None)
    assert short["trials"] == record["trials"][:3]
    extended = main_tune(load_spec(small(tmp_path, trials=5)), tmp_path / "ext", player(Local()), lambda *_: None)
    assert extended["trials"] == record["trials"]


def test_a_folder_of_another_search_is_refused(searched, tmp_path):
    _, folder, _ = searched
    other = load_spec(small(tmp_path, trials=5, verify=600))
    with pytest.raises(SpecError, match="another spec"):
        main_tune(other, folder, player(Local()), lambda *_: None)


@pytest.mark.slow
def test_ray_workers_play_what_this_process_plays(tmp_path):
    spec = load_spec(small(tmp_path, trials=3))
    search = prepare(spec)
    jobs = [search.job((), tuple(range(1, 60)))]
    ray = OnRay(None, 2)
    try:
        assert np.array_equal(player(ray)(jobs)[0], player(Local())(jobs)[0], equal_nan=True)
        _the_job_mapper(ray)  # on the same Ray: starting one costs more than the checks
    finally:
        ray.close()


class Count:
    """What a progress bar is told."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def update(self, done: int) -> None:
        self.seen.append(done)


def _the_job_mapper(ray: OnRay) -> None:
    """The one job mapper of every feature (jobs.py): results in job order and progress counted per
    job as in this process; a job's own error raised at once with its type, and named by its key
    where the run's shard loop needs it."""
    texts = ["1", "[2, 3]", '"four"', "5.5"]
    here, there = Count(), Count()
    assert (
        ray.map(json.loads, texts, there, len) == Local().map(json.loads, texts, here, len) == [1, [2, 3], "four", 5.5]
    )
    assert here.seen == [1, 7, 13, 16] and len(there.seen) == 4 and there.seen[-1] == 16
    with pytest.raises(json.JSONDecodeError):
        ray.map(json.loads, ["1", "not json", "2"])
    with pytest.raises(JobFailed) as failed:
        list(finished(remote(json.loads), [("first", "1"), ("second", "{")], max_pending=2))
    assert failed.value.key == "second" and isinstance(failed.value.cause, json.JSONDecodeError)


def test_outcomes_score_each_protocol_of_each_seat():
    protocols = np.array([[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0]])
    out = outcomes(protocols, np.array([0, -1]), 7)
    assert out[0].tolist()[:6] == [1, 1, 1, 0, 0, 0] and np.isnan(out[0, 6])
    assert out[1].tolist()[:6] == [0.5] * 6


def test_imbalance_lifts_a_weak_protocol_as_it_lowers_a_strong_one():
    """Lifting Metal from 40% takes wins from the others: a full fix that leaves them in the band
    scores better than a half fix that leaves them alone, and noise is not charged."""
    base = np.array([0.40, 0.52, 0.48, 0.53])
    full = np.array([0.50, 0.50, 0.455, 0.51])
    half = np.array([0.45, 0.52, 0.48, 0.53])
    band = (0.45, 0.55)
    assert imbalance(full, base, 0, band) == pytest.approx(0.0)
    assert imbalance(half, base, 0, band) == pytest.approx(0.05)
    lowered = np.array([0.50, 0.60, 0.48, 0.53])  # a strong protocol lowered, pushing another out of the band
    assert imbalance(lowered, np.array([0.60, 0.56, 0.48, 0.53]), 0, band) == pytest.approx(0.04)
    assert imbalance(lowered, np.array([0.60, 0.56, 0.48, 0.53]), 0, band, np.array([0, 0.05, 0, 0])) == 0


def test_imbalance_charges_a_fix_that_breaks_another_protocol():
    base = np.array([0.7, 0.5, 0.4])
    assert imbalance(np.array([0.6, 0.5, 0.4]), base, 0, (0.45, 0.55)) == pytest.approx(0.1)
    assert imbalance(np.array([0.6, 0.5, 0.35]), base, 0, (0.45, 0.55)) == pytest.approx(0.15)
    assert imbalance(np.array([0.6, 0.5, 0.4]), base, None, (0.45, 0.55)) == pytest.approx(0.1)
    assert front([(0.1, 3), (0.2, 1), (0.15, 3), (0.1, 2)]) == [3, 1]


def test_the_shipped_example_parses_and_names_its_target():
    spec = load_spec("tune_fire")
    assert spec.tune["protocol"] == "Fire" and spec.tune["max_changes"] == 3
    assert tomllib.loads(Path(spec.source).read_text())["tune"]["cards"] == ["Fire *"]


def test_a_band_search_without_a_target_judges_every_protocol(tmp_path):
    text = SPEC.format(trials=2, verify=300).replace('protocol = "Fire"\n', "band = [40, 60]\n")
    record = main_tune(load_spec(write(tmp_path, text)), tmp_path / "band", player(Local()), lambda *_: None)
    assert record["target"] is None and len(record["trials"]) == 2
    rates = np.array([r["win_rate"] for r in record["baseline"]["protocols"].values()])
    outside = np.maximum(0, rates - 0.6) + np.maximum(0, 0.4 - rates)
    assert record["baseline"]["imbalance"] == pytest.approx(outside.sum())
    assert all("target_change" not in c for c in record["candidates"])


def test_a_search_folder_reads_as_its_study_in_report_and_dashboard(searched, capsys, tmp_path):
    _, folder, record = searched
    assert main(["report", str(folder), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["candidates"] == record["candidates"] and data["target"] == "Fire"
    assert main(["report", str(folder), "--table", "trials", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# Produced by search: strategies: greedy on both seats; sets Main 1, Aux 1")
    assert lines[1].startswith("trial,changes,cards,games,stopped,imbalance") and len(lines) == 7
    assert record["provenance"]["pool_hash"] == data["pool_hash"] and record["provenance"]["engine_version"]
    page = tmp_path / "page.html"
    assert main(["dashboard", str(folder), "--out", str(page)]) == 0
    text = page.read_text()
    assert 'id="candidates"' in text and 'id="rates"' in text and 'id="trials"' in text


def test_every_figure_the_search_shows_lies_inside_its_own_interval(searched, capsys):
    """The record, `report --format json` and every table of it: each figure with its interval."""
    _, folder, record = searched
    outputs = [record]
    for table in (None, "candidates", "protocols", "trials"):
        assert main(["report", str(folder), "--format", "json", *(["--table", table] if table else [])]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert all(intervals.count(outputs[i]) for i in (0, 1, 3)), "the record, the report and the protocols table"
    assert [x for o in outputs for x in intervals.outside(o)] == []


def test_a_change_whose_early_games_all_went_one_way_is_shown_inside_its_interval(tmp_path):
    """Fire loses its first 200 fresh games to the baseline and plays the other 2,000 alike: the running
    intersection of anytime intervals in seed order would end far from the mean (-9.1 points); the
    verification's change is the mean with its own interval, which also decides "moved"."""
    from analysis.studies.tune import _moved
    from protolab.experiment.tune.tune import _protocols

    search = prepare(load_spec(small(tmp_path)))
    fire = search.pool.protocols.index("Fire")
    base = np.full((2200, len(search.pool.protocols)), np.nan)
    base[:, fire] = 0.0
    cand = base.copy()
    base[:200, fire] = 1.0
    rows = _protocols(search, cand, base)
    assert rows["Fire"]["change"] == pytest.approx(-200 / 2200)
    assert intervals.count(rows["Fire"]) == 2 and intervals.outside(rows) == []
    assert _moved(rows["Fire"]) and rows["Fire"]["change_high"] < 0


def test_the_search_prints_its_folder_and_variants_as_given_under_here(tmp_path, capsys, monkeypatch):
    """An absolute --out under the current folder is printed relative to it, never as the absolute path."""
    text = (
        SPEC.format(trials=9, verify=2000)
        .replace('cards = ["Fire 1", "Fire 3"]', 'cards = ["Fire *"]')
        .replace('kinds = ["value", "may"]', 'kinds = ["value", "count", "whose"]')
        .replace("games = 300", "games = 1000")
    )
    write(tmp_path, text)
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "tune.toml", "--workers", "1", "--out", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert json.loads((tmp_path / "s" / "tune.json").read_text())["candidates"], "this search proposes one"
    assert "variant: s/variants/candidate-1.toml" in out and "Search folder: s\n" in out
    assert str(tmp_path) not in out.replace("\n", "")


def test_an_empty_change_space_says_the_constraints_took_it(tmp_path, capsys):
    path = write(tmp_path, SPEC.format(trials=2, verify=100).replace('kinds = ["value", "may"]', 'kinds = ["value"]'))
    line = one_error(capsys, "tune", path, "--workers", "1", "--out", tmp_path / "out")
    assert "key 'tune.kinds'" in line and "break the shipped constraints: distinct values" in line


def test_max_cards_counts_several_turns_of_one_card_once(tmp_path):
    import optuna

    text = SPEC.format(trials=4, verify=400).replace("verify = 2", "verify = 2\nmax_changes = 3\nmax_cards = 1")
    search = prepare(load_spec(write(tmp_path, text)))
    by_card: dict[str, list[str]] = {}
    for k in search.knobs:
        by_card.setdefault(k.card, []).append(k.label())
    f1, f3 = by_card["Fire 1"], by_card["Fire 3"]
    other = next(x for x in f1 if x.split(":")[0] != f1[0].split(":")[0])  # another key of Fire 1
    picks = {"change0": f1[0], "change1": f3[0], "change2": other}
    chosen = _knobs_of(optuna.trial.FixedTrial(picks), search)
    assert [k.label() for k in chosen] == sorted([picks["change0"], picks["change2"]])  # Fire 3 would be a 2nd card
    search.settings["max_cards"] = 2
    assert len(_knobs_of(optuna.trial.FixedTrial(picks), search)) == 3
    bad = write(tmp_path, text.replace("max_cards = 1", "max_cards = 4"), "bad.toml")
    with pytest.raises(SpecError, match="key 'tune.max_cards'.*at most tune.max_changes"):
        load_spec(bad)


def test_a_candidate_that_only_adds_turns_to_a_better_one_is_not_proposed():
    from protolab.experiment.tune.tune import _without_padding
    from sim.cards.knobs import Knob

    draw = Knob("Metal 3", "count", ("middle", "do", 0, "draw"), 1, 2)
    may = Knob("Metal 3", "may", ("middle", "do", 0, "may"), False, True)
    value = Knob("Metal 1", "value", ("value",), 1, 4)
    small, padded, better = (
        {"knobs": [draw], "imbalance": 0.067},
        {"knobs": [draw, may], "imbalance": 0.067},
        {"knobs": [draw, value], "imbalance": 0.05},
    )
    rejected: list = []
    assert _without_padding([small, padded, better], rejected) == [small, better]
    assert len(rejected) == 1 and rejected[0]["why"].startswith("it adds turns to Metal 3 middle.do[0].draw")


def test_a_budget_that_cannot_settle_is_said_after_the_first_generation(tmp_path):
    """Count and whose turns change some games' results: at 300 games none is known to +-2 points, and the
    search says so with the games settling would take, in its messages and its record."""
    text = SPEC.format(trials=2, verify=100).replace('kinds = ["value", "may"]', 'kinds = ["count", "whose"]')
    text = text.replace("generation = 3", "generation = 2")
    said: list[str] = []
    record = main_tune(load_spec(write(tmp_path, text)), tmp_path / "s", player(Local()), said.append)
    assert len(record["warnings"]) == 1
    w = record["warnings"][0]
    assert "spent tune.games (300) before their effect was known to +-2 points" in w and "raise tune.games" in w
    assert any(w in line for line in said)


def test_the_search_folder_passes_the_issue_checks_of_benchmarks_tune_check(searched, tmp_path):
    """benchmarks/tune_check.py (the checks docs/experiments.md reports) runs on a real search folder."""
    import shutil
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[4]
    folder = shutil.copytree(searched[1], tmp_path / "search")
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "tune_check.py"), str(folder)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert done.stdout.startswith("search: ")
