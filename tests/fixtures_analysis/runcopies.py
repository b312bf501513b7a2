"""Copies of a finished run folder altered the way older or damaged runs look (tests only)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path


def manifest(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def copy_without_table(run_dir: Path, dest: Path, table: str) -> Path:
    """A copy of `run_dir` as a run written before the per-shard `table` (cards, compiles)
    existed: no `table/` folder and no `table_*` keys in run.json."""
    shutil.copytree(run_dir, dest)
    shutil.rmtree(dest / table)
    m = manifest(dest)
    for s in m["shards"]:
        for k in ("file", "rows", "bytes", "sha256"):
            del s[f"{table}_{k}"]
    (dest / "run.json").write_text(json.dumps(m))
    return dest
