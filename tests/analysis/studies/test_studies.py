"""One study interface (analysis/studies): what a run folder is, decided once from its manifest, and
commands that never ask which kind it is. Synthetic run folders (no engine); the kinds' outputs are
tested end to end in test_analysis_ab.py, test_analysis_tiers.py, test_cardvalue.py, test_meta.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures_analysis.known import known_run
from fixtures_analysis.round_robin import round_robin_rows
from fixtures_analysis.synth import write_run
from fixtures_analysis.tiers import tier_run

import analysis.studies as studies
from analysis.pages.shell import render_page
from analysis.studies.base import Study, write_tables
from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)


def two_arms(path: Path) -> Path:
    """A known run turned into a two-arm run (its two shards are the arms)."""
    run = write_run(path, [g for _ in range(2) for g in round_robin_rows()[:100]], shard_games=100, run_id=path.name)
    m = json.loads((run / "run.json").read_text())
    m["spec"] = {"name": path.name, "seed": 1, "arms": [{"name": "a"}, {"name": "b"}]}
    for shard, arm in zip(m["shards"], "ab", strict=True):
        shard["arm"] = arm
    (run / "run.json").write_text(json.dumps(m))
    return run


def test_each_folder_is_the_study_its_manifest_says(tmp_path):
    plain = known_run(tmp_path / "plain")
    tiers = tier_run(tmp_path / "tiers", {"greedy": 120, "search": 110})
    arms = two_arms(tmp_path / "ab")
    loop = tmp_path / "loop"
    loop.mkdir()
    (loop / "meta.json").write_text(
        json.dumps({"iterations": [{"iteration": 0, "run": str(plain)}], "meta": {"prior_games": 2.0}})
    )
    kinds = {
        name: studies.kind_of([str(p)]).kind
        for name, p in (("plain", plain), ("tiers", tiers), ("ab", arms), ("loop", loop))
    }
    assert kinds == {"plain": "plain", "tiers": "tiers", "ab": "ab", "loop": "metagame"}
    assert studies.kind_of([f"{tiers}#greedy"]).kind == "plain"  # one tier is an ordinary run
    assert studies.kind_of([f"{arms}#a"]).kind == "plain"
    assert studies.kind_of([str(plain), str(tiers / "..") + "/plain"]).kind == "plain"
    assert [k.kind for k in studies.KINDS][-1] == "plain"  # claims anything: the last resort


def test_a_loop_folder_reads_as_its_metagame(tmp_path, capsys):
    write_run(tmp_path / "loop" / "i00", round_robin_rows(), shard_games=200, run_id="i00")
    (tmp_path / "loop" / "meta.json").write_text(
        json.dumps(
            {
                "iterations": [{"iteration": 0, "run": "i00", "games": 1, "added": ["A, B, C"]}],
                "meta": {"prior_games": 2.0},
                "stopped": "converged",
            }
        )
    )
    assert main(["report", str(tmp_path / "loop"), "--format", "csv", "--table", "iterations"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Produced by i00") and 'iteration,run,games,added\n0,i00,1,"A, B, C"\n' in out
    assert main(["dashboard", str(tmp_path / "loop"), "--out", str(tmp_path / "loop.html")]) == 0
    page = (tmp_path / "loop.html").read_text()
    assert "<h1>protolab metagame loop: loop</h1>" in page and "Metagame: the equilibrium" in page
    assert '<p class="muted">converged</p>' in page
    (tmp_path / "loop" / "meta.json").write_text("{")
    assert main(["report", str(tmp_path / "loop")]) == 2
    assert "meta.json: not a PSRO loop manifest" in capsys.readouterr().err


def test_an_ab_run_given_with_another_is_refused_by_name(tmp_path, capsys):
    arms = two_arms(tmp_path / "ab")
    plain = known_run(tmp_path / "plain")
    assert main(["report", str(arms), str(plain)]) == 2
    assert f"{arms}: an A/B run (arms a, b) given with other runs would pool its arms" in capsys.readouterr().err


class Echo(Study):
    """A kind the commands have never heard of: a folder holding echo.txt, whose lines are its table."""

    kind, TABLE_NAMES, DEFAULT_TABLE, PAGE_LABEL = "echo", ("lines",), "lines", "Echo page"

    def __init__(self, run: str) -> None:
        self.run, self.run_id, self.timings = run, Path(run).name, {}
        self.lines = (Path(run) / "echo.txt").read_text().splitlines()

    @classmethod
    def claims(cls, paths):
        return len(paths) == 1 and (Path(paths[0]) / "echo.txt").is_file()

    @classmethod
    def open(cls, paths, options):
        return cls(paths[0])

    def print(self, console):
        console.print(f"echo of {len(self.lines)} lines")

    def page(self):
        return render_page(" echo", "protolab echo", self.run_id, "", "".join(f"<p>{x}</p>" for x in self.lines))

    def to_json(self):
        return json.dumps({"lines": self.lines})

    def table_csv(self, name=None):
        return "line\n" + "".join(f"{x}\n" for x in self.lines)

    def write_csv(self, out_dir):
        return write_tables({"lines": self.table_csv()}, out_dir)


def test_a_new_kind_is_one_module_and_one_line_in_kinds(tmp_path, capsys, monkeypatch):
    """Registered, a new kind is read by report (every format) and dashboard with no change to them."""
    monkeypatch.setattr(studies, "KINDS", (Echo, *studies.KINDS))
    folder = tmp_path / "shout"
    folder.mkdir()
    (folder / "echo.txt").write_text("hello\nworld\n")
    assert main(["report", str(folder)]) == 0 and "echo of 2 lines" in capsys.readouterr().out
    assert main(["report", str(folder), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"lines": ["hello", "world"]}
    assert main(["report", str(folder), "--format", "csv", "--table", "lines"]) == 0
    assert capsys.readouterr().out == "line\nhello\nworld\n"
    assert main(["report", str(folder), "--format", "csv", "--out", str(tmp_path / "csv")]) == 0
    assert (tmp_path / "csv" / "lines.csv").read_text() == "line\nhello\nworld\n"
    assert main(["report", str(folder), "--table", "protocols"]) == 2
    assert "unknown table 'protocols'; tables: lines" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)
    assert main(["dashboard", str(folder)]) == 0
    page = (tmp_path / "dashboard-shout.html").read_text()
    assert "<h1>protolab echo: shout</h1>" in page and "<p>world</p>" in page and "Plotly" in page


def test_whether_a_page_links_games_is_the_kinds_own_answer(tmp_path):
    """`protolab dashboard RUN` asks every kind for its page linking example games: the plain study
    builds the section from its report and puts it on its dashboard; a kind whose page links none
    never asks for the section (so no run folder is opened for it)."""
    asked = []

    def examples(report):
        asked.append(report)
        return '<section id="example-games">the example games</section>', "the game server"

    folder = tmp_path / "shout"
    folder.mkdir()
    (folder / "echo.txt").write_text("hello\n")
    echo = Echo(str(folder))
    assert echo.page_linking_games(examples) == (echo.page(), None) and asked == []
    plain = studies.open_study([str(known_run(tmp_path / "plain"))])
    page, served = plain.page_linking_games(examples)
    assert asked == [plain.report] and served == "the game server"
    assert '<section id="example-games">the example games</section>' in page
    assert "the example games" not in plain.page()
