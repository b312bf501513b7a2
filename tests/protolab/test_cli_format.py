"""Every command with a result table takes `--format table|json|csv` (`--json` kept as an alias where it
existed); `protolab --version` prints the installed version."""

from __future__ import annotations

import csv
import io
import json
from importlib.metadata import version

import pytest

from protolab.cli import main

COMMANDS = {  # argv, the CSV's first columns
    "simulate": (["simulate", "--games", "40", "--strategies", "random", "random"], ["protocol", "games", "win_rate"]),
    "bench": (["bench", "--games", "100", "--repeats", "1"], ["games", "seconds", "games_per_second"]),
    "ladder": (["ladder", "random", "greedy", "--games", "4"], ["a", "b", "games", "wins_a"]),
    "cards list": (["cards", "list", "--set", "Main 1"], ["name", "protocol", "set", "value"]),
    "cards show": (["cards", "show", "Fire 1"], ["name", "protocol", "set", "value"]),
}


def output(capsys, argv: list[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_csv_is_one_table(capsys, name):
    argv, head = COMMANDS[name]
    rows = list(csv.DictReader(io.StringIO(output(capsys, [*argv, "--format", "csv"]))))
    assert rows and list(rows[0])[: len(head)] == head
    if name == "cards list":
        listed = json.loads(output(capsys, [*argv, "--format", "json"]))
        assert [r["name"] for r in rows] == [c["name"] for c in listed] and rows[0]["encoded"] in ("True", "False")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_json_and_table(capsys, name):
    argv, _ = COMMANDS[name]
    json.loads(output(capsys, [*argv, "--format", "json"]))
    assert not output(capsys, [*argv, "--format", "table"]).lstrip().startswith(("{", "["))


@pytest.mark.parametrize("name", ["simulate", "ladder", "bench"])
def test_json_is_an_alias_of_format_json(capsys, name):
    argv, _ = COMMANDS[name]
    a = json.loads(output(capsys, [*argv, "--json"]))
    b = json.loads(output(capsys, [*argv, "--format", "json"]))
    volatile = {"seconds", "games_per_second", "decisions_per_second"}
    assert {k: v for k, v in a.items() if k not in volatile} == {k: v for k, v in b.items() if k not in volatile}


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--format", "xml"],
        ["cards", "list", "--format", "yaml"],
        ["ladder", "random", "greedy", "--format", "tsv"],
    ],
)
def test_an_unknown_format_is_one_line_exit_2(capsys, argv):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("protolab: error:") and "--format" in err[0]


def test_version_is_the_installed_one(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"protolab {version('protolab')}"
