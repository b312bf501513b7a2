"""The players' numbers are declared once (strategies/declared.py) and the compiled players were
built from that table; the splitmix constants live in one source file (sim/engine/rng.pxd)."""

import re
from pathlib import Path

import pytest

from strategies import _features, declared, declared_gen, spec
from strategies.errors import StrategyError
from strategies.spec import learned_player

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DIRS = ("sim", "strategies", "analysis", "protolab", "benchmarks", "tests")
SOURCE_SUFFIXES = {".py", ".pyx", ".pxd", ".pxi", ".sh", ".md"}
GENERATED = re.compile(r"(_vocab_\w+\.pxi|_declared\.px[di])$")  # .gitignore: written by setup.py


def _sources() -> list[Path]:
    """Every hand-written source file of the project (generated includes and C translations aside)."""
    return [
        p
        for d in SOURCE_DIRS
        for p in (ROOT / d).rglob("*")
        if p.suffix in SOURCE_SUFFIXES and not GENERATED.search(p.name) and p.is_file()
    ]


def test_compiled_players_were_built_from_the_table():
    """Every constant the C players use has the table's value in the compiled module."""
    assert _features.DECLARED_IN_C == {**declared.c_integers(), **declared.c_reals()}
    assert _features.VECTOR_LENGTH == len(declared.FEATURES) == len(declared.FEATURE_SCALES)


def test_generated_includes_match_the_table():
    assert declared_gen.PXD.read_text() == declared_gen.pxd_text()
    assert declared_gen.PXI.read_text() == declared_gen.pxi_text()


def test_every_feature_scale_is_declared():
    assert {s for _, s in declared.FEATURE_SCALES if s} == set(declared.SCALE)
    assert all(s.by > 0 and (s.lo is None) == (s.hi is None) for s in declared.SCALES)


def test_features_divide_by_named_scales_only():
    """No feature is scaled by a written-out number in the C code: each is a declared scale."""
    text = (ROOT / "strategies" / "_features.pyx").read_text()
    assert not re.findall(r"/=?\s*\d+(\.\d*)?\b", text)


@pytest.mark.parametrize(
    "top, ok",
    [(declared.by_key(declared.LEARNED)["top"].hi, True), (declared.by_key(declared.LEARNED)["top"].hi + 1, False)],
)
def test_learned_top_limit_is_the_c_room(top, ok):
    """The spec's limit on `top` is the C player's room for plans (MAXTOP)."""
    assert declared.c_integers()["MAXTOP"] == declared.by_key(declared.LEARNED)["top"].hi
    if ok:
        learned_player({"top": top})
    else:
        with pytest.raises(StrategyError, match="top must be a whole number"):
            learned_player({"top": top})


def test_splitmix_constants_in_one_source_file():
    """splitmix64's increment and finaliser constants are written in sim/engine/rng.pxd only."""
    rng = ROOT / "sim" / "engine" / "rng.pxd"
    constants = set(re.findall(r"0x[0-9A-Fa-f]{16}", rng.read_text()))
    assert len(constants) >= 3  # the increment and the finaliser's two multipliers (and the stream step)
    pattern = re.compile("|".join(constants), re.IGNORECASE)
    holders = sorted(str(p.relative_to(ROOT)) for p in _sources() if pattern.search(p.read_text(errors="replace")))
    assert holders == ["sim/engine/rng.pxd"]


def test_the_spec_syntax_states_the_declared_defaults():
    """strategies/spec.py's docstring (the syntax users read) gives each player's defaults as the table has them."""
    tables = {"search": declared.SEARCH, "ismcts": declared.ISMCTS, "learned": declared.LEARNED}
    said = {
        name: dict(kv.split("=") for kv in args.split(","))
        for name, args in re.findall(r"^\s*(search|ismcts|learned):(\S+)", spec.__doc__, re.MULTILINE)
    }
    assert set(said) == set(tables)
    for name, table in tables.items():
        numbers = {k: float(v) for k, v in said[name].items() if k in declared.by_key(table)}
        assert numbers and all(declared.by_key(table)[k].default == v for k, v in numbers.items()), (name, numbers)
