"""The example corpus (issue 49): every box of datasets/protocols/examples/ is read from its printed
text, except the boxes listed here as refused (the honest state of the reader), and none of these
files is loaded as an official protocol."""

from pathlib import Path

import pytest

from sim.cards.loader import OFFICIAL_DIR

EXAMPLES = OFFICIAL_DIR / "examples"

# (file, card, box) -> printed wording the reader refuses today.
REFUSED = {
    ("trade.toml", 2, "middle"): "Your opponent gives you 1 card from their hand.",
    ("trade.toml", 4, "middle"): "Gain control of 1 of your opponent's uncovered cards in this line.",
    ("vault.toml", 3, "middle"): "Draw 1 card from your trash.",
}


def example_files() -> list[Path]:
    return sorted(EXAMPLES.glob("*.toml"))


def test_examples_are_not_official():
    from sim.cards.loader import official_files  # noqa: PLC0415

    assert example_files()
    assert not set(official_files()) & set(example_files())


@pytest.mark.parametrize("path", example_files(), ids=lambda p: p.stem)
def test_every_box_reads_except_the_listed_refusals(path: Path, capsys):
    from protolab.cli import main  # noqa: PLC0415

    main(["cards", "check", str(path)])
    out = capsys.readouterr().out
    refused = {line.split('"')[1] for line in out.splitlines() if line.strip().startswith("refused:")}
    listed = {text for (name, _, _), text in REFUSED.items() if name == path.name}
    assert refused == listed


FAN = Path(__file__).parents[2] / "fixtures_text" / "fan_kingdom.toml"


def test_cards_check_names_every_refused_fan_box_in_one_pass(capsys):
    from protolab.cli import main  # noqa: PLC0415

    main(["cards", "check", str(FAN)])
    out = capsys.readouterr().out
    refused = [line.split(": ")[2] for line in out.splitlines() if "refused:" in line]
    assert refused == ["Kingdom 0", "Kingdom 1", "Kingdom 3", "Kingdom 5"]
    assert "3 of 7 boxes encoded; 4 refused" in out


SCENARIOS = sorted((Path(__file__).parents[2] / "scenarios" / "examples").glob("*/*.toml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_scenario(path: Path):
    """tests/sim/test_scenarios.py globs one level deep; the corpus's scenarios sit one further."""
    from sim.scenario import run_file  # noqa: PLC0415

    result = run_file(path)
    assert result.ok, result.report()
