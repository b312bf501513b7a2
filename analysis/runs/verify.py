"""Check a run folder against its manifest before any figure is computed from it (docs/analysis.md).

A report over files that are not the ones the run wrote prints wrong numbers that look right: a
shard rewritten with other rows, a shard entry removed from run.json, a stray Parquet file beside
the shards, one run opened twice. Each function here returns what it found as one-line problems
that name the file (or run.json) and what is wrong; analysis.runs.open decides whether a problem is an
error or, with `trust`, a warning.

game_index is checked without scanning the games: the manifest's shard ranges
[first_game, first_game + games) must be disjoint and each must hold as many rows as games, the
footer of each games file must hold that many rows, and (by default) each games file must match
its SHA-256, which ties its rows to the ones the runner wrote for that range."""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeGuard

from analysis.runs import runfolder
from analysis.runs.manifest import TABLES, Manifest, ShardEntry, ShardFile
from analysis.runs.storage import Location

# fast: SHA-256 of every file a report's figures come from (games, and cards / compiles / events when
#       a table is computed from them); the size and footer row count of the others.
# full: SHA-256 of every file, events included.
LEVELS = ("fast", "full")


def _ints(value: Any, *more: Any) -> TypeGuard[int]:
    """Each value an integer that is no bool (a guard for the first, as mypy reads it)."""
    values = (value, *more)
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def listing_problems(run: Location, m: Manifest) -> list[str]:
    """Shard entries listed twice, lacking first_game, or holding overlapping game_index ranges
    (each entry's keys and types were checked as run.json was read: manifest.ShardEntry)."""
    mf = run / runfolder.MANIFEST
    problems: list[str] = []
    seen: set[int] = set()
    for s in m.shards:
        if s.first_game is None:
            problems.append(f"{mf}: shard entry {s.index!r}: expected integer index, first_game and games")
        elif s.index in seen:
            problems.append(f"{mf}: shard {s.index} is listed twice (its games would be counted twice)")
        else:
            seen.add(s.index)
        if s.games_rows is not None and s.games_rows != s.games:
            problems.append(f"{mf}: shard {s.index}: games_rows {s.games_rows} but games {s.games}")
    for kind in TABLES:
        files = [f.path for s in m.shards if (f := s.file(kind)) is not None]
        twice = sorted({f for f in files if files.count(f) > 1})
        if twice:
            problems.append(f"{mf}: {twice[0]} is listed by two shards (its rows would be counted twice)")
    return problems or _overlap_problems(mf, m.shards)


def _overlap_problems(mf: Location, entries: list[ShardEntry]) -> list[str]:
    """Two shards whose game_index ranges overlap would give duplicate games."""
    spans = sorted((s.first_game or 0, (s.first_game or 0) + s.games, s.index) for s in entries)
    for (_, hi_a, a), (lo_b, _, b) in zip(spans, spans[1:], strict=False):
        if lo_b < hi_a:
            return [f"{mf}: shards {a} and {b} both hold game_index {lo_b}..{hi_a - 1} (duplicate games)"]
    return []


def coverage_problems(run: Location, m: Manifest) -> list[str]:
    """A finished run must list every planned shard (`shard_count`) and every planned game (`games`),
    or, if it stopped once settled (run.json `stop`), the first `stop.shards` shards and their
    `stop.games`; an unfinished one may list fewer (analysis.runs.open warns), never more."""
    mf = run / runfolder.MANIFEST
    indices = {s.index for s in m.shards}
    planned: Any = m.shard_count
    total: Any = m.games
    if planned is not None:
        beyond = sorted(i for i in indices if not i < planned)
        if beyond:
            return [f"{mf}: lists shard {beyond[0]}, but the run has shards 0..{planned - 1} (shard_count {planned})"]
    if not m.complete:
        return []
    if isinstance(m.stop, dict):  # an A/B run that stopped once settled: the shards up to its last look
        planned, total = m.stop.get("shards"), m.stop.get("games")
    if _ints(planned):
        missing = sorted(set(range(planned)) - indices)
        if missing:
            return [
                f"{mf}: the run is complete but lists {planned - len(missing)} of its {planned} shards "
                f"(no entry for shard {missing[0]}{' and others' if len(missing) > 1 else ''}); "
                f"`protolab run --resume {run}` plays what is missing"
            ]
    held = sum(s.games for s in m.shards)
    if _ints(total) and held != total:
        return [f"{mf}: the run is complete with {total} games but its shards hold {held}"]
    return []


def stray_files(run: Location, m: Manifest, planned: int | None) -> list[Path | Location]:
    """Parquet files in the table folders that neither a shard entry of `m` lists nor a planned,
    unrecorded shard (of `planned`, when the run is not complete) will write: a glob over
    games/*.parquet would read them with the run's own rows."""
    pending: set[Path | Location] = set()
    if not m.complete and planned is not None:
        pending = runfolder.pending_files(run, planned, {s.index for s in m.shards}, m.spec.events)
    return runfolder.unlisted_files(run, m.shards, pending)


def stray_problems(run: Location, m: Manifest) -> list[str]:
    """Parquet files in the table folders that run.json does not list. In an unfinished run the files
    of planned, unrecorded shards are expected (the next --resume overwrites them)."""
    stray = stray_files(run, m, m.shard_count)
    if not stray:
        return []
    more = f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""
    folder = stray[0].parent.relative_to(run) if stray[0].is_relative_to(run) else stray[0].parent
    return [
        f"{stray[0]}: not listed in {run / runfolder.MANIFEST}{more}; a glob over {folder}/*.parquet would "
        f"read it with the run's rows: move it out of the run folder"
    ]


def size_rows_problems(f: Location, listed: ShardFile, rows: int) -> list[str]:
    """The file against its entry: byte size and footer row count, where the entry records them."""
    problems = []
    if listed.size is not None and (size := f.stat().st_size) != listed.size:
        problems.append(f"{f}: {size} bytes, but run.json records {listed.size} (rewritten or truncated)")
    if listed.rows is not None and rows != listed.rows:
        problems.append(f"{f}: {rows} rows, but run.json records {listed.rows}")
    return problems


def checksum_problems(files: Iterable[tuple[Location, ShardFile]], threads: int | None = None) -> list[str]:
    """SHA-256 of each (file, its listing) against the listed SHA-256, read in parallel (hashlib
    releases the GIL)."""
    todo = list(files)
    missing = [
        f"{f}: run.json records no {listed.kind}_sha256 for it, so it cannot be verified"
        for f, listed in todo
        if listed.sha256 is None
    ]
    if missing:
        return missing[:1]
    with ThreadPoolExecutor(max_workers=max(1, threads or os.cpu_count() or 1)) as pool:
        digests = list(pool.map(lambda t: runfolder.file_sha256(t[0]), todo))
    return [
        f"{f}: does not match its SHA-256 in run.json (changed after the run wrote it)"
        for (f, listed), digest in zip(todo, digests, strict=True)
        if digest != listed.sha256
    ]


def shard_problem(run_dir: runfolder.Where, entry: ShardEntry) -> str | None:
    """None if a recorded shard's files exist and match their checksums (what --resume keeps), else
    why not. A file is checked when the entry lists it (shards recorded before the `cards` or
    `compiles` table existed do not list it)."""
    run = runfolder.open_location(run_dir)
    for f in entry.files():
        p = run / f.path
        if not p.is_file():
            return f"{f.path} is missing"
        if f.size is not None and p.stat().st_size != f.size:
            return f"{f.path} has the wrong size (truncated?)"
        if runfolder.file_sha256(p) != f.sha256:
            return f"{f.path} does not match its checksum"
    return None
