"""A playtest's report (a run whose seats include `human`, analysis/studies/balance/played.py): it says
first that its figures measure one person's games, and raises no balance flag from them unless
asked (`--flag-played`); a run of players only is reported as before."""

from __future__ import annotations

import json

import pytest
from fixtures_analysis.known import person_run

from protolab.cli import main


def flags_of(capsys, *argv) -> tuple[dict, list[dict]]:
    assert main([str(a) for a in argv]) == 0
    data = json.loads(capsys.readouterr().out)
    return data["meta"], [r for r in data["tables"]["balance_flags"] if r["flagged"]]


@pytest.mark.parametrize("seats", [["human", "greedy"], ["human", "human"]], ids=["against a bot", "hot seat"])
def test_a_playtest_says_it_measures_a_persons_games_and_flags_nothing(tmp_path, capsys, seats):
    run = person_run(tmp_path / "pt", seats)
    meta, flagged = flags_of(capsys, "report", run, "--format", "json")
    assert meta["played"].startswith("A playtest: these 40 games were played by a person") and flagged == []
    assert "no balance flag" in meta["flags_statement"]
    assert main(["report", str(run)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith("A playtest: these 40 games were played by a person") and "one person played" in out
    page = tmp_path / "pt.html"
    assert main(["dashboard", str(run), "--out", str(page), "--examples", "0"]) == 0
    text = page.read_text()
    assert text.index("A playtest: these 40 games") < text.index('id="flags"')
    assert "Nothing flagged" in text


def test_flags_are_raised_from_a_playtest_when_asked(tmp_path, capsys):
    run = person_run(tmp_path / "pt", ["human", "greedy"])
    meta, flagged = flags_of(capsys, "report", run, "--format", "json", "--flag-played")
    assert {r["name"] for r in flagged} >= {"Fire", "Hate"} and "as asked (--flag-played)" in meta["played"]


def test_a_run_of_players_only_is_flagged_as_before(tmp_path, capsys):
    run = person_run(tmp_path / "bots", ["greedy", "greedy"])
    meta, flagged = flags_of(capsys, "report", run, "--format", "json")
    assert "played" not in meta and {r["name"] for r in flagged} >= {"Fire", "Hate"}
