"""The layers import one way, floor to roof (docs/architecture.md): sim < strategies < analysis <
protolab. import-linter checks every import against pyproject.toml's contracts; these tests run it,
show it fails on a climbing import, and keep imports at module level where cycles could hide."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sim", "strategies", "analysis", "protolab")
LINT = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
# Function-local imports of the project that are deliberate, with why.
DEFERRED = {
    ("protolab/__init__.py", "protolab.process"): "the Ctrl-C handler set before anything else loads",
    ("protolab/process.py", "protolab.cli"): "checked for shadowed layer names before importing them",
}


def _lint(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(pythonpath), "PATH": str(Path(sys.executable).parent)}
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def test_the_contracts_hold():
    r = _lint(ROOT, ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


def test_a_climbing_import_breaks_the_build(tmp_path):
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    pool = tmp_path / "sim" / "pool.py"
    pool.write_text(pool.read_text() + "\n\ndef _climb():\n    import strategies.spec  # noqa: F401\n")
    sibling = tmp_path / "protolab" / "experiment" / "train" / "trainplay.py"  # a feature reaching into another
    sibling.write_text(sibling.read_text() + "\nfrom protolab.experiment.tune.tuneplay import search_seeds  # noqa\n")
    r = _lint(tmp_path, tmp_path)
    assert r.returncode != 0
    assert "sim is not allowed to import strategies" in r.stdout
    assert "sim.pool -> strategies.spec" in r.stdout
    assert "protolab.experiment.train.trainplay -> protolab.experiment.tune.tuneplay" in r.stdout
    assert "protolab.experiment.train is not allowed to import protolab.experiment.tune" in " ".join(r.stdout.split())


def _local_imports(path: Path) -> list[tuple[int, str]]:
    """Project modules imported inside a function (not at module level)."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                found += [(node.lineno, n) for n in names if n.split(".")[0] in PACKAGES]
    return found


@pytest.mark.parametrize("pkg", PACKAGES)
def test_no_function_local_imports_of_the_project(pkg):
    """A local import of our own code only hides a cycle the layers forbid; the one deliberate
    exception is listed in DEFERRED with its reason."""
    bad = [
        f"{f.relative_to(ROOT)}:{line} imports {name}"
        for f in sorted((ROOT / pkg).rglob("*.py"))
        for line, name in _local_imports(f)
        if (str(f.relative_to(ROOT)), name) not in DEFERRED
    ]
    assert not bad, "\n".join(bad)


def test_the_local_import_check_sees_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from analysis.runs.open import open_runs\n    import json\n")
    assert _local_imports(f) == [(2, "analysis.runs.open")]


CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport|cimport\s+([\w.]+))", re.M)


def test_cython_cimports_point_down():
    """import-linter reads Python only: the engine's Cython files must not cimport a higher layer."""
    for f in sorted((ROOT / "sim").rglob("*.p[xy][dix]")):
        for m in CIMPORT.finditer(f.read_text()):
            target = (m.group(1) or m.group(2)).split(".")[0]
            assert target not in ("strategies", "analysis", "protolab"), f"{f.relative_to(ROOT)} cimports {target}"


def test_a_shadowed_layer_name_is_one_clear_error(tmp_path):
    """A notebook folder with its own analysis.py: `python -m protolab` (which puts the folder
    first on sys.path) names the module that shadows protolab's package, exit status 2."""
    (tmp_path / "analysis.py").write_text("x = 1\n")
    r = subprocess.run(
        [sys.executable, "-m", "protolab", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "'analysis'" in r.stderr and str(tmp_path / "analysis.py") in r.stderr
    assert "Traceback" not in r.stderr
