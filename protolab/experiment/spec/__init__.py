"""An experiment spec (TOML, docs/experiments.md), read and validated before any work starts, one
module per part: the top level (parse.py), its tables (draft, arms and tiers, meta, tune, stop,
strength), the files it names (files.py), its strategies (strategy.py), and the validated Spec
(model.py). Every error is a SpecError whose message names the file, the key and what was expected,
so a designer can fix a typo without reading code."""

from protolab.experiment.spec.arms import Arm, tier_name
from protolab.experiment.spec.checker import Checker, SpecError
from protolab.experiment.spec.draft import DRAFT_MODES, Draft
from protolab.experiment.spec.files import CardFile, examples_dir, find_spec, read_card_file, read_spec_file
from protolab.experiment.spec.limits import MAX_ARMS, MAX_GAMES, MAX_MATCHUPS, SPEC_FORMAT
from protolab.experiment.spec.meta import Meta
from protolab.experiment.spec.model import Spec, seat_key, spec_strategies
from protolab.experiment.spec.parse import load_spec, parse_events, parse_spec
from protolab.experiment.spec.size import check_matchups, check_size
from protolab.experiment.spec.stop import Stop
from protolab.experiment.spec.strategy import (
    RunName,
    Strategy,
    StrategyPair,
    check_code,
    check_strategy,
    refuse_code,
    run_name,
    seat_pair,
)
from protolab.experiment.spec.strength import Strength

__all__ = [
    "DRAFT_MODES",
    "MAX_ARMS",
    "MAX_GAMES",
    "MAX_MATCHUPS",
    "SPEC_FORMAT",
    "Arm",
    "CardFile",
    "Checker",
    "Draft",
    "Meta",
    "RunName",
    "Spec",
    "SpecError",
    "Stop",
    "Strategy",
    "StrategyPair",
    "Strength",
    "check_code",
    "check_matchups",
    "check_size",
    "check_strategy",
    "examples_dir",
    "find_spec",
    "load_spec",
    "parse_events",
    "parse_spec",
    "read_card_file",
    "read_spec_file",
    "refuse_code",
    "run_name",
    "seat_key",
    "seat_pair",
    "spec_strategies",
    "tier_name",
]
