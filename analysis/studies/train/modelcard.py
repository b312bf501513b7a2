"""The model card of a trained model (datasets/models/NAME.md), written from its training record
(train.json) and nothing else: what it was trained on and how, what each generation's ladder
measured, and the hashes that tie the card to the model file, the pool and the spec."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import pandas as pd

from analysis.pages.cells import pct
from analysis.studies.train import training


def _md_table(df: pd.DataFrame) -> str:
    head = "| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns) + "\n"
    return head + "".join("| " + " | ".join(str(v) for v in row) + " |\n" for row in df.itertuples(index=False))


def _shown_table(df: pd.DataFrame, columns: tuple[tuple[str, str, Any], ...]) -> str:
    """A markdown table of the (heading, column, format) `columns` of `df`: each column as it is
    where the format is None, else each value formatted by it."""
    return _md_table(pd.DataFrame({head: df[c] if f is None else df[c].map(f) for head, c, f in columns}))


_COUNT, _LOSS = "{:,}".format, "{:.4f}".format

# The card's tables: what each generation fitted, and what each generation's ladder measured.
GENERATION_COLUMNS = (
    ("generation", "generation", None),
    ("data played by", "players", None),
    ("explore", "explore", None),
    ("games", "games", _COUNT),
    ("examples", "examples", _COUNT),
    ("fit on generations", "data_generations", None),
    ("epochs", "epochs", None),
    ("held-out log loss", "val_loss", _LOSS),
    ("constant", "constant_loss", _LOSS),
    ("seconds", "seconds", None),
    ("model", "model_hash", None),
)
LADDER_COLUMNS = (
    ("generation", "generation", None),
    ("opponent", "opponent", None),
    ("games", "games", None),
    ("win rate", "win_rate", pct),
    ("95% interval", "interval", None),
    ("model", "model_hash", None),
)


def _ladder_table(record: dict[str, Any]) -> str:
    df = training.ladder(record)
    interval = [f"{pct(a)}-{pct(b)}" for a, b in zip(df["ci_low"], df["ci_high"], strict=True)]
    return _shown_table(df.assign(interval=interval), LADDER_COLUMNS)


def _spec_arg(source: str) -> str:
    """How the card's reader names the spec: a shipped example by its name, any other by its path."""
    p = PurePath(source)
    return p.stem if p.parent.name == "experiments" and p.parent.parent.name == "datasets" else source


def _network(s: dict[str, Any]) -> str:
    outputs = (
        "two outputs: the logit of P(the viewing seat wins), draws counted half, and the policy logit "
        "(softmax within a decision: the search's visit shares)"
        if s["data"].get("policy")
        else "one output, the logit of P(the viewing seat wins), draws counted half"
    )
    return f"- network: hidden layers {list(s['hidden'])}, {s['activation']}; {outputs}"


def _later(data: dict[str, Any]) -> str:
    """Who played the later generations' games: the improver guided by the previous model, or self-play."""
    if data.get("improver"):
        return f"later ones by `{data['improver']}` guided by the previous generation's model"
    return f"later ones by self-play exploring {data['explore']:g}"


def _fit(s: dict[str, Any]) -> str:
    f = s["fit"]
    searched = f.get("search_value", 0)
    value = f"value log loss + {searched:g} x the search's values' log loss" if searched else "value log loss"
    how = (
        f"numpy ({value} + per-decision policy cross-entropy, Adam; protolab/experiment/train/fitpolicy.py)"
        if s["data"].get("policy")
        else "scikit-learn MLPClassifier (log loss, Adam)"
    )
    return (
        f"- fit: {how}, up to {f['epochs']} epochs, batch {f['batch']}, learning rate {f['learning_rate']:g}, "
        f"L2 {f['l2']:g}, stopped on the {'losses' if s['data'].get('policy') else 'log loss'} of "
        f"{f['validation']:.0%} held-out games (patience {f['patience']})"
    )


def model_card(record: dict[str, Any]) -> str:
    """The card as Markdown."""
    s, out, libs = record["spec"], record["output"], record.get("libraries", {})
    lines = [
        f"# Model `{out['name']}`\n",
        f"Written by `protolab train` from the training `{record['name']}` (spec hash `{record['spec_hash']}`). "
        "Generated from its train.json; do not edit by hand.\n",
        f"- model hash: `{out['hash']}` (generation {out['generation']}, chosen as the "
        f"{'last generation' if out['choose'] == 'last' else 'best by mean ladder win rate'})",
        f"- inputs: {record['features']} features, digest `{record['feature_digest']}`",
        _network(s),
        f"- pool: sets {', '.join(s['sets'])}; variant files "
        f"{', '.join(c['path'] for c in s['cards']) or 'none'}; pool hash `{record['pool_hash']}` "
        "(the player's provenance says so when it plays another pool)",
        f"- master seed {s['seed']}; {len(record['generations'])} generations of {s['data']['games']:,} games; "
        f"generation 0 by `{s['data']['expert']}`, {_later(s['data'])}; each fit on the newest "
        f"{s['data']['window']} generations' examples",
        _fit(s),
        f"- training time: {record.get('seconds', 0):,.0f} s of generations (wall clock, this machine)",
        "- libraries: " + ", ".join(f"{k} {v}" for k, v in sorted(libs.items())) + "\n",
        "## Generations\n",
        _shown_table(training.generations(record), GENERATION_COLUMNS),
        "## Ladder (seats swapped on paired seeds, the same seeds every generation)\n",
        _ladder_table(record),
        "## Reproduce\n",
        f"```\nprotolab train {_spec_arg(s.get('source') or '')}\n```\n",
        "Same seed, machine and library versions: the same model hash (docs/training.md says what is deterministic).\n",
    ]
    return "\n".join(lines)
