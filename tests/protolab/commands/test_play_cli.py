"""`protolab play`'s bad input: one line naming the flag or the file, exit status 2, nothing served
and nothing written."""

from __future__ import annotations

import pytest

from protolab.cli import main
from protolab.commands import play


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
