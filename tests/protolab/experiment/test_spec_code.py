"""A spec that names Python code (a user strategy `pkg.mod:Class`) is a program: `protolab run` runs
it only with --allow-code, and checking the spec finds a missing class by reading the module's
source, without running the module or its packages (docs/experiments.md)."""

from __future__ import annotations

import sys

import pytest

from protolab.cli import main

SPEC = 'name = "code"\nseed = 1\ngames = 2\nshard_games = 2\nevents = false\n[seats]\nstrategies = ["{0}", "random"]\n'
BOTS = """
import pathlib
pathlib.Path({marker!r}).write_text("ran")
from strategies.user import Strategy


class First(Strategy):
    def choose(self, observation, decision):
        return 0
"""


@pytest.fixture
def code(tmp_path, monkeypatch):
    """A package `codepkg` whose package and module each leave a marker file when they run."""
    pkg = tmp_path / "src" / "codepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(f"import pathlib\npathlib.Path({str(tmp_path / 'pkg-ran')!r}).write_text('ran')\n")
    (pkg / "bots.py").write_text(BOTS.format(marker=str(tmp_path / "module-ran")))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    yield tmp_path
    for name in ("codepkg", "codepkg.bots"):
        sys.modules.pop(name, None)


def run_spec(tmp, capsys, strategy: str, *more: str) -> tuple[int, str, str]:
    spec = tmp / "spec.toml"
    spec.write_text(SPEC.format(strategy))
    code = main(["run", str(spec), "--out", str(tmp / "runs"), "--no-progress", *more])
    out, err = capsys.readouterr()
    return code, out, err


def nothing_ran(tmp) -> bool:
    return not (tmp / "pkg-ran").exists() and not (tmp / "module-ran").exists()


def test_a_spec_naming_code_needs_allow_code(code, capsys):
    rc, _, err = run_spec(code, capsys, "codepkg.bots:First")
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "spec.toml: key 'seats.strategies[0]'" in err and "--allow-code" in err and "'codepkg.bots'" in err
    assert nothing_ran(code)
    assert not (code / "runs").exists()


@pytest.mark.parametrize("allow", [(), ("--allow-code",)], ids=["refused", "allowed"])
def test_a_missing_class_is_named_without_running_the_module(code, capsys, allow):
    rc, _, err = run_spec(code, capsys, "codepkg.bots:Missing", *allow)
    assert rc == 2 and "has no 'Missing'" in err and "codepkg.bots" in err, err
    assert nothing_ran(code)


def test_a_missing_module_is_named_without_running_its_package(code, capsys):
    rc, _, err = run_spec(code, capsys, "codepkg.nothere:X", "--allow-code")
    assert rc == 2 and "cannot import module 'codepkg.nothere'" in err, err
    assert nothing_ran(code)


def test_naming_a_standard_module_runs_none_of_it(code, capsys):
    rc, out, err = run_spec(code, capsys, "this:X", "--allow-code")
    assert rc == 2 and "module 'this'" in err and "has no 'X'" in err, err
    assert "Beautiful is better than ugly" not in out + err


def test_ladder_checks_the_class_before_importing(code, capsys):
    rc = main(["ladder", "codepkg.bots:Missing", "greedy", "--games", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "has no 'Missing'" in err, err
    assert nothing_ran(code)


def test_with_allow_code_the_module_runs(code, capsys):
    from protolab.experiment.run.plan import make_plan
    from protolab.experiment.spec import load_spec

    spec = code / "spec.toml"
    spec.write_text(SPEC.format("codepkg.bots:First"))
    make_plan(load_spec(str(spec)), allow_code=True)  # checks the seats: imports the module
    assert (code / "module-ran").exists()
