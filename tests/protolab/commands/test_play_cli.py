"""`protolab play`'s bad input: one line naming the flag or the file, exit status 2, nothing served
and nothing written."""

from __future__ import annotations

import json

import pytest

from protolab.cli import main
from protolab.commands import play
from protolab.play.playtest import create, spec_of
from protolab.play.server import Table


@pytest.fixture
def never_served(monkeypatch):
    def serve(*args, **kwargs):
        raise AssertionError("the command would serve: its input was taken as good")

    monkeypatch.setattr(play, "make_server", serve)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--opponent", "nonsense"], "unknown strategy 'nonsense'"),
        (["--protocols", "Fire,Water", "Hate,Light,Life"], "--protocols takes two trios"),
        (["--protocols", "Fire,Water,Death", "Fire,Light,Life"], "six"),
        (["--cards", "no-such-file.toml"], "no-such-file.toml"),
        (["--games", "0"], "--games"),
        (["--hot-seat", "--opponent", "greedy"], "--hot-seat"),
        (["--port", "70000"], "--port"),
    ],
)
def test_bad_input_is_one_line(argv, says, never_served, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["play", *argv, "--out", str(tmp_path / "pt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err, err
    assert not (tmp_path / "pt").exists() and not (tmp_path / "runs").exists()


def test_a_folder_that_is_not_a_playtest_is_refused(never_served, tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["play", "--opponent", "greedy", "--out", str(tmp_path)]) == 2
    assert "holds files but no playtest" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def edit_answers(raw: dict, how: str) -> str:
    """A played file edited by hand: an impossible option, answers of the wrong type, or broken JSON."""
    if how == "option 999":
        raw["answers"][3] = 999
    elif how == "answers a string":
        raw["answers"] = "0 0 0"
    else:
        return json.dumps(raw)[:-7]
    return json.dumps(raw)


@pytest.mark.parametrize("how", ["option 999", "answers a string", "cut short"])
@pytest.mark.parametrize("command", ["play", "replay"])
def test_an_edited_played_file_is_one_line_naming_it(command, how, never_served, tmp_path, capsys):
    out = tmp_path / "pt"
    trios = [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]
    table = Table(create(str(out), spec_of("greedy", 4, 1, trios, [], None)), {})
    for _ in range(5):
        table.decide({"option": 0})
    played = out / "played" / "game-00000.json"
    played.write_text(edit_answers(json.loads(played.read_text()), how))
    before = played.read_text()
    argv = ["play", "--out", str(out)] if command == "play" else ["replay", str(out), "--game", "0"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and str(played) in captured.err, captured.err
    assert "Traceback" not in captured.err and "decision 4" not in captured.out
    assert played.read_text() == before  # nothing rewritten


def test_a_python_opponent_is_refused_naming_what_play_can_do(never_served, tmp_path, capsys):
    assert main(["play", "--opponent", "evilmod:X", "--out", str(tmp_path / "pt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'evilmod' is a user strategy (Python code)" in err, err
    assert "expected a built-in strategy (e.g. greedy, search, learned)" in err
    assert "experiment run with --allow-code" in err  # the flag belongs to `run`, and is named as such
    assert not (tmp_path / "pt").exists()
