"""Open run folders as DuckDB views `games`, `events`, `cards` and `compiles` over their Parquet shards.

Nothing is loaded into Python: the views read the files lazily, and queries return only small
aggregates. Opening checks the manifest and each file's footer and columns so that bad input
fails here with one readable message naming the file, not deep inside a query, and verifies each
run against its manifest (analysis.runs.verify: checksums, coverage, stray files, a run given twice) so
that files other than the ones the run wrote never give figures silently; only listed files are read.

`cards` (per shard and card, the seat-game counts behind card impact) exists only when every shard
of every opened run has its cards file; otherwise card impact is computed from `events`. The same
rule holds for `compiles` (per shard, compile counts by protocol, line, ordinal and turn) and the
per-protocol and per-line compile tables, and for `tallies` (per shard, the counts of the games every
other report table is a roll-up of: analysis/runs/tallies.py), whose absence means reading `games`.

With every shard's tallies, the report reads no game rows: `games` files are then checked by footer,
size and row count at opening, and hashed (verify "fast") only before the first query that reads
their rows (a table the tallies do not hold)."""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from analysis.runs import runfolder
from analysis.runs import verify as checks
from analysis.runs.manifest import Manifest, ShardFile
from analysis.runs.runfolder import RunDirError
from analysis.runs.schema import CARDS_COLUMNS, COMPILES_COLUMNS, EVENTS_COLUMNS, GAMES_COLUMNS
from analysis.runs.storage import Location, StorageError, location, parquet_view
from analysis.runs.tallies import TALLIES_COLUMNS

# The per-shard summaries of `events` (docs/data.md): their columns, and what each one speeds up.
SUMMARY_COLUMNS = {"cards": CARDS_COLUMNS, "compiles": COMPILES_COLUMNS}
SUMMARY_OF = {"cards": "card impact", "compiles": "the per-protocol compile tables"}
_ALL_SUMMARIES = {**SUMMARY_COLUMNS, "tallies": TALLIES_COLUMNS}  # and the summary of `games`
_READS_GAMES = re.compile(r"\b(from|join)\s+games\b", re.IGNORECASE)


class RunError(ValueError):
    """A folder that is not a run, or a file in it that cannot be read: the message names it."""


@dataclass
class Runs:
    """One or more opened runs: a DuckDB connection with views `games`, `events`, `cards` and
    `compiles` (the last three only when the runs have them)."""

    con: duckdb.DuckDBPyConnection
    paths: list[Path | Location]  # a pathlib.Path for a local run (Location.public)
    manifests: list[Manifest | None]  # each run's run.json, checked; None for games held in memory
    games_files: list[Location]
    events_files: list[Location]
    warnings: list[str] = field(default_factory=list)
    cards_files: list[Location] = field(default_factory=list)
    compiles_files: list[Location] = field(default_factory=list)
    tallies_files: list[Location] = field(default_factory=list)
    _memo: dict[str, Any] = field(default_factory=dict)
    # games files not hashed yet, checked before the first query that reads game rows
    _unhashed: Callable[[], None] | None = None
    _before_close: list[Callable[[], None]] = field(default_factory=list)

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
    def has_tallies(self) -> bool:
        """Every shard of every run has a tallies file (view `tallies`)."""
        return bool(self.tallies_files)

    @property
    def files(self) -> list[Location]:
        return self.games_files + self.events_files + self.cards_files + self.compiles_files + self.tallies_files

    @property
    def run_ids(self) -> list[str]:
        return [m.run_id if m is not None else p.name for m, p in zip(self.manifests, self.paths, strict=True)]

    @property
    def single(self) -> bool:
        """One run: joins between events and games need only game_index."""
        return len(self.paths) == 1

    @property
    def label(self) -> str:
        return ", ".join(self.run_ids)

    def sql(self, query: str, params: Sequence[Any] | None = None) -> pd.DataFrame:
        """Run a query, returning a (small) DataFrame; read errors become RunError naming the file."""
        self._verify_rows(query)
        try:
            return self.con.execute(query, params or []).df()
        except duckdb.Error as e:
            raise RunError(_explain(str(e), self.files)) from None

    def execute(self, query: str) -> None:
        self._verify_rows(query)
        try:
            self.con.execute(query)
        except duckdb.Error as e:
            raise RunError(_explain(str(e), self.files)) from None

    def _verify_rows(self, query: str) -> None:
        """Hash the games files (deferred at opening) before a query reads their rows."""
        if self._unhashed is not None and _READS_GAMES.search(query):
            self._unhashed()  # raises (and stays due) unless the files are as recorded
            self._unhashed = None

    def memo(self, key: str, fn: Callable[[], Any]) -> Any:
        """Compute a shared intermediate once per opened run (several tables reuse it)."""
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]

    def before_close(self, fn: Callable[[], None]) -> None:
        """Call `fn` when the runs are closed, while they can still be read (a report's deferred tables)."""
        self._before_close.append(fn)

    def close(self) -> None:
        try:
            while self._before_close:
                self._before_close.pop(0)()
        finally:
            self.con.close()


def _explain(message: str, files: list[Location]) -> str:
    first = message.strip().splitlines()[0] if message.strip() else message
    for f in files:
        if str(f) in message or f.name in message:
            return f"{f}: cannot be read ({first})"
    return f"reading the run failed: {first}"


def peek_manifest(path: str | Path | Location) -> Manifest | None:
    """The run.json of a run folder (or `RUN#arm`) without the journal or the checks of its files,
    or None when it cannot be read or is not a run.json: for deciding how to open a run; opening
    it then reports any problem."""
    try:
        run, _ = split_arm(path)
        return runfolder.read_manifest(run, journal=False)
    except (RunDirError, RunError, OSError):
        return None


def _manifest(run: Location) -> Manifest:
    """run.json, with the shards recorded since it was last written (the journal, an unfinished run):
    runfolder.read_manifest, the one reader, its errors as RunError."""
    try:
        return runfolder.read_manifest(run)
    except (RunDirError, StorageError) as e:
        raise RunError(str(e)) from None


@dataclass
class _Findings:
    """Verification problems: the first is a RunError, or with `trust` each is a warning."""

    trust: bool
    warnings: list[str]

    def add(self, problems: list[str]) -> None:
        if problems and not self.trust:
            raise RunError(problems[0])
        self.warnings += [f"{p} (read anyway: --trust)" for p in problems]


Listed = list[tuple[Location, ShardFile]]  # (file, its listing in a shard entry) of one table


def _listed(run: Location, m: Manifest, kind: str) -> Listed:
    return [(run / f.path, f) for s in m.shards if (f := s.file(kind)) is not None]


def _shard_files(run: Location, m: Manifest, kind: str, found: _Findings) -> Listed:
    """The files of `games` or `events` that the manifest lists (files it does not list are never read)."""
    files, entries = _listed(run, m, kind), m.shards
    if files and len(files) < len(entries):
        without = next(s.index for s in entries if s.file(kind) is None)
        found.add(
            [
                f"{run / 'run.json'}: shard {without} lists no {kind}_file ({len(files)} of {len(entries)} "
                f"shards do); it is not read"
            ]
        )
    missing = [f for f, _ in files if not f.is_file()]
    if missing:
        raise RunError(f"{missing[0]}: listed in {run / 'run.json'} but missing")
    return files


def _summary_files(run: Location, m: Manifest, kind: str) -> tuple[Listed, str | None]:
    """The run's files of a summary table (`cards`, `compiles`) if every shard lists one, else
    ([], why not: None when no shard has one, as in runs from before the table existed)."""
    files = _listed(run, m, kind)
    if not files:
        return [], None
    missing = [f for f, _ in files if not f.is_file()]
    if missing:
        return [], f"{missing[0]}: listed in {run / 'run.json'} but missing"
    if len(files) != len(m.shards):
        return [], f"{run}: not every shard has a {kind} file"
    return files, None


def _check_file(f: Location, columns: Iterable[str]) -> int:
    """Read the footer only: catches truncated or corrupt files and missing columns cheaply."""
    try:
        with f.open_input() as src:
            meta = pq.read_metadata(src)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise RunError(f"{f}: not a readable Parquet file ({' '.join(str(e).split())})") from None
    names = set(meta.schema.to_arrow_schema().names)
    missing = [c for c in columns if c not in names]
    if missing:
        raise RunError(f"{f}: not a {f.parent.name} file of docs/data.md (missing columns: {', '.join(missing)})")
    return int(meta.num_rows)


def _check_files(files: Listed, kind: str, columns: Iterable[str], found: _Findings) -> None:
    """Footer, columns, size and row count of each file against its shard entry."""
    for f, listed in files:
        found.add(checks.size_rows_problems(f, listed, _check_file(f, columns)))


def _files_sql(files: list[Path]) -> str:
    return "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in files) + "]"


def split_arm(path: str | Path | Location) -> tuple[Path | Location, str | None]:
    """`RUN_DIR#arm` names one arm of an A/B run; a plain path is the whole run."""
    text = str(path)
    arm = None
    if "#" in text:
        text, _, arm = text.rpartition("#")
    try:
        return location(text).public, arm  # a pathlib.Path when local
    except StorageError as e:
        raise RunError(str(e)) from None


def arm_of(path: str | Path) -> str:
    """The arm a `RUN#arm` path names (an A/B arm or a tier, as run_arms and tier_paths write them)."""
    arm = split_arm(path)[1]
    if arm is None:
        raise RunError(f"{path}: expected RUN_DIR#arm, naming one arm of the run")
    return arm


def _only_arm(run: Location, m: Manifest, arm: str) -> Manifest:
    """The manifest restricted to one arm's shards (every shard holds games of a single arm)."""
    names = m.spec.arm_names
    if arm not in names:
        raise RunError(f"{run}: no arm {arm!r} in this run; its arms: {', '.join(map(str, names)) or 'none'}")
    shards = [s for s in m.shards if s.arm == arm]
    if not shards:
        raise RunError(f"{run}: arm {arm!r} has no finished shards yet")
    return dataclasses.replace(m, shards=shards)


Opened = tuple[Location, str | None, Manifest]  # (run folder, arm or None, its run.json)


def _overlaps(a: Opened, b: Opened) -> bool:
    """Same run (run_id: a copy of a folder is the same run) and the same games: the whole run and
    one of its arms overlap, two different arms do not."""
    same_run = a[2].run_id == b[2].run_id
    return same_run and (a[1] is None or b[1] is None or a[1] == b[1])


def _name(o: Opened) -> str:
    return f"{o[0]}#{o[1]}" if o[1] is not None else str(o[0])


def _distinct(opened: list[Opened], found: _Findings) -> list[Opened]:
    """Each run once: a run given twice would count every game twice (narrower intervals, same
    rates). An error; with `trust`, the later copy is dropped (the whole run replaces its arms)."""
    kept: list[Opened] = []
    for o in opened:
        clash = [k for k in kept if _overlaps(k, o)]
        if not clash:
            kept.append(o)
            continue
        what = f"{_name(o)}: the same run as {_name(clash[0])} (run_id {o[2].run_id!r})"
        if not found.trust:
            raise RunError(f"{what}; its games would be counted twice: give each run once")
        if o[1] is None and all(k[1] is not None for k in clash):  # the whole run replaces its arms
            kept = [o if k is clash[0] else k for k in kept if all(k is not c for c in clash[1:])]
        found.warnings.append(f"{what}; opened once (--trust)")
    return kept


@dataclass
class _RunFiles:
    """One opened run: its manifest (restricted to the arm) and the files of each table it lists."""

    manifest: Manifest
    games: Listed
    events: Listed
    summaries: dict[str, tuple[Listed, str | None]]  # kind -> (files if every shard has one, why not)


def _verified(opened: Opened, found: _Findings) -> _RunFiles:
    """One run's games, events and summary files, checked against its manifest (all but checksums)."""
    run, arm, m = opened
    for check in (checks.listing_problems, checks.coverage_problems, checks.stray_problems):
        found.add(check(run, m))
    if arm is not None:
        m = _only_arm(run, m, arm)
    g = _shard_files(run, m, "games", found)
    if not g:
        raise RunError(f"{run}: no games to read ({run / 'run.json'} lists no shard with a games file)")
    e = _shard_files(run, m, "events", found)
    found_summaries = {kind: _summary_files(run, m, kind) for kind in _ALL_SUMMARIES}
    _check_files(g, "games", GAMES_COLUMNS, found)
    _check_files(e, "events", EVENTS_COLUMNS, found)
    for kind, (files, _) in found_summaries.items():
        _check_files(files, kind, _ALL_SUMMARIES[kind], found)
    if found_summaries["tallies"][1]:
        found.warnings.append(f"{found_summaries['tallies'][1]}; the report's tables from every game (slower)")
    if not m.complete:
        found.warnings.append(
            f"{run}: the run is not complete (run.json says complete: false); "
            f"the report covers the {len(g)} shard(s) written so far"
        )
    if not e:
        lost = [SUMMARY_OF[k] for k in SUMMARY_COLUMNS if not found_summaries[k][0]]
        if lost:
            found.warnings.append(f"{run}: no events files; {' and '.join(lost)} omitted")
    else:
        for kind, (_, why) in found_summaries.items():
            if why and kind in SUMMARY_COLUMNS:
                found.warnings.append(f"{why}; {SUMMARY_OF[kind]} from events (slower)")
    return _RunFiles(m, g, e, found_summaries)


def open_table(games: pa.Table, label: str = "batch") -> Runs:
    """Games held in memory (a batch played in this process) as a Runs, so that its figures come
    from the same queries as a run folder's; `label` names it where a report names its runs."""
    con = duckdb.connect()
    con.register("games", games)
    return Runs(con, [Path(label)], [None], [], [])


def open_runs(
    paths: str | Path | Sequence[str | Path | Location],
    threads: int | None = None,
    memory_limit: str | None = None,
    verify: str = "fast",
    trust: bool = False,
) -> Runs:
    """Open one or more run folders as one set of DuckDB views, each verified against its run.json.

    Args:
        paths: a run folder, or several (local or in an object store); `RUN_DIR#arm` opens one
            arm of an A/B run.
        threads: DuckDB's and the checksums' threads; None: one per core.
        memory_limit: DuckDB's memory limit ("4GB"); None: DuckDB's default.
        verify: "fast" (checksum the files the figures come from) or "full" (every file, events
            included): analysis.runs.verify.
        trust: report what verification finds as warnings in `Runs.warnings` instead of raising.

    Returns:
        The opened runs: views `games`, `events`, `cards`, `compiles` and `tallies` (those the runs have).

    Raises:
        RunError: bad input, naming the file: not a run, a file changed since the run wrote it, a
            stray or missing shard, a run given twice.

    Example:
        >>> try:
        ...     open_runs("no/such/run")
        ... except RunError as e:
        ...     print(e)
        no/such/run: no such run folder
    """
    if verify not in checks.LEVELS:
        raise RunError(f"verify {verify!r}: expected one of {', '.join(checks.LEVELS)}")
    found = _Findings(trust, [])
    opened = _opened([paths] if isinstance(paths, str | Path) else paths, found)
    files = [_verified(o, found) for o in opened]
    if any(r.events for r in files) and not all(r.events for r in files):
        raise RunError("some runs have events and some do not: open them separately")
    tables = _tables(files)
    now, later = _to_hash(tables, verify)
    found.add(checks.checksum_problems(now, threads))
    runs = Runs(
        duckdb.connect(),
        [run.public for run, _, _ in opened],
        [r.manifest for r in files],
        games_files=_paths(tables["games"]),
        events_files=_paths(tables["events"]),
        warnings=found.warnings,
        cards_files=_paths(tables["cards"]),
        compiles_files=_paths(tables["compiles"]),
        tallies_files=_paths(tables["tallies"]),
    )
    if later:
        runs._unhashed = lambda: found.add(checks.checksum_problems(later, threads))
    return _connect(runs, threads, memory_limit)


def _opened(paths: Sequence[str | Path | Location], found: _Findings) -> list[Opened]:
    """Each path's run folder, arm and run.json, every run once (_distinct)."""
    opened = [(location(run), arm, _manifest(location(run))) for run, arm in map(split_arm, paths)]
    if not opened:
        raise RunError("no run folder given")
    return _distinct(opened, found)


def _tables(files: list[_RunFiles]) -> dict[str, Listed]:
    """The files of each view over all the runs. One source per table: a summary's files only if
    every run has them for every shard (else none, and the report reads games or events)."""
    tables = {"games": [f for r in files for f in r.games], "events": [f for r in files for f in r.events]}
    for kind in _ALL_SUMMARIES:
        every = all(r.summaries[kind][0] for r in files)
        tables[kind] = [f for r in files for f in r.summaries[kind][0]] if every else []
    return tables


def _to_hash(tables: dict[str, Listed], verify: str) -> tuple[Listed, Listed]:
    """The files to checksum at opening, and the games files whose checksums wait for the first
    query that reads game rows (with every shard's tallies, unless verify is "full")."""
    now = [pair for kind in _ALL_SUMMARIES for pair in tables[kind]]
    events_read = bool(tables["events"]) and not all(tables[k] for k in SUMMARY_COLUMNS)
    if verify == "full" or events_read:
        now += tables["events"]
    if verify == "full" or not tables["tallies"]:
        return now + tables["games"], []
    return now, list(tables["games"])


def _paths(files: Listed) -> list[Location]:
    return [f for f, _ in files]


def _connect(out: Runs, threads: int | None, memory_limit: str | None) -> Runs:
    """Settings and the views over the verified files."""
    con = out.con
    con.execute(f"set threads = {int(threads or os.cpu_count() or 1)}")
    if memory_limit:
        con.execute(f"set memory_limit = '{memory_limit}'")
    con.execute("set preserve_insertion_order = false")
    # Large event aggregations spill to disk instead of failing when memory runs short.
    spill = Path(tempfile.gettempdir()) / "protolab-duckdb"
    con.execute(f"set temp_directory = '{str(spill).replace(chr(39), chr(39) * 2)}'")
    for name, files in (
        ("games", out.games_files),
        ("events", out.events_files),
        ("cards", out.cards_files),
        ("compiles", out.compiles_files),
        ("tallies", out.tallies_files),
    ):
        if files:
            try:
                parquet_view(con, name, files)
            except duckdb.Error as e:
                raise RunError(_explain(str(e), out.files)) from None
    return out
