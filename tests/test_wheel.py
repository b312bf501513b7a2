"""The installed wheel is the tested package: built by `pip wheel .`, installed into a fresh
virtualenv, and run from a folder outside the checkout, every command's `--help` (taken from the
parser, so a new command is covered) and a small experiment end to end (run, report, dashboard, a
board page) work. A subpackage or data file the wheel leaves out fails here, not on a cluster node."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

# Run by the wheel's interpreter: every command path of the parser (subcommands included) and what
# its --help exits with; the full parser imports every command module, as `protolab --help` of each does.
HELPS = r"""
import argparse, contextlib, io, json
from protolab.cli import build_parser, main

def paths(parser, prefix=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*prefix, name)
                yield from paths(sub, (*prefix, name))

codes = {}
for path in [(), *paths(build_parser())]:
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            main([*path, "--help"])
        codes[" ".join(path)] = ["no exit", 0]
    except SystemExit as e:
        codes[" ".join(path)] = [e.code, len(out.getvalue())]
print(json.dumps(codes))
"""


def test_the_wheel_holds_every_package_of_the_tree(wheel):
    """Every package folder of the four layers and of datasets/ is in the wheel, with the data files
    the commands read (templates, specs, protocols, models)."""
    root = Path(__file__).resolve().parents[1]
    names = zipfile.ZipFile(wheel.wheel).namelist()
    folders = {str(Path(n).parent) for n in names}
    for layer in ("sim", "strategies", "analysis", "protolab"):
        for init in (root / layer).rglob("*.py"):
            if "__pycache__" not in init.parts:
                assert str(init.parent.relative_to(root)) in folders, f"{init.parent} is not in the wheel"
    for data in (root / "datasets").rglob("*"):
        if data.suffix in (".toml", ".json", ".md"):
            inside = "protolab_datasets/" + str(data.relative_to(root / "datasets"))
            assert inside in names, f"{data} is not in the wheel"
    assert any(n.startswith("sim/engine/_core.") and n.endswith(".so") for n in names)


def test_every_command_answers_help_from_the_installed_wheel(wheel, tmp_path):
    where = wheel.run(
        "python", "-c", "import sim, analysis, protolab; print(sim.__file__, protolab.__file__)", cwd=tmp_path
    ).stdout
    assert str(wheel.venv) in where and "/tests/" not in where, where  # the wheel's files, not the checkout's
    codes = json.loads(wheel.run("python", "-c", HELPS, cwd=tmp_path).stdout)
    assert {"run", "report", "compare", "dashboard", "cardvalue", "tune", "train", "cards check"} <= set(codes)
    bad = {path: c for path, c in codes.items() if c[0] != 0 or c[1] == 0}
    assert not bad, bad
    assert wheel.run("protolab", "--version", cwd=tmp_path).stdout.startswith("protolab ")


@pytest.mark.slow
def test_a_small_experiment_runs_end_to_end_from_the_installed_wheel(wheel, tmp_path):
    """`protolab run demo` (the shipped spec, found inside the wheel), then the report, the
    dashboard and a board page of one of its games, all by the installed command."""
    r = wheel.run(
        "protolab", "run", "demo", "--games", "500", "--workers", "1", "--out", "runs", "--no-progress", cwd=tmp_path
    )
    (run_dir,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["complete"] and manifest["games"] == 500, r.stdout
    assert r.stdout.count("Protocol win rate") == 1 and "500 games" in r.stdout  # one report, not two
    report = wheel.run("protolab", "report", run_dir, "--format", "json", cwd=tmp_path).stdout
    assert json.loads(report)
    wheel.run("protolab", "dashboard", run_dir, "--out", "d.html", cwd=tmp_path)
    assert (tmp_path / "d.html").stat().st_size > 10_000
    wheel.run("protolab", "replay", run_dir, "--game", "0", "--html", "b.html", cwd=tmp_path)
    assert "<html" in (tmp_path / "b.html").read_text()[:2000].lower()
