"""The tests are laid out as the packages are (the test of `analysis/stats/power.py` is under
`tests/analysis/stats/`) and stand alone: no test module imports another one; what several share
lives in tests/conftest.py or a `tests/fixtures_*` package."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


def modules_of_tests() -> list[Path]:
    return sorted(TESTS.rglob("test_*.py"))


def is_test(module: str) -> bool:
    return any(part.startswith("test_") for part in module.split("."))


def imported_tests(source: str) -> list[str]:
    """The test modules (`test_*`, at any depth of a dotted name) a Python source imports, wherever
    the import is written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            names = [base] if is_test(base) else [f"{base}.{a.name}".lstrip(".") for a in node.names]
        else:
            continue
        found += [n for n in names if is_test(n)]
    return sorted(set(found))


def test_no_test_module_imports_another():
    sources = [p for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts]
    found = {p.relative_to(ROOT).as_posix(): imported_tests(p.read_text()) for p in sources}
    bad = {p: names for p, names in found.items() if names}
    assert not bad, f"test modules imported (move what they share into a tests/fixtures_* package): {bad}"


def test_an_import_of_a_test_module_is_found_wherever_it_is_written():
    planted = (
        "import pytest\n"
        "from fixtures_analysis.synth import write_run\n"
        "from conftest import AB_GAMES\n"
        "from test_strategies import positions\n"
        "def helper():\n"
        "    import test_meta as m\n"
        "    from tests.sim import test_engine\n"
        "    from . import test_cards\n"
    )
    assert imported_tests(planted) == ["test_cards", "test_meta", "test_strategies", "tests.sim.test_engine"]
    assert imported_tests("import pytest\nfrom analysis.stats import power\n") == []


def test_each_test_folder_mirrors_a_package_folder():
    folders = {p.parent.relative_to(TESTS) for p in modules_of_tests()} - {Path(".")}
    assert folders, "no test sits in a package's folder"
    stray = sorted(f.as_posix() for f in folders if not any((ROOT / f).glob("*.py")))
    assert not stray, f"tests/<folder> must be named after a package folder of the repository: {stray}"


def test_test_file_names_are_unique():
    # pytest imports each test module by its file name, its folder put on sys.path (no __init__.py
    # under tests/): two tests of one name in two folders would collide.
    names = [p.name for p in modules_of_tests()]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)
