"""The Python API works from the repository root after the README's install (issue: the source
folders there shadowed a non-editable install's compiled package, `cannot import name '_core'`).

A fresh clone of this repository, installed the README's way into a fresh virtualenv, then the
README's Python API run from the clone's root. Slow (it compiles the engine, unoptimised) but part of the
suite."""

import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

API = """
import numpy as np
from sim.pool import load_pool
from strategies.seats import play_games
cols = play_games(load_pool(), np.arange(1, 11), ("greedy", "greedy"))
import sim.engine._core as core
print(len(cols["winner"]), core.__file__)
"""


def readme_install() -> list[str]:
    """The pip arguments of the README's Quickstart command 1."""
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"# 1\..*\n(.*)\n", readme).group(1)
    install = re.search(r"pip install ([^&]+?) &&", command).group(1).split()
    assert install, command
    return install


@pytest.mark.slow
def test_the_api_works_from_the_repository_root(tmp_path):
    clone = tmp_path / "protolab"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env_dir = tmp_path / "venv"
    venv.create(env_dir)  # pip, setuptools and the rest: this interpreter's, through deps.pth
    py = env_dir / "bin" / "python"
    # the build and run dependencies from this interpreter, without a download (no network)
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    offline = ["--no-index", "--no-build-isolation", "--no-deps"]
    # Unoptimised machine code (setup.py, PROTOLAB_OPT): what this proves is where the package is imported
    # from, not how fast it plays, and the compile takes a quarter of the time.
    quick = {**os.environ, "PROTOLAB_OPT": "0"}
    subprocess.run(
        [str(py), "-m", "pip", "install", "-q", *offline, *readme_install()], cwd=clone, check=True, env=quick
    )
    out = subprocess.run([str(py), "-c", API], cwd=clone, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    games, core = out.stdout.split()
    assert games == "10" and Path(core).resolve().is_relative_to(clone.resolve())


def test_a_bad_optimisation_level_is_one_line_before_anything_is_built():
    r = subprocess.run(
        [sys.executable, "setup.py", "--name"],
        cwd=ROOT,
        env={**os.environ, "PROTOLAB_OPT": "fast"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1
    assert r.stderr.strip() == (
        "setup.py: environment variable PROTOLAB_OPT: expected 0, 1, 2 or 3 (the -O level), got 'fast'"
    )
