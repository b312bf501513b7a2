"""The plain study: the balance report of one or more run folders, pooled (analysis/studies/balance/pooled.py).
Any run no other kind claims is read this way."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.studies.balance.pooled import Pooled


class Plain(Pooled):
    kind = "plain"

    @classmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        return True
