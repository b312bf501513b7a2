"""The metagame loop (PSRO-lite, docs/experiments.md "Metagame loop"): a spec with a `[meta]` table
plays one ordinary run per iteration through the runner, and after each one asks which trios the
current equilibrium leaves open.

    iteration 0: every pair of the start trios (disjoint) is played
    after each iteration: fit the payoff model on every game so far (analysis/studies/balance/meta.py), solve the
    game restricted to the population of trios played so far, score every trio against that
    equilibrium; the best responses that gain more than `epsilon` join the population, and their
    matchups against the equilibrium's support (and each other) are the next iteration's run
    stop: no trio gains more than epsilon (converged), the equilibrium moved less than `tolerance`
    in total variation, or `iterations` runs were played

The loop folder holds the iteration runs and meta.json (what each iteration found and added);
`protolab meta LOOP_DIR` analyses all its games together and prints the iterations."""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from analysis.runs.open import open_runs
from analysis.runs.runfolder import write_atomic
from analysis.studies import open_study
from analysis.studies.balance.meta import LOOP_FILE, matchup_table, population_step
from protolab.experiment.run.plan import load_arm_pool
from protolab.experiment.run.runner import RunFailed, run
from protolab.experiment.spec import Draft, Meta, Spec, SpecError, check_code, load_spec, spec_strategies

# -- the loop -------------------------------------------------------------------------------------

Trio = tuple[str, ...]


def candidates(spec: Spec) -> list[str]:
    """The protocols the loop may combine: draft.protocols (checked against the pool), else the pool's."""

    pool = load_arm_pool(spec.arms[0], spec.source, "pool.cards")
    names = []
    for i, n in enumerate(spec.draft.protocols or pool.protocols):
        try:
            names.append(pool.protocols[pool.protocol(n)])
        except KeyError:
            raise SpecError(
                f"{spec.source}: key 'draft.protocols[{i}]': unknown protocol {n!r}; expected one of "
                f"{', '.join(pool.protocols)}"
            ) from None
    return sorted(set(names))


def start_trios(spec: Spec, names: list[str]) -> list[Trio]:
    """draft.trios, or meta.start trios drawn from every trio of `names` with the master seed."""
    if spec.draft.trios:
        canon = {n.lower(): n for n in names}
        out = []
        for i, t in enumerate(spec.draft.trios):
            missing = [p for p in t if p.lower() not in canon]
            if missing:
                raise SpecError(
                    f"{spec.source}: key 'draft.trios[{i}]': unknown protocol {missing[0]!r}; expected "
                    f"one of {', '.join(names)}"
                )
            out.append(tuple(sorted(canon[p.lower()] for p in t)))
        return out
    assert spec.meta is not None  # a metagame loop's spec has its [meta]
    trios = list(itertools.combinations(names, 3))
    pick = np.random.default_rng([spec.seed, 0x5E5D]).permutation(len(trios))[: spec.meta.start]
    return [trios[int(i)] for i in sorted(pick)]


def label(t: Trio) -> str:
    return ", ".join(sorted(t))


def new_matchups(added: list[Trio], opponents: list[Trio], played: set[frozenset[str]]) -> list[tuple[Trio, Trio]]:
    """Each added trio against each opponent (and the added ones against each other): the pairs that
    share no protocol and were not played yet; the alphabetically first trio takes seat 0."""
    out, seen = [], set(played)
    for a in added:
        for b in [*opponents, *added]:
            key = frozenset((label(a), label(b)))
            if a == b or set(a) & set(b) or key in seen:
                continue
            seen.add(key)
            out.append((a, b) if label(a) < label(b) else (b, a))
    return out


def _iteration_spec(spec: Spec, k: int, matchups: list[tuple[Trio, Trio]]) -> Spec:
    """Iteration k as an ordinary run: fixed matchups, its own master seed (seed + k)."""
    return dataclasses.replace(
        spec,
        name=f"{spec.name}-i{k:02d}"[:64],
        seed=(spec.seed + k) % 2**63,
        draft=Draft("fixed", matchups=tuple(matchups)),
        meta=None,
    )


def _write(loop_dir: Path, manifest: dict[str, Any]) -> None:
    write_atomic(loop_dir / LOOP_FILE, json.dumps(manifest, indent=1, default=str).encode())


def _analyse(loop_dir: Path, manifest: dict[str, Any], names: list[str], population: list[Trio], meta: Meta):
    """Fit and solve on every game of the loop so far (analysis.studies.balance.meta.population_step)."""

    runs = open_runs([str(loop_dir / it["run"]) for it in manifest["iterations"]])
    try:
        table = matchup_table(runs)
    finally:
        runs.close()
    return population_step(table, names, [label(t) for t in population], meta.prior_games)


def _make_loop_dir(spec: Spec, out: str | None) -> Path:
    parent = Path(out or spec.output)
    parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for k in range(1, 1000):
        d = parent / (f"{spec.name}-psro-{stamp}" + ("" if k == 1 else f"-{k}"))
        try:
            d.mkdir()
            return d
        except FileExistsError:
            continue
    raise SpecError(f"{parent}: cannot create a loop folder")


def _play_iteration(
    spec: Spec, k: int, matchups: list[tuple[Trio, Trio]], opts, loop_dir: Path, manifest: dict[str, Any], console
) -> tuple[Any, int | None]:
    """Iteration k's run: (its result, None), or (None, the exit status) once the manifest says why
    the loop stopped (a failed or interrupted run)."""
    child_opts = dataclasses.replace(opts, out=str(loop_dir), resume=None, games=None)
    try:
        result = run(_iteration_spec(spec, k, matchups), child_opts, console)
    except RunFailed as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        manifest["stopped"] = f"iteration {k} failed: {e}"
        _write(loop_dir, manifest)
        return None, 1
    if result.status != "complete":
        manifest["stopped"] = f"iteration {k} interrupted; its run can be finished with protolab run --resume"
        _write(loop_dir, manifest)
        return None, 128 + int(result.signum)
    return result, None


def _equilibrium(step, population: list[Trio], previous: dict[str, float], meta: Meta):
    """(mixture, support, total-variation change from `previous`, the open trios' gains, the best
    responses gaining more than epsilon)."""
    mixture = {t: float(x) for t, x in zip(step.population, step.mixture, strict=True)}
    support = {t: x for t, x in mixture.items() if x > 1e-6}
    tv = (
        0.5 * sum(abs(mixture.get(t, 0.0) - previous.get(t, 0.0)) for t in set(mixture) | set(previous))
        if previous
        else None
    )
    open_gains = step.gains.drop([label(t) for t in population]).sort_values(ascending=False)
    best = [t for t, g in open_gains.items() if g > meta.epsilon][: meta.responses]
    return mixture, support, tv, open_gains, best


def _stop_reason(best: list[str], tv: float | None, k: int, meta: Meta) -> str | None:
    if not best:
        return f"converged: no trio gains more than epsilon = {meta.epsilon:g} against the equilibrium"
    if tv is not None and tv < meta.tolerance:
        return f"the equilibrium moved {tv:.3f} < tolerance {meta.tolerance:g} (total variation)"
    if k + 1 == meta.iterations:
        return f"reached meta.iterations = {meta.iterations}"
    return None


def _found(step: Any, support: dict[str, float], open_gains: Any, tv: float | None, best: list[str]) -> dict[str, Any]:
    """What an iteration found, as its meta.json entry records it."""
    return {
        "support_size": len(support),
        "support": sorted(support, key=lambda t: -support[t]),
        "support_probabilities": support,
        "exploitability": step.exploitability,
        "best_gain": float(open_gains.iloc[0]) if len(open_gains) else 0.0,
        "tv_change": tv,
        "added": best,
    }


def _new_loop(spec: Spec, meta: Meta, names: list[str], out: str | None) -> tuple[Path, dict[str, Any]]:
    """The loop folder and its manifest (meta.json), written before the first iteration."""
    loop_dir = _make_loop_dir(spec, out)
    manifest: dict[str, Any] = {
        "kind": "psro",
        "name": spec.name,
        "spec": spec.to_dict(),
        "meta": meta.to_dict(),
        "protocols": names,
        "iterations": [],
        "stopped": None,
    }
    _write(loop_dir, manifest)
    return loop_dir, manifest


def _next_matchups(
    added: list[Trio], support: dict[str, float], population: list[Trio], played: set[frozenset[str]]
) -> list[tuple[Trio, Trio]]:
    """The next iteration's matchups: the best responses against the equilibrium's support, else
    against the whole population; none if every one was played or shares a protocol."""
    support_trios = [tuple(t.split(", ")) for t in support]
    return new_matchups(added, support_trios, played) or new_matchups(added, population, played)


def run_loop(spec: Spec, opts, console=None) -> tuple[Path, dict[str, Any], int]:
    """Play the loop; returns (loop folder, its manifest, exit status)."""

    meta = spec.meta or Meta()
    check_code(spec.source, spec_strategies(spec), opts.allow_code)  # before the loop folder is made
    names = candidates(spec)
    population = start_trios(spec, names)
    matchups = new_matchups(population, [], set())
    if not matchups:
        raise SpecError(
            f"{spec.source}: key 'draft.trios': expected start trios of which at least two share no protocol"
        )
    say = console.print if console is not None else (lambda *a, **k: None)
    loop_dir, manifest = _new_loop(spec, meta, names, opts.out)
    played: set[frozenset[str]] = set()
    previous: dict[str, float] = {}
    status = 0
    for k in range(meta.iterations):
        say(
            f"[bold]Metagame loop[/bold], iteration {k}: {len(matchups)} new matchups, population "
            f"{len(population)} trios"
        )
        result, failed = _play_iteration(spec, k, matchups, opts, loop_dir, manifest, console)
        if failed is not None:
            return loop_dir, manifest, failed
        played.update(frozenset((label(a), label(b))) for a, b in matchups)
        entry: dict[str, Any] = {
            "iteration": k,
            "run": Path(result.run_dir).name,
            "matchups": len(matchups),
            "games": int(result.games),
            "trios": len(population),
        }
        manifest["iterations"].append(entry)
        step = _analyse(loop_dir, manifest, names, population, meta)
        mixture, support, tv, open_gains, best = _equilibrium(step, population, previous, meta)
        entry.update(_found(step, support, open_gains, tv, best))
        previous = mixture
        stop = _stop_reason(best, tv, k, meta)
        added = [tuple(t.split(", ")) for t in best]
        if stop is None:
            matchups = _next_matchups(added, support, population, played)
            if not matchups:
                stop = "the best responses share a protocol with every trio of the population: nothing new to play"
        if stop is not None:
            entry["added"] = []
            manifest["stopped"] = stop
            _write(loop_dir, manifest)
            say(f"Metagame loop stopped after iteration {k}: {stop}")
            break
        population.extend(added)
        _write(loop_dir, manifest)
        say(f"  equilibrium support {len(support)}, exploitability {step.exploitability:.3f}; adding {'; '.join(best)}")
    return loop_dir, manifest, status


def main_psro(spec_arg: str | Spec, opts, console) -> int:
    """`protolab run SPEC` of a [meta] spec: the loop, then the metagame of all its games (its study,
    analysis/studies/metagame/study.py: the terminal report and the page written into the loop folder)."""

    spec = spec_arg if isinstance(spec_arg, Spec) else load_spec(spec_arg, games=opts.games)
    loop_dir, manifest, status = run_loop(spec, opts, console)
    if status != 0 or not manifest["iterations"]:
        return status
    open_study([str(loop_dir)]).conclude(console, loop_dir)
    console.print(f"Loop folder: {loop_dir} (protolab meta {loop_dir})")
    return 0
