"""The `[draft]` table of a spec: how each matchup's two trios are chosen, one model per mode
(random, draft, fixed, round_robin, sampled, holding; docs/experiments.md). Checked with the spec's
own checker, so every error names the file and the key; protocol names are checked against the pool
by protolab/experiment/run/plan.py, still before any game is played."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, model_validator

from protolab.experiment.spec.checker import Checker
from protolab.experiment.spec.files import CardFile, read_beside
from protolab.experiment.spec.limits import MAX_MATCHUPS, MAX_TRIOS
from sim.schema import Problem, Strict, before, fail, integer, texts
from sim.schema import text as nonblank
from strategies.draft import DraftTableError, parse_fitted

DRAFT_MODES = ("random", "draft", "fixed", "round_robin", "sampled", "holding")
TrioNames = tuple[str, ...]


@dataclass(frozen=True)
class Draft:
    """`[draft]` as validated: the mode and what it draws from."""

    mode: str
    matchups: tuple[tuple[TrioNames, TrioNames], ...] = ()
    protocols: tuple[str, ...] = ()
    trios: tuple[TrioNames, ...] = ()
    samples: int = 0
    policy: tuple[str, ...] = ()  # mode "draft": each seat's draft strategy (seat 0, seat 1)
    tables: tuple[CardFile, ...] = ()  # the fitted draft tables they name, read when the spec is loaded

    def to_dict(self) -> dict[str, Any]:
        """As stored in run.json and hashed: the keys of its mode."""
        out: dict[str, Any] = {"mode": self.mode}
        if self.mode == "fixed":
            out["matchups"] = [[list(a), list(b)] for a, b in self.matchups]
        if self.mode in ("round_robin", "sampled", "holding"):
            if self.trios:
                out["trios"] = [list(t) for t in self.trios]
            if self.protocols:
                out["protocols"] = list(self.protocols)
        if self.mode in ("sampled", "holding"):
            out["samples"] = self.samples
        if self.mode == "draft":
            out["policy"] = list(self.policy)
            out["tables"] = [{"path": t.path, "sha256": t.sha256} for t in self.tables]
        return out


def _trio_shape(raw: Any) -> Any:
    raw = [x.strip() for x in raw.split(",")] if isinstance(raw, str) else raw
    if not isinstance(raw, list) or len(raw) != 3:
        fail(f'expected a trio of protocols, e.g. ["Fire", "Water", "Death"], got {raw!r}')
    return raw


def _three_different(trio: list[str]) -> tuple[str, ...]:
    if len({t.lower() for t in trio}) != 3:
        fail(f"expected three different protocols, got {list(trio)}")
    return tuple(trio)


def _matchup(m: Any) -> Any:
    if not isinstance(m, list) or len(m) != 2:
        fail(f"expected two trios (seat 0, seat 1), got {m!r}")
    return m


def _six_different(pair: list[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    a, b = pair
    common = sorted(x for x in a if x.lower() in {y.lower() for y in b})
    if common:
        fail(f"expected six different protocols; both trios have {common}")
    return tuple(pair)


# an item type built at runtime (Annotated), which mypy cannot read as a type
Trio = Annotated[
    before(_trio_shape, list[nonblank("a protocol name")]),  # type: ignore[misc]
    AfterValidator(_three_different),
]
Matchup = Annotated[before(_matchup, list[Trio]), AfterValidator(_six_different)]
Protocols = texts("protocol names")


class RandomDraft(Strict):
    mode: str = "random"


class PolicyDraft(Strict):
    mode: str
    policy: Any = "random"  # a draft strategy or two: _parse_policy reads their tables


class StoredPolicyDraft(PolicyDraft):
    tables: Any = None  # the stored form's fitted tables: checked when read back


class FixedDraft(Strict):
    mode: str
    matchups: Annotated[
        before(
            lambda v: (
                v
                if isinstance(v, list) and v
                else fail(
                    "expected a list of matchups, each two trios: "
                    '[["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]'
                )
            ),
            list[Matchup],
        ),
        Field(
            description='a list of matchups, each two trios: [["Fire", "Water", "Death"], ["Hate", "Light", "Life"]]'
        ),
    ]


class RoundRobinDraft(Strict):
    mode: str
    protocols: Annotated[
        Protocols,
        AfterValidator(
            lambda v: (
                v if len({p.lower() for p in v}) >= 6 else fail(f"expected at least six different protocols, got {v}")
            )
        ),
    ] = []
    trios: before(
        lambda v: (
            v
            if isinstance(v, list) and 2 <= len(v) <= MAX_TRIOS
            else fail(f"expected a list of 2 to {MAX_TRIOS:,} trios")
        ),
        list[Trio],
    ) = []

    @model_validator(mode="after")
    def _one_source(self) -> RoundRobinDraft:
        if self.protocols and self.trios:
            fail("expected either protocols or trios, not both", "trios")
        return self


class SampledDraft(RoundRobinDraft):
    samples: Annotated[
        integer(1, MAX_MATCHUPS, "the number of matchups to sample"),
        Field(description="the number of matchups to sample, e.g. samples = 500"),
    ]


class HoldingDraft(Strict):
    mode: str
    protocols: Annotated[
        Protocols,
        AfterValidator(
            lambda v: (
                v
                if v and len({p.lower() for p in v}) == len(v)
                else fail(f"expected one or more different protocols, got {v}")
            )
        ),
        Field(description='the protocols seat 0 holds, e.g. protocols = ["Fire"]'),
    ]
    samples: Annotated[
        integer(1, MAX_MATCHUPS, "the number of matchups per protocol"),
        Field(description="the number of matchups per protocol, e.g. samples = 500"),
    ]

    @model_validator(mode="after")
    def _not_too_many(self) -> HoldingDraft:
        n = self.samples * len(self.protocols)
        if n > MAX_MATCHUPS:
            fail(
                f"expected at most {MAX_MATCHUPS:,} matchups in all; {self.samples:,} for each of "
                f"{len(self.protocols)} protocols make {n:,}",
                "samples",
            )
        return self


DRAFT_TABLES: dict[str, type[Strict]] = {
    "random": RandomDraft,
    "draft": PolicyDraft,
    "fixed": FixedDraft,
    "round_robin": RoundRobinDraft,
    "sampled": SampledDraft,
    "holding": HoldingDraft,
}


def _not_this_mode(mode: str) -> Callable[[Problem], str]:
    """The message for a key the mode does not take: which mode it belongs to, if any."""

    def say(p: Problem) -> str:
        modes = [m for m in DRAFT_MODES if p.key in DRAFT_TABLES[m].model_fields]
        hint = f"it belongs to mode {' or '.join(modes)}" if modes else "unknown key"
        return f"not used with mode = {mode!r} ({hint}); expected: {', '.join(sorted(p.allowed))}"

    return say


def parse_draft(
    c: Checker, raw: Any, base: Path = Path("."), card_texts: dict[str, str] | None = None, stored: bool = False
) -> Draft:
    """`draft`; in the stored form mode "draft" also lists the `tables` its policies read (checked
    against them when the whole spec is read back)."""
    if not isinstance(raw, dict):
        raise c.error("draft", f"expected a table with mode = one of {', '.join(DRAFT_MODES)}, got {raw!r}")
    mode = raw.get("mode", "random")
    if mode not in DRAFT_MODES:
        raise c.error("draft.mode", f"expected one of {', '.join(DRAFT_MODES)}, got {mode!r}")
    model = StoredPolicyDraft if stored and mode == "draft" else DRAFT_TABLES[mode]
    t = c.model(raw, "draft", model, _not_this_mode(mode))
    if isinstance(t, PolicyDraft):
        return _parse_policy(c, raw, base, card_texts)
    if isinstance(t, FixedDraft):
        return Draft("fixed", matchups=tuple(t.matchups))
    if isinstance(t, HoldingDraft):
        return Draft("holding", protocols=tuple(t.protocols), samples=t.samples)
    if isinstance(t, RoundRobinDraft):
        return Draft(mode, protocols=tuple(t.protocols), trios=tuple(t.trios), samples=getattr(t, "samples", 0))
    return Draft("random")


def _parse_policy(c: Checker, raw: dict[str, Any], base: Path, card_texts: dict[str, str] | None) -> Draft:
    """mode = "draft": the 1-2-2-1 draft with a draft strategy per seat, `policy = "fitted:FILE"` (both
    seats) or `policy = ["fitted:FILE", "random"]`; FILE is relative to the spec and read now, so the
    workers and --resume use its contents, not the path."""

    pol = raw.get("policy", "random")
    if isinstance(pol, str):
        pol = [pol, pol]
    if not isinstance(pol, list) or len(pol) != 2:
        raise c.error(
            "draft.policy", f'expected a draft strategy or two (seat 0, seat 1), e.g. "fitted:FILE", got {pol!r}'
        )
    policy: list[str] = []
    tables: dict[str, CardFile] = {}
    for i, text in enumerate(pol):
        key = f"draft.policy[{i}]" if not isinstance(raw.get("policy"), str) else "draft.policy"
        text = c.string(text, key, "a draft strategy: random or fitted:FILE[,style=...][,temp=T]")
        kind, _, arg = text.partition(":")
        if text == "random":
            policy.append(text)
            continue
        if kind != "fitted":
            raise c.error(key, f"expected random or fitted:FILE[,style=full|greedy|counter][,temp=T], got {text!r}")
        try:
            path = parse_fitted(arg).path
        except DraftTableError as e:
            raise c.error(key, str(e)) from None
        if path not in tables:
            tables[path] = _read_table(c, base, path, key, card_texts)
        policy.append(text)
    return Draft("draft", policy=tuple(policy), tables=tuple(tables.values()))


def _read_table(c: Checker, base: Path, path: str, key: str, card_texts: dict[str, str] | None) -> CardFile:
    """A fitted draft table a policy names: from the spec's folder, or the run's copy (inputs/)."""
    if card_texts is None:
        return read_beside(
            c,
            base,
            path,
            key,
            "a fitted draft table (docs/strategies.md), relative to the spec's folder",
            what="the draft table ",
        )
    if path not in card_texts:
        raise c.error(key, f"the run's copy of {path!r} is missing (expected it in inputs/)")
    return CardFile.of_text(path, card_texts[path])
