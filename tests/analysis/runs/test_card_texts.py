"""The dashboard's card texts come from the pool the run names: its sets and its card files' copies
in inputs/; a card a file changed carries the official text beside it, and a missing copy shows no
text rather than the official one passed off as the run's."""

import hashlib
import json
from pathlib import Path

from analysis.runs.card_texts import card_texts
from sim.pool import ALL_SETS

READING = Path(__file__).resolve().parents[3] / "datasets/readings/diversity_6_at_least_3.toml"


def _run_with(tmp_path: Path, text: str) -> dict:
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs/index.json").write_text(json.dumps({"readings/d6.toml": "00-d6.toml"}))
    (tmp_path / "inputs/00-d6.toml").write_text(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    return {"path": str(tmp_path), "sets": list(ALL_SETS), "card_files": [{"path": "readings/d6.toml", "sha256": sha}]}


def test_a_changed_card_has_the_official_text_beside_it(tmp_path, pool):
    texts, notes = card_texts(_run_with(tmp_path, READING.read_text()))
    assert notes == [] and len(texts) == len(pool.cards)
    d6 = texts["Diversity 6"]
    official = pool.card("Diversity 6")
    assert d6.official == (official.top, official.middle, official.bottom) and d6.official_value == official.value
    assert "at least 3 different protocols" in d6.text[0] and d6.text != d6.official
    assert d6.source == "readings/d6.toml"
    fire1 = texts["Fire 1"]
    assert fire1.official is None and fire1.source == "official" and fire1.text[1] == pool.card("Fire 1").middle


def test_a_card_file_without_its_copy_shows_no_text(tmp_path):
    block = _run_with(tmp_path, READING.read_text())
    block["card_files"][0]["sha256"] = "0" * 64  # the copy is not the file the run used
    texts, notes = card_texts(block)
    assert texts == {} and "no copy of card file readings/d6.toml" in notes[0]
    texts, notes = card_texts({"path": str(tmp_path), "sets": None, "card_files": []})
    assert texts == {} and "names no sets" in notes[0]
