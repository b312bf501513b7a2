"""The card-value study (`protolab cardvalue`, analysis/studies/cardvalue/values.py): read as its baseline arm's
plain report, whose card-value table comes from every arm."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.studies.ab.arms import arm_paths
from analysis.studies.base import Options
from analysis.studies.cardvalue.values import is_card_value_run
from analysis.studies.plain.study import Plain


class CardValue(Plain):
    kind = "cardvalue"

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return bool(arm_paths(list(paths))) and is_card_value_run(paths[0])

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> CardValue:
        study = super().open((arm_paths(list(paths)) or [])[:1], options)
        study.run = str(paths[0])
        return study
