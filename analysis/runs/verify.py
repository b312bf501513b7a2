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
from analysis.runs.storage import Location

# fast: SHA-256 of every file a report's figures come from (games, and cards / compiles / events when
#       a table is computed from them); the size and footer row count of the others.
# full: SHA-256 of every file, events included.
LEVELS = ("fast", "full")


def shard_entries(m: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in m.get("shards") or [] if isinstance(s, dict)]


def is_complete(m: dict[str, Any]) -> bool:
    """A manifest without `complete` is held to the same standard as a finished run."""
    return m.get("complete") is not False


def _ints(value: Any, *more: Any) -> TypeGuard[int]:
    """Each value an integer that is no bool (a guard for the first, as mypy reads it)."""
    values = (value, *more)
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def listing_problems(run: Location, m: dict[str, Any]) -> list[str]:
    """Shard entries that are malformed, listed twice or hold overlapping game_index ranges."""
    mf = run / runfolder.MANIFEST
    if not isinstance(m.get("shards", []), list):
        return [f"{mf}: key 'shards': expected a list of shard entries"]
    entries = shard_entries(m)
    if len(entries) != len(m.get("shards") or []):
        return [f"{mf}: key 'shards': every entry must be an object"]
    problems: list[str] = []
    seen: dict[Any, int] = {}
    for s in entries:
        if not _ints(s.get("index"), s.get("first_game"), s.get("games")):
            problems.append(f"{mf}: shard entry {s.get('index')!r}: expected integer index, first_game and games")
        elif s["index"] in seen:
            problems.append(f"{mf}: shard {s['index']} is listed twice (its games would be counted twice)")
        else:
            seen[s["index"]] = 1
        rows = s.get("games_rows")
        if _ints(rows, s.get("games")) and rows != s["games"]:
            problems.append(f"{mf}: shard {s.get('index')}: games_rows {rows} but games {s['games']}")
    for kind in runfolder.TABLES:
        files = [f for s in entries if (f := s.get(f"{kind}_file")) is not None]
        twice = sorted({f for f in files if files.count(f) > 1})
        if twice:
            problems.append(f"{mf}: {twice[0]} is listed by two shards (its rows would be counted twice)")
    return problems or _overlap_problems(mf, entries)


def _overlap_problems(mf: Location, entries: list[dict[str, Any]]) -> list[str]:
    """Two shards whose game_index ranges overlap would give duplicate games."""
    spans = sorted((s["first_game"], s["first_game"] + s["games"], s["index"]) for s in entries)
    for (_, hi_a, a), (lo_b, _, b) in zip(spans, spans[1:], strict=False):
        if lo_b < hi_a:
            return [f"{mf}: shards {a} and {b} both hold game_index {lo_b}..{hi_a - 1} (duplicate games)"]
    if spans and spans[0][0] < 0:
        return [f"{mf}: shard {spans[0][2]}: negative first_game {spans[0][0]}"]
    return []


def coverage_problems(run: Location, m: dict[str, Any]) -> list[str]:
    """A finished run must list every planned shard (`shard_count`) and every planned game (`games`),
    or, if it stopped once settled (run.json `stop`), the first `stop.shards` shards and their
    `stop.games`; an unfinished one may list fewer (analysis.runs.open warns), never more."""
    mf = run / runfolder.MANIFEST
    entries = shard_entries(m)
    indices = {s.get("index") for s in entries}
    planned, total = m.get("shard_count"), m.get("games")
    if _ints(planned):
        beyond = sorted(i for i in indices if _ints(i) and not 0 <= i < planned)
        if beyond:
            return [f"{mf}: lists shard {beyond[0]}, but the run has shards 0..{planned - 1} (shard_count {planned})"]
    if not is_complete(m):
        return []
    stop = m.get("stop")
    if isinstance(stop, dict):  # an A/B run that stopped once settled: the shards up to its last look
        planned, total = stop.get("shards"), stop.get("games")
    if _ints(planned):
        missing = sorted(set(range(planned)) - indices)
        if missing:
            return [
                f"{mf}: the run is complete but lists {planned - len(missing)} of its {planned} shards "
                f"(no entry for shard {missing[0]}{' and others' if len(missing) > 1 else ''}); "
                f"`protolab run --resume {run}` plays what is missing"
            ]
    held = sum(s["games"] for s in entries if _ints(s.get("games")))
    if _ints(total) and held != total:
        return [f"{mf}: the run is complete with {total} games but its shards hold {held}"]
    return []


def stray_problems(run: Location, m: dict[str, Any]) -> list[str]:
    """Parquet files in the table folders that run.json does not list. In an unfinished run the files
    of planned, unrecorded shards are expected (the next --resume overwrites them)."""
    entries = shard_entries(m)
    planned = m.get("shard_count")
    pending: set[Path | Location] = set()
    if not is_complete(m) and _ints(planned):
        events = m["spec"].get("events", True) if isinstance(m.get("spec"), dict) else True
        pending = runfolder.pending_files(run, planned, {s.get("index") for s in entries}, events)
    stray = runfolder.unlisted_files(run, entries, pending)
    if not stray:
        return []
    more = f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""
    folder = stray[0].parent.relative_to(run) if stray[0].is_relative_to(run) else stray[0].parent
    return [
        f"{stray[0]}: not listed in {run / runfolder.MANIFEST}{more}; a glob over {folder}/*.parquet would "
        f"read it with the run's rows: move it out of the run folder"
    ]


def size_rows_problems(f: Location, entry: dict[str, Any], kind: str, rows: int) -> list[str]:
    """The file against its entry: byte size and footer row count, where the entry records them."""
    problems = []
    want_bytes, want_rows = entry.get(f"{kind}_bytes"), entry.get(f"{kind}_rows")
    if _ints(want_bytes) and (size := f.stat().st_size) != want_bytes:
        problems.append(f"{f}: {size} bytes, but run.json records {want_bytes} (rewritten or truncated)")
    if _ints(want_rows) and rows != want_rows:
        problems.append(f"{f}: {rows} rows, but run.json records {want_rows}")
    return problems


def checksum_problems(files: Iterable[tuple[Location, dict[str, Any], str]], threads: int | None = None) -> list[str]:
    """SHA-256 of each (file, shard entry, kind) against the entry's `<kind>_sha256`, read in
    parallel (hashlib releases the GIL)."""
    todo = list(files)
    missing = [
        f"{f}: run.json records no {kind}_sha256 for it, so it cannot be verified"
        for f, e, kind in todo
        if not isinstance(e.get(f"{kind}_sha256"), str)
    ]
    if missing:
        return missing[:1]
    with ThreadPoolExecutor(max_workers=max(1, threads or os.cpu_count() or 1)) as pool:
        digests = list(pool.map(lambda t: runfolder.file_sha256(t[0]), todo))
    return [
        f"{f}: does not match its SHA-256 in run.json (changed after the run wrote it)"
        for (f, e, kind), digest in zip(todo, digests, strict=True)
        if digest != e[f"{kind}_sha256"]
    ]
