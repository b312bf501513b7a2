"""Studies: what a run folder (or several) is, decided once from its manifest, and one surface over
every kind (analysis/studies/base.py). `protolab report`, `protolab dashboard` and the end of
`protolab run` open a study and call it; none asks which kind it is. docs/architecture.md,
"Adding a study kind"."""

from __future__ import annotations

from collections.abc import Sequence

from analysis.studies import tune
from analysis.studies.ab import study as ab
from analysis.studies.base import Options, Study
from analysis.studies.cardvalue import study as cardvalue
from analysis.studies.metagame import study as metagame
from analysis.studies.plain import study as plain
from analysis.studies.tiers import study as tiers
from analysis.studies.train import study as train

KINDS: tuple[type[Study], ...] = (  # the first kind that claims the paths is their study
    metagame.Metagame,  # a metagame loop folder (meta.json)
    tune.Tune,  # a balance search folder (tune.json)
    train.Train,  # a training folder (train.json)
    tiers.Tiers,  # one run with `tiers`
    cardvalue.CardValue,  # one `protolab cardvalue` run: its baseline arm, card values from every arm
    ab.AB,  # one run with [[arms]]: never pooled
    plain.Plain,  # anything else: the runs pooled
)


def kind_of(paths: Sequence[str]) -> type[Study]:
    """The kind of study `paths` are (raises RunError when they cannot be read together)."""
    return next(k for k in KINDS if k.claims(paths))


def open_study(paths: Sequence[str], options: Options | None = None) -> Study:
    """Open `paths` as the study they are."""
    return kind_of(paths).open(paths, options or Options())


__all__ = ["KINDS", "Options", "Study", "kind_of", "open_study"]
