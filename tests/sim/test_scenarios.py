"""Every scenario file (one per card, ruling and rule) must pass; see docs/scenarios.md."""

from pathlib import Path

import pytest

from sim.scenario import run_file

ROOT = Path(__file__).parents[1] / "scenarios"
FILES = sorted(ROOT.glob("*/*.toml"))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_scenario(path):
    result = run_file(path)
    assert result.ok, result.report()


def test_every_card_has_a_scenario(pool):
    """Each of the 180 cards is named by the `rule` of at least one card scenario."""
    import tomllib

    covered = set()
    for p in (ROOT / "cards").glob("*.toml"):
        covered.add(tomllib.loads(p.read_text())["rule"].lower())
    missing = [c.name for c in pool.cards if c.name.lower() not in covered]
    assert not missing, f"cards without a scenario: {missing}"


def test_every_ruling_has_its_own_scenario():
    """A card with clarifications, rulings or supplemental rulings has at least one scenario for
    the card plus one per such item (the scenario names say which one they prove)."""
    import json
    import tomllib
    from collections import Counter

    ref = Path(__file__).resolve().parents[1] / "reference" / "cards.json"
    count = Counter(tomllib.loads(p.read_text())["rule"].lower() for p in (ROOT / "cards").glob("*.toml"))
    short = []
    for proto in json.loads(ref.read_text())["protocols"]:
        for c in proto["cards"]:
            need = 1 + sum(len(c.get(k, [])) for k in ("clarifications", "rulings", "supplemental_rulings"))
            if count[c["name"].lower()] < need:
                short.append(f"{c['name']}: {count[c['name'].lower()]} scenarios for {need} items")
    assert not short, short


def test_every_numbered_rule_has_a_scenario():
    import re
    import tomllib

    rules_md = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    assert rules_md.exists(), f"the rules document is missing: {rules_md}"
    text = rules_md.read_text()
    numbered = set(re.findall(r"^(\d+\.\d+) ", text, flags=re.M))
    testable = {r for r in numbered if r.split(".")[0] in {"2", "3", "4", "5", "6", "7", "9", "10"}} | {"11.1"}
    covered = set()
    for p in (ROOT / "rules").glob("*.toml"):
        covered.add(str(tomllib.loads(p.read_text()).get("rule")))
    for p in (ROOT / "cards").glob("*.toml"):
        covered.add(str(tomllib.loads(p.read_text()).get("rule")))
    missing = sorted(testable - covered, key=lambda r: [int(x) for x in r.split(".")])
    assert not missing, f"numbered rules without a scenario: {missing}"


def test_failing_expectation_reports_difference(tmp_path):
    """The runner must catch a wrong expectation and say what differed."""
    src = (ROOT / "cards" / "fire_1.toml").read_text()
    bad = src.replace("[expect]", '[expect]\ncontrol = "B"')
    f = tmp_path / "bad.toml"
    f.write_text(bad)
    r = run_file(f)
    assert not r.ok
    assert any("control: expected 'B'" in p for p in r.problems)
