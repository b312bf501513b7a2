"""`protolab power`: a pilot's answer to "how many games?" credits the paired design, singles out the
protocol a variant changes, and refuses specs it cannot answer with one line naming the key."""

from __future__ import annotations

import json

import pytest

from protolab.cli import main

pytestmark = pytest.mark.usefixtures("kept_ray")  # runs share one local Ray (tests/conftest.py)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_ab_pilot_names_the_changed_protocol_as_the_costly_one(capsys):
    code, out, _ = run(capsys, "power", "fire1_ab", "--pilot", "2000", "--format", "json")
    assert code == 0
    data = json.loads(out)
    (cmp,) = data["comparisons"]
    rows = {r["protocol"]: r for r in cmp["protocols"]}
    assert cmp["comparison"] == "fire1-worth-3 - official" and data["games"] == 50_000
    # Fire 1 changed: Fire's paired results differ on more seeds than any other protocol's
    assert rows["Fire"]["spread"] == max(r["spread"] for r in rows.values())
    assert rows["Fire"]["games_needed"] == max(r["games_needed"] for r in rows.values())
    for r in rows.values():
        assert 0 < r["plays"] < 1 and 0 < r["detectable"] < 0.05


def test_a_single_pool_answers_the_distance_from_fifty(capsys):
    code, out, _ = run(capsys, "power", "demo", "--pilot", "500", "--effect", "6", "--format", "csv")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "protocol,plays,spread,games_needed,detectable,comparison"
    assert len(lines) == 31 and all(line.endswith(",distance from 50%") for line in lines[1:])


@pytest.mark.parametrize(
    "spec, words",
    [
        ("tiers", "key 'tiers'"),
        ("protocol_balance", "key 'draft.mode'"),
    ],
)
def test_specs_it_cannot_answer_are_one_line(capsys, spec, words):
    code, _, err = run(capsys, "power", spec, "--pilot", "200")
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err


def test_options_out_of_range_are_refused(capsys):
    code, _, err = run(capsys, "power", "fire1_ab", "--effect", "0")
    assert code == 2 and "--effect" in err
