"""The repository stands alone: no file in it reaches outside it, and the rules document it ships
(docs/rules.md) defines every rule number a scenario cites."""

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "docs" / "rules.md"
SCENARIOS = ROOT / "tests" / "scenarios"

# Top folders of a development machine's own disk. The pattern is assembled from the names so that
# this file does not match itself.
MACHINE_ROOTS = ("work", "home", "Users")
ABSOLUTE = re.compile(r"(?<![\w.~/:-])/(?:" + "|".join(MACHINE_ROOTS) + r")/[^\s\"'`)\]]*")
# A relative path that starts by climbing one folder or more (a leading dot-dot-slash).
UPWARD = re.compile(r"(?<![\w./-])(?:\.\./)+[\w./-]*")
# Path(__file__)...parents[N] or Path(__file__)...parent.parent: climbing from the file itself.
FROM_FILE = re.compile(r"Path\(__file__\)(?:\.resolve\(\))?(?:\.parents\[(\d+)\]|((?:\.parent\b)+))")
RULE_NUMBER = re.compile(r"^(\d+)\.(\d+) ", flags=re.M)  # as in tests/sim/test_scenarios.py
SECTION = re.compile(r"^## (\d+)\. ", flags=re.M)


def line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def leads_outside(rel: Path, target: str) -> bool:
    """Whether `target`, read relative to the folder of repository file `rel`, lands outside ROOT or
    on nothing inside it: a climbing path that names no file of the checkout is taken to mean a
    folder beside it (a "shared" sibling seen from a nested folder lands inside, on nothing)."""
    landed = Path(os.path.normpath(ROOT / rel.parent / target))
    return not landed.is_relative_to(ROOT) or not landed.exists()


def parents_climb_out(rel: Path, index: int | None, chain: str | None) -> bool:
    """Whether Path(__file__).parents[index] (or a chain of .parent) of file `rel` is above ROOT."""
    steps = index + 1 if index is not None else chain.count(".parent")
    return steps > len(rel.parts)


def outside_references(rel: Path, text: str) -> list[tuple[int, str]]:
    """The (line, path) pairs in `text`, the content of repository file `rel`, that lead out of the
    repository: absolute paths of a machine's disk, relative paths that climb above the root (or
    to nothing that exists in it), and Python code climbing from its own file above the root."""
    found = [(line_of(text, m.start()), m.group(0)) for m in ABSOLUTE.finditer(text)]
    found += [(line_of(text, m.start()), m.group(0)) for m in UPWARD.finditer(text) if leads_outside(rel, m.group(0))]
    for m in FROM_FILE.finditer(text):
        index = int(m.group(1)) if m.group(1) is not None else None
        if parents_climb_out(rel, index, m.group(2)):
            found.append((line_of(text, m.start()), m.group(0)))
    return sorted(found)


def repository_files() -> list[Path]:
    """Files git tracks, plus new ones it does not ignore (they are about to be committed)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's files cannot be listed")
    return [Path(p) for p in out.decode().split("\0") if p]


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary or deleted file."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def test_no_file_reaches_outside_the_repository():
    """A clean clone with nothing beside it must work: no test, code or doc may read or cite a
    path outside the checkout (a sibling folder, a folder of the development machine)."""
    problems = []
    for rel in repository_files():
        text = text_of(ROOT / rel)
        if text is not None:
            problems += [f"{rel}:{line}: {ref}" for line, ref in outside_references(rel, text)]
    assert not problems, "paths outside the repository:\n" + "\n".join(problems)


# Samples for the detector, assembled from pieces so that this file does not flag itself.
UP, HERE = ".." + "/", "Path(__file__)"
MACHINE_PATH = "/" + "work/elsewhere/reference/cards.json"


@pytest.mark.parametrize(
    "rel, text, expected",
    [
        ("README.md", f"rules in `{UP}elsewhere/rules/game-rules.md`;", [f"{UP}elsewhere/rules/game-rules.md"]),
        ("docs/data.md", f"see [rules]({UP}{UP}elsewhere/rules.md)", [f"{UP}{UP}elsewhere/rules.md"]),
        ("docs/data.md", f"see [rules]({UP}README.md) and {UP}tests/reference/", []),
        ("datasets/experiments/ab.toml", f'cards = ["{UP}readings/unity_4_start.toml"]', []),
        ("tests/scenarios/cards/a.toml", f'cards = ["{UP * 3}datasets/readings/unity_4_start.toml"]', []),
        ("tests/scenarios/cards/a.toml", f'cards = ["{UP * 4}datasets/x.toml"]', [f"{UP * 4}datasets/x.toml"]),
        ("tests/reference/README.md", f"from {UP}{UP}elsewhere/rules.md", [f"{UP}{UP}elsewhere/rules.md"]),
        ("tests/test_x.py", HERE + '.resolve().parents[1] / "datasets"', []),
        ("tests/test_x.py", HERE + '.resolve().parents[2] / "elsewhere"', [HERE + ".resolve().parents[2]"]),
        ("sim/cards/loader.py", HERE + '.resolve().parent.parent.parent / "datasets"', []),
        ("sim/cards/loader.py", HERE + ".parent.parent.parent.parent", [HERE + ".parent.parent.parent.parent"]),
        ("tests/test_x.py", "Path(sim.__file__).resolve().parents[1]", []),
        ("docs/data.md", f"the data lives in {MACHINE_PATH} today", [MACHINE_PATH]),
        ("docs/data.md", "https://example.org/work/page and a/home/b are not paths of this machine", []),
    ],
)
def test_outside_references_are_found(rel, text, expected):
    """The detector flags what leaves the checkout and nothing that stays inside it."""
    assert [ref for _, ref in outside_references(Path(rel), text)] == expected


def rule_numbers() -> list[str]:
    return [f"{a}.{b}" for a, b in RULE_NUMBER.findall(RULES.read_text())]


def test_rules_document_numbers_are_unique_and_in_their_section():
    """Scenarios cite rules by number, so a number names one rule, under its own section, in order."""
    text = RULES.read_text()
    sections = [(m.start(), m.group(1)) for m in SECTION.finditer(text)]
    problems, last = [], {}
    for m in RULE_NUMBER.finditer(text):
        number, rule = m.group(1), int(m.group(2))
        section = next((s for at, s in reversed(sections) if at < m.start()), None)
        if section != number:
            problems.append(f"{number}.{rule} stands under section {section}")
        if rule <= last.get(number, 0):
            problems.append(f"{number}.{rule} comes after {number}.{last[number]} (repeated or out of order)")
        last[number] = rule
    assert len(rule_numbers()) >= 40, f"{RULES}: no numbered rules found (each starts a line as 'N.M ')"
    assert not problems, problems


def test_every_cited_rule_is_in_the_rules_document(pool):
    """A scenario's `rule` names a card of the pool, a card of a file the scenario loads (`cards`),
    or a rule number defined in docs/rules.md."""
    numbers = set(rule_numbers())
    cards = {c.name.lower() for c in pool.cards}
    wrong = []
    for path in sorted(SCENARIOS.glob("*/*.toml")):
        data = tomllib.loads(path.read_text())
        rule = str(data.get("rule", ""))
        own = {
            f"{p['protocol']} {c['value']}".lower()
            for p in (tomllib.loads((path.parent / f).read_text()) for f in data.get("cards", []))
            if "protocol" in p
            for c in p.get("cards", [])
        }
        if rule not in numbers and rule.lower() not in cards | own:
            wrong.append(f"{path.relative_to(ROOT)}: rule = {rule!r}")
    assert not wrong, "scenarios citing neither a card nor a rule of docs/rules.md:\n" + "\n".join(wrong)
