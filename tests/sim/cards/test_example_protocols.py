"""The example corpus (issue 49): every box of datasets/protocols/examples/ is read from its printed
text, except the boxes listed here as refused (the honest state of the reader), and none of these
files is loaded as an official protocol."""

from pathlib import Path

import pytest

from sim.cards.loader import OFFICIAL_DIR

EXAMPLES = OFFICIAL_DIR / "examples"

# (file, card, box) -> printed wording the reader refuses today.
REFUSED: dict[tuple[str, int, str], str] = {}


def test_the_corpus_read_figure(capsys):
    """The share of the corpus's boxes read as printed (docs/cards.md, Example protocols)."""
    from protolab.cli import main  # noqa: PLC0415

    main(["cards", "check", *map(str, example_files())])
    boxes = 105
    assert f"{boxes - len(REFUSED)} of {boxes} boxes encoded; {len(REFUSED)} refused" in capsys.readouterr().out


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


# every protocol of the corpus with no refused box (one refused box keeps a protocol from loading)
LOADABLE = tuple(p.stem for p in example_files() if p.name not in {name for name, _, _ in REFUSED})


def test_the_loadable_corpus_plays_with_invariants_checked():
    """Random and bot games drafting the protocols that load: every new step (the trash taken
    into a hand, a text play onto the opponent's side, the composed restrictions) keeps the
    invariants at every decision."""
    import numpy as np  # noqa: PLC0415

    from sim.pool import load_pool  # noqa: PLC0415
    from strategies.seats import play_games  # noqa: PLC0415

    pool = load_pool(("Main 1",), cards=[EXAMPLES / f"{name}.toml" for name in LOADABLE])
    for strategies in (("random", "random"), ("greedy", "disrupt")):
        cols = play_games(pool, range(5_000, 5_400), check_invariants=True, strategies=strategies)
        bad = np.nonzero(cols["violation"])[0]
        assert len(bad) == 0, f"invariant {cols['violation'][bad[0]]} violated at seed {cols['seed'][bad[0]]}"
        drafted = {pool.protocols[p] for p in np.unique(cols["protocols"]).tolist()}
        assert {name.capitalize() for name in LOADABLE} <= drafted
