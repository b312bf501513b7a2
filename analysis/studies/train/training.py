"""A training folder (`protolab train`, train.json) read as tables: one row per generation (its
players, examples, fit and model hash) and one per generation and ladder opponent (win rate with
its 95% Wilson interval). The study (analysis/studies/train/study.py) and the model card
(analysis/studies/train/modelcard.py) are both written from these."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from analysis.runs.open import RunError

TRAIN_FILE = "train.json"
TABLES = ("generations", "ladder", "curve")
NEEDED = ("name", "generations", "spec", "pool_hash", "output")


def read_training(folder: str | Path) -> dict[str, Any]:
    """The finished training record of a folder; a missing key is one line naming it."""
    path = Path(str(folder)) / TRAIN_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise RunError(f"{path}: not a training record protolab wrote ({e})") from None
    missing = [k for k in NEEDED if k not in record] if isinstance(record, dict) else ["name"]
    if missing:
        raise RunError(
            f"{path}: key '{missing[0]}': missing; the training has not finished (run protolab train "
            "--resume on this folder to go on)"
        )
    return record


def generations(record: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for e in record["generations"]:
        ex, fit, pairs = e["examples"], e["fit"], e["ladder"]["pairs"]
        players = f"{ex['players'][0]} on both seats" if len(set(ex["players"])) == 1 else " vs ".join(ex["players"])
        rows.append(
            {
                "generation": e["generation"],
                "players": players,
                "explore": ex["explore"],
                "games": ex["games"],
                "examples": ex["rows"],
                "data_generations": ",".join(str(g) for g in fit["data_generations"]),
                "epochs": fit["epochs"],
                "val_loss": fit["val_loss"],
                "constant_loss": fit["constant_loss"],
                "val_accuracy": fit["val_accuracy"],
                "model_hash": e["model"]["hash"],
                "mean_ladder": sum(p["win_rate_a"] for p in pairs) / len(pairs),
                "seconds": e["seconds"],
            }
        )
    return pd.DataFrame(rows)


def ladder(record: dict[str, Any]) -> pd.DataFrame:
    rows = [
        {
            "generation": e["generation"],
            "opponent": p["b"],
            "games": p["games"],
            "wins": p["wins_a"],
            "losses": p["wins_b"],
            "draws": p["draws"],
            "win_rate": p["win_rate_a"],
            "ci_low": p["ci_low"],
            "ci_high": p["ci_high"],
            "model_hash": e["model"]["hash"],
        }
        for e in record["generations"]
        for p in e["ladder"]["pairs"]
    ]
    return pd.DataFrame(rows)


def curve(record: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"generation": e["generation"], **c} for e in record["generations"] for c in e["fit"]["curve"]]
    )


def table(record: dict[str, Any], name: str) -> pd.DataFrame:
    return {"generations": generations, "ladder": ladder, "curve": curve}[name](record)
