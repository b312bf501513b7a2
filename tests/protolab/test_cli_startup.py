"""The command line answers `--version` and `--help` without loading the heavy libraries, and
the light list of commands (protolab/commands/registry.py) is the one the parser builds."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from protolab.cli import build_parser, main
from protolab.commands.registry import COMMANDS

HEAVY = ("pandas", "duckdb", "ray", "pyarrow", "scipy")

PROBE = """
import json, sys
from protolab import main
sys.argv = ["protolab", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy} if m in sys.modules)))
"""


def heavy_modules_after(*argv: str) -> list[str]:
    """The heavy libraries a fresh interpreter has loaded after `protolab ARGV`."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_version_and_help_load_nothing_heavy(argv):
    assert heavy_modules_after(*argv) == []


def test_the_probe_sees_a_heavy_import():
    # the probe itself can fail: a command reading run folders loads DuckDB
    assert "duckdb" in heavy_modules_after("report", "--help")


def test_the_parser_builds_exactly_the_listed_commands():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == [c.name for c in COMMANDS]
    assert {a.dest: a.help for a in sub._choices_actions} == {c.name: c.help for c in COMMANDS}


@pytest.mark.parametrize("name", [c.name for c in COMMANDS])
def test_every_command_has_its_help(name, capsys):
    with pytest.raises(SystemExit) as e:
        main([name, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: protolab {name}")
    assert "%%" not in out


def test_readme_table_lists_every_command():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = readme.split("## What you can do today", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `protolab ([a-z]+)", table, flags=re.M))
    assert {c.name for c in COMMANDS} <= listed
