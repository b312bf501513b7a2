"""Behaviour must not drift: the committed golden trace (protolab/golden.py) is reproduced byte for
byte (records and the hash of every game's full decision and effect log)."""

import json
from pathlib import Path

from protolab.golden import trace

TRACE = Path(__file__).parents[1] / "golden" / "trace.json"


def test_golden_trace_unchanged():
    old = json.loads(TRACE.read_text())
    now = trace()
    assert now["pool_hash"] == old["pool_hash"]
    for o, n in zip(old["games"], now["games"], strict=True):
        assert o == n, (
            f"{o['strategies']} seed {o['seed']} changed; if the rules changed on purpose, "
            "regenerate with python -m protolab.golden --write"
        )
