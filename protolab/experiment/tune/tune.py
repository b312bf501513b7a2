"""`protolab tune SPEC`: a balance search (docs/experiments.md, "Balance search").

A spec with a `[tune]` table names the pool, the judging strategies, what to bring into balance
(one protocol toward 50%, or every protocol into a band), the change space (which cards, which
kinds of knob, by how much: sim/cards/knobs.py) and the budget. Optuna proposes candidates (a set
of at most `max_changes` knob turns); each is judged against the baseline on the same seeds, a
batch at a time, with an anytime-valid interval (analysis/stats/sequential.py): it stops when its effect
is settled to +-`precision` points, is dropped as soon as even its best case cannot beat the best
candidate so far, or spends its `games`. The Pareto front of (imbalance, changed cards) is then
re-played on fresh seeds (`games` of the spec per candidate) and only those numbers are reported.

The search folder holds tune.json (every trial, the verification) and one variant file per
verified candidate, ready for `protolab run --cards`. Given the same folder again, the search
replays its recorded trials into the optimizer without playing them and goes on where it stopped."""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from analysis.runs.runfolder import write_atomic
from analysis.stats.balance import effect, front, imbalance, paired_change, paired_noise, rates
from analysis.studies.ab.loops import loop_rise_p
from analysis.studies.balance.rule_note import pool_notes
from analysis.studies.tune import TUNE_FILE
from protolab.experiment.pools import pool_of
from protolab.experiment.spec import Spec, SpecError
from protolab.experiment.tune.tuneplay import Job, Player, arm_files, arm_job, search_seeds, verify_seeds
from protolab.version import protolab_version
from sim.cards.knobs import Knob, candidate_faults, card_knobs, turned, variant_toml
from sim.cards.loader import CardDataError
from sim.pool import ENGINE_VERSION, Pool

TUNE_FORMAT = 1


@dataclass
class Candidate:
    """One trial: its knob turns, the games it took and what they showed."""

    knobs: list[Knob]
    out: list[np.ndarray] = field(default_factory=list)
    reason: str = ""
    score: float = float("nan")
    recorded: int = 0  # games of a trial read back from the folder (its results are not kept)
    text: str = ""  # its variant file, written once (Search.files)

    @property
    def cards(self) -> int:
        return len({k.card for k in self.knobs})

    @property
    def games(self) -> int:
        return int(sum(len(o) for o in self.out)) or self.recorded

    @property
    def key(self) -> str:
        return " | ".join(sorted(k.label() for k in self.knobs))


@dataclass
class Search:
    """Everything the search needs, resolved from the spec before any game is played."""

    spec: Spec
    pool: Pool
    knobs: list[Knob]
    target: int | None
    settings: dict[str, Any]
    warnings: list[str] = field(default_factory=list)  # said once, kept in the record

    @property
    def band(self) -> tuple[float, float]:
        lo, hi = self.settings["band"]
        return lo / 100, hi / 100

    def job(self, cards: tuple[tuple[str, str], ...], seeds: tuple[int, ...]) -> Job:
        return arm_job(self.spec, self.spec.arms[0], seeds, cards)

    def files(self, c: Candidate) -> tuple[tuple[str, str], ...]:
        """The candidate's variant as a job's card file; written once, as writing reads every text back."""
        if not c.text:
            c.text = self.variant(c.knobs, "candidate")
        return (("tune-candidate.toml", c.text),)

    def variant(self, knobs: list[Knob], name: str) -> str:
        by_card: dict[str, list[Knob]] = {}
        for k in knobs:
            by_card.setdefault(k.card, []).append(k)
        specs = {c.name: c for c in self.pool.specs}
        note = "A balance-search candidate (protolab tune): " + "; ".join(k.label() for k in knobs)
        return variant_toml(name, [turned(specs[c], ks) for c, ks in by_card.items()], note)


def _change_space(spec: Spec, pool: Pool, t: dict[str, Any]) -> list[Knob]:
    """The knob turns the search may propose: those of the named cards, of the kinds and steps
    asked, without a turn that alone breaks the shipped constraints (unless they are off)."""
    chosen = _named_cards(spec, pool, t)
    knobs = [k for c in chosen for k in card_knobs(c, t["kinds"], t["steps"])]
    offered = len(knobs)
    if t.get("constraints", True):  # a turn that alone breaks them could never be proposed
        knobs = [k for k in knobs if not candidate_faults(pool.specs, [k])]
    if not knobs:
        why = (
            f" ({offered} turns break the shipped constraints: distinct values within a protocol, no card that "
            "only harms its owner; tune.constraints = false lets them go)"
            if offered
            else ""
        )
        raise SpecError(
            f"{spec.source}: key 'tune.kinds': the change space is empty: the cards "
            f"{', '.join(c.name for c in chosen)} have no knob of kinds {', '.join(t['kinds'])}{why}"
        )
    return knobs


def _named_cards(spec: Spec, pool: Pool, t: dict[str, Any]) -> list[Any]:
    """The cards `tune.cards` names (a card, or "Protocol *" for all of a protocol's), each once, in
    order; without it, the target protocol's."""
    names = t["cards"] or [f"{t['protocol']} *"]
    chosen: list[Any] = []
    for i, name in enumerate(names):
        key = f"tune.cards[{i}]" if t["cards"] else "tune.protocol"
        if name.endswith(" *"):
            proto = name[:-2].strip()
            found = [c for c in pool.specs if c.protocol.lower() == proto.lower()]
            what = f"no protocol {proto!r} in the pool (sets {', '.join(spec.arms[0].sets)})"
        else:
            found = [c for c in pool.specs if c.name.lower() == name.lower()]
            what = f'no card {name!r} in the pool; expected a card name or "Protocol *"'
        if not found:
            raise SpecError(f"{spec.source}: key '{key}': {what}")
        chosen += [c for c in found if c not in chosen]
    return chosen


def prepare(spec: Spec) -> Search:
    """Check the [tune] table against the pool; raises SpecError naming file and key."""
    t = spec.tune
    if t is None:
        raise SpecError(
            f"{spec.source}: key 'tune': missing; expected a [tune] table (docs/experiments.md, \"Balance search\")"
        )
    arm = spec.arms[0]
    pool = pool_of(tuple(arm.sets), arm_files(arm))
    target = None
    if t["protocol"]:
        try:
            target = pool.protocol(t["protocol"])
        except KeyError as e:
            raise SpecError(f"{spec.source}: key 'tune.protocol': {e.args[0]}") from None
    return Search(spec, pool, _change_space(spec, pool, t), target, t)


# -- judging ------------------------------------------------------------------------------------


class Baseline:
    """The baseline's results on the search seeds, played batch by batch as the candidates need them."""

    def __init__(self, search: Search, run: Player):
        self.search, self.run = search, run
        self.batches: list[np.ndarray] = []

    def need(self, looks: int) -> list[Job]:
        b = self.search.settings["batch"]
        return [
            self.search.job((), search_seeds(self.search.spec.seed, i * b, b)) for i in range(len(self.batches), looks)
        ]

    def take(self, results: list[np.ndarray]) -> None:
        self.batches.extend(results)

    def games(self, n_batches: int) -> np.ndarray:
        return np.concatenate(self.batches[:n_batches])


def _score(search: Search, cand: np.ndarray, base: np.ndarray) -> float:
    """The candidate's imbalance (analysis/stats/balance.py): the others are charged only for leaving
    the band beyond the noise of their own paired change."""
    return imbalance(rates(cand).rate, rates(base).rate, search.target, search.band, paired_noise(cand, base))


def _best_case(search: Search, cand: np.ndarray, base: np.ndarray) -> float:
    """The smallest imbalance the candidate's interval allows (target mode), a bound for dropping it."""
    if search.target is None:
        return 0.0
    _, lo, hi, _ = effect(cand, base, search.target, search.settings["alpha"])
    at = float(rates(base).rate[search.target]) - 0.5
    return 0.0 if at + lo <= 0 <= at + hi else min(abs(at + lo), abs(at + hi))


def _decide(search: Search, c: Candidate, base: np.ndarray, incumbent: float) -> str:
    t = search.settings
    cand = np.concatenate(c.out)
    c.score = _score(search, cand, base)
    ps = [search.target] if search.target is not None else range(len(search.pool.protocols))
    widths = [(hi - lo) / 2 for _, lo, hi, _ in (effect(cand, base, p, t["alpha"]) for p in ps)]
    if max(widths) * 100 <= t["precision"]:
        return "settled"
    if _best_case(search, cand, base) > incumbent:
        return "dropped"
    return "budget" if c.games >= t["games"] else ""


def judge(
    search: Search,
    cands: list[Candidate],
    baseline: Baseline,
    run: Player,
    incumbent: float,
) -> None:
    """Add batches to every open candidate until each is settled, dropped or out of budget."""
    b = search.settings["batch"]
    open_ = [c for c in cands if not c.reason]
    while open_:
        looks = max(len(c.out) for c in open_) + 1
        base_jobs = baseline.need(looks)
        jobs = base_jobs + [
            search.job(search.files(c), search_seeds(search.spec.seed, len(c.out) * b, b)) for c in open_
        ]
        results = [np.asarray(r) for r in run(jobs)]  # the outcomes alone: loops are judged on fresh seeds
        baseline.take(results[: len(base_jobs)])
        for c, r in zip(open_, results[len(base_jobs) :], strict=True):
            c.out.append(r)
            c.reason = _decide(search, c, baseline.games(len(c.out)), incumbent)
            if c.reason in ("settled", "budget"):
                incumbent = min(incumbent, c.score)
        open_ = [c for c in open_ if not c.reason]


# -- the search ---------------------------------------------------------------------------------


def _sampler(settings: dict[str, Any], seed: int):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if settings["sampler"] == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed % 2**32, population_size=max(4, settings["generation"]))
    return optuna.samplers.TPESampler(
        seed=seed % 2**32, n_startup_trials=max(4, settings["generation"]), multivariate=True
    )


def _allowed(search: Search, knobs: list[Knob]) -> bool:
    """Whether a set of turns prints (several turns of one card print together) and keeps the shipped
    constraints (sim/cards/knobs.py, `candidate_faults`) unless the spec lets them go."""
    specs = {c.name: c for c in search.pool.specs}
    last = knobs[-1]
    try:
        turned(specs[last.card], [k for k in knobs if k.card == last.card])
    except CardDataError:
        return False
    return not (search.settings.get("constraints", True) and candidate_faults(search.pool.specs, knobs))


def _knobs_of(trial, search: Search) -> list[Knob]:
    labels = ["none"] + [k.label() for k in search.knobs]
    by_label = {k.label(): k for k in search.knobs}
    chosen: list[Knob] = []
    max_cards = search.settings.get("max_cards", search.settings["max_changes"])
    for slot in range(search.settings["max_changes"]):
        pick = trial.suggest_categorical(f"change{slot}", labels)
        k = by_label.get(pick)
        cards = {c.card for c in chosen}
        fits = k is not None and (k.card in cards or len(cards) < max_cards)
        if k is not None and fits and all(k.path != c.path or k.card != c.card for c in chosen):
            if _allowed(search, chosen + [k]):
                chosen.append(k)
    return sorted(chosen, key=lambda k: (k.card, k.key))


def _record(c: Candidate, number: int) -> dict[str, Any]:
    return {
        "trial": number,
        "changes": [k.label() for k in c.knobs],
        "cards": c.cards,
        "games": c.games,
        "stopped": c.reason or "baseline",
        "imbalance": c.score,
    }


def _budget_warning(search: Search, judged: list[Candidate], baseline: Baseline) -> list[str]:
    """A warning when candidates spend tune.games before their effect is settled to tune.precision:
    the half-width they reached and the games settling would take at that spread (the width of an
    anytime-valid interval shrinks about as 1 / sqrt(games)), so the spec can be fixed early."""
    t = search.settings
    spent = [c for c in judged if c.reason == "budget"]
    if not spent:
        return []
    ps = [search.target] if search.target is not None else range(len(search.pool.protocols))
    widths = []
    for c in spent:
        cand = np.concatenate(c.out)
        base = baseline.games(len(c.out))
        widths.append(max((hi - lo) / 2 for _, lo, hi, _ in (effect(cand, base, p, t["alpha"]) for p in ps)))
    width = 100 * float(np.median(widths))
    needed = int(math.ceil(t["games"] * (width / t["precision"]) ** 2 / t["batch"]) * t["batch"])
    return [
        f"{len(spent)} of {len(judged)} candidates of the first generation spent tune.games ({t['games']:,}) "
        f"before their effect was known to +-{t['precision']:g} points (+-{width:.1f} at the budget); settling "
        f"one needs about {needed:,} games: raise tune.games or tune.precision ({search.spec.source})"
    ]


def search_trials(
    search: Search,
    run: Player,
    done: list[dict[str, Any]],
    save: Callable[[list[dict[str, Any]]], None],
    say: Callable[[str], None],
) -> list[Candidate]:
    """Ask Optuna for candidates a generation at a time, judge them, tell it (imbalance, changed cards).
    Trials in `done` (a resumed search) are told their recorded values without playing."""
    import optuna

    t = search.settings
    study = optuna.create_study(directions=["minimize", "minimize"], sampler=_sampler(t, search.spec.seed))
    baseline = Baseline(search, run)
    baseline.take([np.asarray(r) for r in run(baseline.need(1))])
    base_score = _score(search, baseline.games(1), baseline.games(1))
    seen: dict[str, Candidate] = {}
    records = list(done)
    warnings: list[str] = search.warnings
    # a candidate whose best case is worse than changing nothing is dropped from the first look
    incumbent = min([base_score] + [r["imbalance"] for r in done if r["stopped"] in ("settled", "budget")])
    number = 0
    while number < t["trials"]:
        asked = [study.ask() for _ in range(min(t["generation"], t["trials"] - number))]
        cands = [Candidate(_knobs_of(tr, search)) for tr in asked]
        fresh = []  # the candidates to judge: the others are given their known outcome
        for i, c in enumerate(cands):
            if not _recalled(search, c, number + i, done, seen, base_score):
                fresh.append(c)
        if fresh:
            judge(search, fresh, baseline, run, incumbent)
            incumbent = min([incumbent] + [c.score for c in fresh if c.reason in ("settled", "budget")])
            if not warnings:
                warnings += _budget_warning(search, fresh, baseline)
                for w in warnings:
                    say(f"[yellow]warning:[/yellow] {w}")
        records += _told(study, asked, cands, seen, number, len(done))
        number += len(asked)
        save(records)
        say(f"  trials {number}/{t['trials']}: best imbalance so far {100 * incumbent:.1f} points")
    return _rebuild(search, records)


def _told(
    study: Any, asked: list[Any], cands: list[Candidate], seen: dict[str, Candidate], first: int, recorded: int
) -> list[dict[str, Any]]:
    """Tell Optuna each trial's (imbalance, changed cards), trials numbered from `first`; the records
    of those the folder does not hold yet (its first `recorded`)."""
    new = []
    for i, (tr, c) in enumerate(zip(asked, cands, strict=True)):
        study.tell(tr, [c.score, c.cards])
        seen.setdefault(c.key, c)
        if first + i >= recorded:
            new.append(_record(c, first + i))
    return new


def _recalled(
    search: Search, c: Candidate, number: int, done: list[dict[str, Any]], seen: dict[str, Candidate], base_score: float
) -> bool:
    """Give trial `number` its outcome without playing when it is known: recorded in the folder (a
    resumed search, which must propose what it recorded), judged earlier in this search, or the
    baseline (no turn). False: the candidate is to be judged."""
    if number < len(done):
        if done[number]["changes"] != [k.label() for k in c.knobs]:
            raise SpecError(
                f"{search.spec.source}: the recorded search in this folder proposed other "
                "candidates than this spec does; give a new --out"
            )
        c.reason, c.score = done[number]["stopped"], done[number]["imbalance"]
    elif c.key in seen:
        c.reason, c.score = seen[c.key].reason, seen[c.key].score
    elif not c.knobs:
        c.reason, c.score = "baseline", base_score
    else:
        return False
    return True


def _rebuild(search: Search, records: list[dict[str, Any]]) -> list[Candidate]:
    """The judged candidates of a resumed search, from their records."""
    by_label = {k.label(): k for k in search.knobs}
    out, keys = [], set()
    for r in records:
        if r["changes"] and r["stopped"] in ("settled", "budget"):
            c = Candidate(
                [by_label[x] for x in r["changes"]], reason=r["stopped"], score=r["imbalance"], recorded=r["games"]
            )
            if c.key not in keys:
                keys.add(c.key)
                out.append(c)
    return out


# -- verification -------------------------------------------------------------------------------


def _protocols(search: Search, out: np.ndarray, base: np.ndarray | None = None) -> dict[str, dict[str, float]]:
    """Every protocol's win rate and 95% interval on `out`; given the baseline on the same seeds, also
    its paired change with its interval (`change`, `change_low`, `change_high`): the fresh seeds are
    looked at once, so the interval is the fixed-size one, centred on the change it is shown with."""
    r = rates(out)
    rows = {}
    for i, name in enumerate(search.pool.protocols):
        row = {"win_rate": float(r.rate[i]), "low": float(r.low[i]), "high": float(r.high[i]), "games": int(r.games[i])}
        if base is not None:
            c = paired_change(out, base, i, search.settings["alpha"])
            row.update({"change": c.change, "change_low": c.low, "change_high": c.high})
        rows[name] = row
    return rows


def _moved(row: dict[str, float]) -> bool:
    """Whether a protocol's paired change is significant (its interval leaves zero)."""
    return row["change_low"] > 0 or row["change_high"] < 0


def _rejection(search: Search, entry: dict[str, Any], base_score: float) -> str:
    """Why a verified candidate is not proposed ("" when it is): its change on the target (or, without
    a target, on every protocol) is not significant on the fresh seeds, or it ends no nearer balance
    than the official cards."""
    rows = entry["protocols"]
    if search.target is not None:
        t = entry["target_change"]
        if not (t["low"] > 0 or t["high"] < 0):
            return (
                f"its change on {search.pool.protocols[search.target]} is not significant "
                f"({100 * t['change']:+.1f} points, {100 * t['low']:+.1f} to {100 * t['high']:+.1f})"
            )
    elif not any(_moved(r) for r in rows.values()):
        return "no protocol's change is significant"
    if entry["imbalance"] >= base_score:
        return (
            f"it ends no nearer balance than the official cards (imbalance {100 * entry['imbalance']:.1f} "
            f"points against {100 * base_score:.1f})"
        )
    return ""


def loop_rejection(candidate: np.ndarray, baseline: np.ndarray, alpha: float) -> str:
    """Why a candidate that adds loop draws on the fresh seeds is never proposed ("" when it adds none
    significantly): a player could choose the loop and force a draw, which no win rate shows."""
    more, fewer = int((candidate & ~baseline).sum()), int((baseline & ~candidate).sum())
    p = loop_rise_p(more, fewer)
    if p >= alpha or more <= fewer:
        return ""
    return (
        f"it adds loop draws: {int(candidate.sum())} of {len(candidate):,} fresh games end by the loop bound "
        f"against {int(baseline.sum())} with the official cards (one-sided sign test p = {p:.2g}): a player can "
        "force a draw with it"
    )


def _without_padding(entries: list[dict[str, Any]], rejected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proposed entries but those that add turns to another proposed one without ending nearer
    balance (such an entry moves to `rejected`, with the reason): the smaller change says it all."""
    keep = []
    for e in entries:
        mine = {k.label() for k in e["knobs"]}
        smaller = next(
            (o for o in entries if {k.label() for k in o["knobs"]} < mine and o["imbalance"] <= e["imbalance"]),
            None,
        )
        if smaller is None:
            keep.append(e)
        else:
            fewer = "; ".join(k.label() for k in smaller["knobs"])
            rejected.append(
                {
                    **{k: v for k, v in e.items() if k != "knobs"},
                    "rank": None,
                    "why": f"it adds turns to {fewer} "
                    f"without ending nearer balance ({100 * e['imbalance']:.1f} points against "
                    f"{100 * smaller['imbalance']:.1f})",
                }
            )
    return keep


def _same_play(chosen: list[Candidate], results: list[np.ndarray], i: int) -> str:
    """Why candidate i is not proposed when another verified candidate with fewer knob turns plays
    every fresh game as it does (a turn the judging players never notice, such as making a step
    greedy always takes mandatory), else ""."""
    for c, r in zip(chosen, results, strict=True):
        if len(c.knobs) < len(chosen[i].knobs) and np.array_equal(r, results[i], equal_nan=True):
            return "it plays every fresh game as " + "; ".join(k.label() for k in c.knobs) + " does, with fewer changes"
    return ""


def _rule_notes(search: Search, knobs: list[Knob], text: str) -> list[str]:
    """The fixed-rule notes of a candidate (analysis/studies/balance/rule_note.py): a change touching a
    choice the judging players take by a rule is measured on that rule, not on a player weighing it."""
    pool = pool_of(tuple(search.spec.arms[0].sets), arm_files(search.spec.arms[0]) + (("candidate.toml", text),))
    notes = pool_notes(search.pool, pool, list(dict.fromkeys(search.spec.arms[0].strategies)))
    return [n["note"] for n in notes]


def verify(search: Search, kept: list[Candidate], run: Player) -> dict[str, Any]:
    """Re-play the front's candidates and the baseline on fresh seeds; only these numbers are reported.

    A candidate is proposed (ranked, named, given a variant file) only if its change is significant
    on the fresh seeds and it ends nearer balance than the official cards; the others are kept in
    `rejected` with the reason, so "nothing beats the official cards" is an answer, not a silence."""
    t = search.settings
    points = [(c.score, c.cards) for c in kept]
    chosen = [kept[i] for i in front(points)][: t["verify"]]
    seeds = verify_seeds(search.spec.seed, search.spec.games)
    jobs = [search.job((), seeds)] + [search.job(search.files(c), seeds) for c in chosen]
    played = run(jobs)
    loops = [p.loops for p in played]
    results = [np.asarray(p) for p in played]
    base = results[0]
    base_score = _score(search, base, base)
    out: dict[str, Any] = {
        "baseline": {"protocols": _protocols(search, base), "imbalance": base_score, "games": len(base)},
        "candidates": [],
        "rejected": [],
        "verified": len(chosen),
    }
    entries = []
    for i, (c, r) in enumerate(zip(chosen, results[1:], strict=True)):
        entry = _fresh_entry(search, c, r, base)
        entry["loop_draws"] = {"candidate": int(loops[i + 1].sum()), "baseline": int(loops[0].sum())}
        why = (
            loop_rejection(loops[i + 1], loops[0], t["alpha"])
            or _rejection(search, entry, base_score)
            or _same_play(chosen, results[1:], i)
        )
        if why:
            out["rejected"].append({**entry, "rank": None, "why": why})
        else:
            entry["knobs"] = c.knobs
            entries.append(entry)
    out["candidates"] = _ranked(search, _without_padding(entries, out["rejected"]))
    out["answer"] = answer_line(search, out)
    return out


def _fresh_entry(search: Search, c: Candidate, r: np.ndarray, base: np.ndarray) -> dict[str, Any]:
    """A verified candidate's entry: its turns, what the search saw, and its figures on the fresh
    seeds `r` against the baseline's `base` (with a target, its paired change on the target)."""
    entry: dict[str, Any] = {
        "rank": 0,
        "changes": [{"card": k.card, "key": k.key, "kind": k.kind, "old": k.old, "new": k.new} for k in c.knobs],
        "cards": c.cards,
        "search_games": c.games,
        "search_imbalance": c.score,
        "search_stopped": c.reason,
        "imbalance": _score(search, r, base),
        "games": len(r),
        "protocols": _protocols(search, r, base),
    }
    if search.target is not None:
        tc = paired_change(r, base, search.target, search.settings["alpha"])
        entry["target_change"] = {"change": tc.change, "low": tc.low, "high": tc.high, "games": tc.games}
    return entry


def _ranked(search: Search, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The proposed entries ranked first (imbalance, then changed cards), then named: a candidate's
    name, its variant file and its rank are one number."""
    entries = sorted(entries, key=lambda e: (e["imbalance"], e["cards"]))
    for rank, e in enumerate(entries, 1):
        knobs = e.pop("knobs")
        e["rank"] = rank
        e["variant_text"] = search.variant(knobs, f"{search.spec.name} candidate {rank}")
        e["rule_notes"] = _rule_notes(search, knobs, e["variant_text"])
        e["printed"] = printed_changes(search, knobs)
    return entries


def printed_changes(search: Search, knobs: list[Knob]) -> list[dict[str, str]]:
    """Each changed card's boxes as a designer prints them, before and after."""
    specs = {c.name: c for c in search.pool.specs}
    rows = []
    for name in dict.fromkeys(k.card for k in knobs):
        card = specs[name]
        table = turned(card, [k for k in knobs if k.card == name])
        if "value" in table:
            rows.append({"card": name, "box": "value", "old": str(card.value), "new": str(table["value"])})
        for box, keys in table.items():
            if isinstance(keys, dict) and "text" in keys:
                old = card.as_data().get(box, {}).get("text", "")
                rows.append({"card": name, "box": box, "old": old, "new": keys["text"]})
    return rows


def answer_line(search: Search, out: dict[str, Any]) -> str:
    """The search's answer in one line: the target with its baseline and the best candidate's paired
    change, or that nothing beats the official cards."""
    base = out["baseline"]
    if search.target is not None:
        name = search.pool.protocols[search.target]
        at = f"{name} wins {100 * base['protocols'][name]['win_rate']:.1f}% with the official cards"
    else:
        at = f"imbalance {100 * base['imbalance']:.1f} points with the official cards"
    if not out["candidates"]:
        return (
            f"Nothing beats the official cards: {at}; none of the {out['verified']} verified candidate"
            f"{'s' * (out['verified'] != 1)} moved it significantly nearer balance."
        )
    best = out["candidates"][0]
    if search.target is not None:
        tc = best["target_change"]
        moved = (
            f"{100 * best['protocols'][name]['win_rate']:.1f}%, a paired change of {100 * tc['change']:+.1f} points "
            f"({100 * tc['low']:+.1f} to {100 * tc['high']:+.1f})"
        )
    else:
        moved = f"imbalance {100 * best['imbalance']:.1f} points"
    n = len(out["candidates"])
    return f"{at}; candidate 1 of {n} brings it to {moved}."


# -- the folder ---------------------------------------------------------------------------------


def tune_folder(spec: Spec, out: str | None) -> Path:
    if out is not None:
        return Path(out)
    return Path(spec.output) / f"{spec.name}-tune-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def search_hash(spec: Spec) -> str:
    """What the trials depend on: the spec's hash without the number of trials, so that a search can
    be extended by asking for more."""
    d = spec.to_dict()
    for k in ("output", "source", "overrides", "description"):
        d.pop(k)
    d["tune"] = {k: v for k, v in d["tune"].items() if k != "trials"}
    return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def read_done(folder: Path, spec: Spec) -> list[dict[str, Any]]:
    """The trials recorded in a search folder, if it holds this spec's search (else an error)."""
    path = folder / TUNE_FILE
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        stored, trials = data["spec_hash"], list(data["trials"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SpecError(f"{path}: not a search record protolab wrote ({e}); give a new --out") from None
    if stored != search_hash(spec):
        raise SpecError(
            f"{path}: key 'spec_hash': this folder holds the search of another spec ({stored}, this spec "
            f"is {search_hash(spec)}); give a new --out"
        )
    return trials


def write_variants(folder: Path, verified: dict[str, Any]) -> None:
    """One file per proposed candidate, named by its rank; a resumed search's stale files go."""
    (folder / "variants").mkdir(exist_ok=True)
    for old in (folder / "variants").glob("candidate-*.toml"):
        old.unlink()
    for e in verified["candidates"]:
        path = folder / "variants" / f"candidate-{e['rank']}.toml"
        write_atomic(path, e.pop("variant_text").encode())
        e["variant"] = str(path)


def _provenance(search: Search, folder: Path, record: dict[str, Any]) -> dict[str, Any]:
    """The search's block in the shape of a run's (analysis/runs/provenance.py), so every output names
    what produced it the same way."""
    arm, spec = search.spec.arms[0], search.spec
    games = record["search_games"] + record["baseline"]["games"] * (
        1 + record.get("verified", len(record["candidates"]))
    )
    return {
        "run_id": folder.name,
        "path": str(folder),
        "arm": None,
        "design": "tune",
        "tiers": None,
        "strategies": {"judge": list(arm.strategies)},
        "sets": list(arm.sets),
        "card_files": [{"path": c.path, "sha256": c.sha256} for c in arm.cards],
        "pool_hash": search.pool.hash,
        "seed": spec.seed,
        "games": int(games),
        "draft": spec.draft.mode,
        "spec_hash": search_hash(spec),
        "protolab_version": protolab_version(),
        "engine_version": ENGINE_VERSION,
    }


def main_tune(spec: Spec, folder: Path, run: Player, say: Callable[[str], None]) -> dict[str, Any]:
    """Search, verify and record; returns the record (what `--format json` prints)."""
    t0 = time.monotonic()
    assert spec.tune is not None  # a balance search's spec has its [tune]
    search = prepare(spec)
    folder.mkdir(parents=True, exist_ok=True)
    done = read_done(folder, spec)
    record: dict[str, Any] = {
        "format": TUNE_FORMAT,
        "kind": "tune",
        "name": spec.name,
        "spec": spec.to_dict(),
        "spec_hash": search_hash(spec),
        "pool_hash": search.pool.hash,
        "knobs": len(search.knobs),
        "target": spec.tune["protocol"] or None,
        "trials": done,
    }

    def save(trials: list[dict[str, Any]]) -> None:
        record["trials"] = trials
        write_atomic(folder / TUNE_FILE, json.dumps(record, indent=1).encode())

    say(
        f"[bold]Balance search[/bold] {spec.name}: {len(search.knobs)} knob turns on "
        f"{len({k.card for k in search.knobs})} cards, {spec.tune['trials']} trials"
        + (f" ({len(done)} recorded)" if done else "")
    )
    kept = search_trials(search, run, done, save, say)
    record["warnings"] = search.warnings
    say(
        f"  verifying {min(len(front([(c.score, c.cards) for c in kept])), spec.tune['verify'])} candidates of "
        f"the front on {spec.games:,} fresh seeds each"
    )
    verified = verify(search, kept, run)
    write_variants(folder, verified)
    record.update(verified)
    record["search_games"] = int(sum(r["games"] for r in record["trials"]))
    record["provenance"] = _provenance(search, folder, record)
    record["seconds"] = round(time.monotonic() - t0, 1)
    save(record["trials"])
    return record
