"""The card-value study (`protolab cardvalue`, analysis/studies/balance/card_values.py): read as its baseline arm's
balance report, whose card-value table comes from every arm."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.studies.balance.arms import arm_paths
from analysis.studies.balance.card_values import is_card_value_run
from analysis.studies.balance.pooled import Pooled
from analysis.studies.base import Options


class CardValue(Pooled):
    kind = "cardvalue"

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return bool(arm_paths(list(paths))) and is_card_value_run(paths[0])

    @classmethod
    def open(cls, paths: Sequence[str], options: Options) -> CardValue:
        study = super().open((arm_paths(list(paths)) or [])[:1], options)
        study.run = str(paths[0])
        return study
