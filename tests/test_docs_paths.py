"""Every file path README.md and docs/*.md name exists: a path written out in the text (`sim/...`,
`analysis/...`, `tests/...`, ...; a glob or a `{a,b}` choice must match something) and every relative link.
A reorganisation that moves a module fails here until the docs follow it."""

from __future__ import annotations

import glob
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP = ("sim", "strategies", "analysis", "protolab", "tests", "datasets", "benchmarks", "deploy", "docs")
# A repository path anywhere in the text: not the tail of a URL or of a longer path, with an optional
# `{json,md}` choice at its end.
NAMED = re.compile(r"(?<![\w/.~$-])((?:" + "|".join(TOP) + r")/[\w./*-]*)(\{[\w.,-]+\})?")
LINK = re.compile(r"\]\(([^)\s]+)\)")

# Paths the docs name on purpose though the checkout does not hold them, each with its reason.
NOT_IN_CHECKOUT = {
    "strategies/_firstface.pyx": "the new file of docs/architecture.md's worked example of a new player",
    "datasets/drafts/mine.toml": "the table docs/strategies.md's example command writes (`--out`)",
    "sim/cards/vocabulary.py": "docs/results.md's record of the modules over 800 lines then (now a package)",
}


def named_paths(text: str) -> list[tuple[int, str]]:
    """(line, repository path) for each path the text names, choices expanded, placeholders left out."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in NAMED.finditer(line):
            if line.startswith("<", m.end(1)):  # a placeholder: `protolab/commands/<name>.py`
                continue
            if m.group(2):
                out += [(n, m.group(1) + c) for c in m.group(2).strip("{}").split(",")]
            else:
                out.append((n, m.group(1).rstrip(".,;:-")))
    return out


def linked_paths(text: str) -> list[tuple[int, str]]:
    """(line, target) for each relative link: not a URL, not an anchor on the same page."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in LINK.finditer(line):
            target = m.group(1).split("#")[0]
            if target and "://" not in target and not target.startswith("mailto:"):
                out.append((n, target))
    return out


def exists(path: Path) -> bool:
    return bool(glob.glob(str(path), recursive=True)) if "*" in str(path) else path.exists()


def missing(doc: Path, root: Path = ROOT) -> list[str]:
    text = doc.read_text()
    bad = [f"{n}: {p}" for n, p in named_paths(text) if p not in NOT_IN_CHECKOUT and not exists(root / p)]
    bad += [f"{n}: ({t})" for n, t in linked_paths(text) if not exists(doc.parent / t)]
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.relative_to(ROOT).as_posix())
def test_every_path_a_doc_names_exists(doc):
    assert not missing(doc), f"{doc.relative_to(ROOT)} names paths that do not exist: {missing(doc)}"


def test_a_stale_path_a_glob_a_choice_and_a_link_are_each_checked(tmp_path):
    (tmp_path / "sim").mkdir()
    (tmp_path / "sim" / "pool.py").write_text("")
    (tmp_path / "sim" / "pool.md").write_text("")
    doc = tmp_path / "guide.md"
    doc.write_text(
        "The pool (`sim/pool.py`, sim/pool.{py,md}, `sim/*.py`) is fine; see [pool](sim/pool.py).\n"
        "Stale: `analysis/schema.py`, sim/pool.{py,json}, `sim/*.pyx`, [gone](gone.md#top).\n"
        "Not paths: https://example.org/sim/x.py, runs/sim/x, `$HOME/tests/y`, `sim/<name>.py`.\n"
    )
    assert missing(doc, tmp_path) == ["2: analysis/schema.py", "2: sim/pool.json", "2: sim/*.pyx", "2: (gone.md)"]


def test_each_path_allowed_to_be_missing_is_still_named_and_still_missing():
    named = {p for doc in DOCS for _, p in named_paths(doc.read_text())}
    for path, reason in NOT_IN_CHECKOUT.items():
        assert path in named, f"{path} is no longer named in the docs: drop it from NOT_IN_CHECKOUT ({reason})"
        assert not (ROOT / path).exists(), f"{path} exists now: drop it from NOT_IN_CHECKOUT ({reason})"


def test_the_map_has_a_line_for_every_package_and_test_folder():
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text[text.index("## The map") : text.index("Where a new thing goes")]
    mapped = {m.group(1).rstrip("/") for m in re.finditer(r"^\| `([^`]+)` \|", table, flags=re.M)}
    code = {p.parent for top in ("sim", "strategies", "analysis", "protolab") for p in (ROOT / top).rglob("*.py")}
    tests = {p.parent for p in (ROOT / "tests").rglob("test_*.py")} | set((ROOT / "tests").glob("fixtures_*"))
    folders = {f.relative_to(ROOT).as_posix() for f in code | tests if "__pycache__" not in f.parts}
    assert not folders - mapped, f"docs/architecture.md's map has no line for {sorted(folders - mapped)}"
