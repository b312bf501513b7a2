"""Open run folders as DuckDB views `games`, `events`, `cards` and `compiles` over their Parquet shards.

Nothing is loaded into Python: the views read the files lazily, and queries return only small
aggregates. Opening checks what is cheap to check (the manifest, each file's footer and columns)
so that bad input fails here with one readable message naming the file, not deep inside a query.

`cards` (per shard and card, the seat-game counts behind card impact) exists only when every shard
of every opened run has its cards file; otherwise card impact is computed from `events`. The same
rule holds for `compiles` (per shard, compile counts by protocol, line, ordinal and turn) and the
per-protocol and per-line compile tables."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow.parquet as pq

from analysis.schema import CARDS_COLUMNS, COMPILES_COLUMNS, EVENTS_COLUMNS, GAMES_COLUMNS

# The per-shard summaries of `events` (docs/data.md): their columns, and what each one speeds up.
SUMMARY_COLUMNS = {"cards": CARDS_COLUMNS, "compiles": COMPILES_COLUMNS}
SUMMARY_OF = {"cards": "card impact", "compiles": "the per-protocol compile tables"}


class RunError(ValueError):
    """A folder that is not a run, or a file in it that cannot be read: the message names it."""


@dataclass
class Runs:
    """One or more opened runs: a DuckDB connection with views `games`, `events`, `cards` and
    `compiles` (the last three only when the runs have them)."""

    con: duckdb.DuckDBPyConnection
    paths: list[Path]
    manifests: list[dict[str, Any]]
    games_files: list[Path]
    events_files: list[Path]
    warnings: list[str] = field(default_factory=list)
    cards_files: list[Path] = field(default_factory=list)
    compiles_files: list[Path] = field(default_factory=list)
    _memo: dict[str, Any] = field(default_factory=dict)

    @property
    def has_events(self) -> bool:
        return bool(self.events_files)

    @property
    def has_cards(self) -> bool:
        """Every shard of every run has a cards file (view `cards`)."""
        return bool(self.cards_files)

    @property
    def has_compiles(self) -> bool:
        """Every shard of every run has a compiles file (view `compiles`)."""
        return bool(self.compiles_files)

    @property
    def files(self) -> list[Path]:
        return self.games_files + self.events_files + self.cards_files + self.compiles_files

    @property
    def run_ids(self) -> list[str]:
        return [str(m.get("run_id", p.name)) for m, p in zip(self.manifests, self.paths, strict=True)]

    @property
    def single(self) -> bool:
        """One run: joins between events and games need only game_index."""
        return len(self.paths) == 1

    @property
    def label(self) -> str:
        return ", ".join(self.run_ids)

    def sql(self, query: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        """Run a query, returning a (small) DataFrame; read errors become RunError naming the file."""
        try:
            return self.con.execute(query, params or []).df()
        except duckdb.Error as e:
            raise RunError(_explain(str(e), self.files)) from None

    def execute(self, query: str) -> None:
        try:
            self.con.execute(query)
        except duckdb.Error as e:
            raise RunError(_explain(str(e), self.files)) from None

    def memo(self, key: str, fn: Callable[[], Any]) -> Any:
        """Compute a shared intermediate once per opened dataset (several tables reuse it)."""
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]

    def close(self) -> None:
        self.con.close()


def _explain(message: str, files: list[Path]) -> str:
    first = message.strip().splitlines()[0] if message.strip() else message
    for f in files:
        if str(f) in message or f.name in message:
            return f"{f}: cannot be read ({first})"
    return f"reading the run failed: {first}"


def _manifest(run: Path) -> dict[str, Any]:
    if not run.exists():
        raise RunError(f"{run}: no such folder")
    if not run.is_dir():
        raise RunError(f"{run}: not a run folder (a run is a folder with run.json and games/*.parquet)")
    mf = run / "run.json"
    if not mf.is_file():
        raise RunError(f"{run}: not a run folder (no run.json; a run is what `protolab run` writes)")
    try:
        m = json.loads(mf.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunError(f"{mf}: not a readable run manifest ({e})") from None
    if not isinstance(m, dict):
        raise RunError(f"{mf}: not a run manifest (expected a JSON object)")
    return m


def _shard_files(run: Path, m: dict[str, Any], kind: str) -> list[Path]:
    """Files of one table: those the manifest lists, else every complete file on disk."""
    listed = [s.get(f"{kind}_file") for s in m.get("shards") or [] if isinstance(s, dict)]
    if listed and all(listed):
        files = [run / f for f in listed]
        missing = [f for f in files if not f.is_file()]
        if missing:
            raise RunError(f"{missing[0]}: listed in {run / 'run.json'} but missing")
        return files
    folder = run / kind
    return sorted(f for f in folder.glob("*.parquet") if not f.name.startswith(".")) if folder.is_dir() else []


def _summary_files(run: Path, m: dict[str, Any], kind: str, shards_of: list[Path]) -> tuple[list[Path], str | None]:
    """The run's files of a summary table (`cards`, `compiles`) if every shard in `shards_of` (the
    events files, or the games files of a run without events) has one, else ([], why not)."""
    shards = [s for s in m.get("shards") or [] if isinstance(s, dict)]
    listed = [s.get(f"{kind}_file") for s in shards]
    if shards and all(listed):
        files = [run / f for f in listed]
    else:          # shards recorded before the table existed, or no manifest listing: what is on disk
        folder = run / kind
        files = sorted(f for f in folder.glob("*.parquet") if not f.name.startswith(".")) if folder.is_dir() else []
    if not files:
        return [], None
    missing = [f for f in files if not f.is_file()]
    if missing:
        return [], f"{missing[0]}: listed in {run / 'run.json'} but missing"
    if sorted(f.name for f in files) != sorted(f.name for f in shards_of):
        return [], f"{run}: not every shard has a {kind} file"
    return files, None


def _check_file(f: Path, columns: Iterable[str]) -> int:
    """Read the footer only: catches truncated or corrupt files and missing columns cheaply."""
    try:
        meta = pq.read_metadata(f)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise RunError(f"{f}: not a readable Parquet file ({' '.join(str(e).split())})") from None
    names = set(meta.schema.to_arrow_schema().names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise RunError(f"{f}: not a {f.parent.name} file of docs/data.md (missing columns: {', '.join(missing)})")
    return meta.num_rows


def _files_sql(files: list[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def split_arm(path: str | Path) -> tuple[Path, str | None]:
    """`RUN_DIR#arm` names one arm of an A/B run; a plain path is the whole run."""
    text = str(path)
    if "#" in text:
        run, _, arm = text.rpartition("#")
        return Path(run), arm
    return Path(text), None


def _only_arm(run: Path, m: dict[str, Any], arm: str) -> dict[str, Any]:
    """The manifest restricted to one arm's shards (every shard holds games of a single arm)."""
    names = [a.get("name") for a in (m.get("spec") or {}).get("arms") or [] if isinstance(a, dict)]
    if arm not in names:
        raise RunError(f"{run}: no arm {arm!r} in this run; its arms: {', '.join(map(str, names)) or 'none'}")
    shards = [s for s in m.get("shards") or [] if isinstance(s, dict) and s.get("arm") == arm]
    if not shards:
        raise RunError(f"{run}: arm {arm!r} has no finished shards yet")
    return {**m, "shards": shards}


def open_runs(paths: str | Path | Sequence[str | Path], threads: int | None = None,
              memory_limit: str | None = None) -> Runs:
    """Open one or more run folders (`RUN_DIR#arm` for one arm of an A/B run). Raises RunError
    (naming the file) for bad input."""
    if isinstance(paths, str | Path):
        paths = [paths]
    parsed = [split_arm(p) for p in paths]
    runs = [run for run, _ in parsed]
    if not runs:
        raise RunError("no run folder given")
    manifests, games_files, events_files, warnings = [], [], [], []
    summaries: dict[str, list[list[Path]]] = {kind: [] for kind in SUMMARY_COLUMNS}
    for run, arm in parsed:
        m = _manifest(run)
        if arm is not None:
            m = _only_arm(run, m, arm)
        g = _shard_files(run, m, "games")
        if not g:
            raise RunError(f"{run}: not a run folder (no games/*.parquet)")
        e = _shard_files(run, m, "events")
        found = {kind: _summary_files(run, m, kind, e or g) for kind in SUMMARY_COLUMNS}
        for f in g:
            _check_file(f, GAMES_COLUMNS)
        for f in e:
            _check_file(f, EVENTS_COLUMNS)
        for kind, (files, _) in found.items():
            for f in files:
                _check_file(f, SUMMARY_COLUMNS[kind])
        if m.get("complete") is False:
            warnings.append(f"{run}: the run is not complete (run.json says complete: false); "
                            f"the report covers the {len(g)} shard(s) written so far")
        if not e:
            lost = [SUMMARY_OF[k] for k in SUMMARY_COLUMNS if not found[k][0]]
            if lost:
                warnings.append(f"{run}: no events files; {' and '.join(lost)} omitted")
        else:
            for kind, (_, why) in found.items():
                if why:
                    warnings.append(f"{why}; {SUMMARY_OF[kind]} from events (slower)")
        manifests.append(m)
        games_files += g
        events_files += e
        for kind, (files, _) in found.items():
            summaries[kind].append(files)
    # One source per table: a summary's files only if every run has them for every shard.
    cards_files, compiles_files = ([f for c in summaries[k] for f in c] if all(summaries[k]) else []
                                   for k in ("cards", "compiles"))
    if events_files and len(events_files) and any(not _shard_files(r, m, "events")
                                                   for r, m in zip(runs, manifests, strict=True)):
        raise RunError("some runs have events and some do not: open them separately")
    con = duckdb.connect()
    con.execute(f"set threads = {int(threads or os.cpu_count() or 1)}")
    if memory_limit:
        con.execute(f"set memory_limit = '{memory_limit}'")
    con.execute("set preserve_insertion_order = false")
    # Large event aggregations spill to disk instead of failing when memory runs short.
    spill = Path(tempfile.gettempdir()) / "protolab-duckdb"
    con.execute(f"set temp_directory = '{str(spill).replace(chr(39), chr(39) * 2)}'")
    out = Runs(con, runs, manifests, games_files, events_files, warnings, cards_files, compiles_files)
    out.execute(f"create view games as select * from read_parquet({_files_sql(games_files)})")
    if events_files:
        out.execute(f"create view events as select * from read_parquet({_files_sql(events_files)})")
    if cards_files:
        out.execute(f"create view cards as select * from read_parquet({_files_sql(cards_files)})")
    if compiles_files:
        out.execute(f"create view compiles as select * from read_parquet({_files_sql(compiles_files)})")
    return out
