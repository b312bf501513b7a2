"""The examples in the public entry points' docstrings run as written (README, "Python API"):
`load_pool`, `State`, `play_games`, `RunOptions`, `open_runs`. Each module's examples are cheap
(no Ray, a few games of one set)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ("sim.pool", "sim.state", "strategies.seats", "protolab.experiment.run.runner", "analysis.runs.open")


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no docstring example"
    assert result.failed == 0, f"{name}: {result.failed} docstring example(s) failed"
