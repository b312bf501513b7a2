"""The run folder (docs/data.md), wherever it lives (storage.py: a local folder, a shared disk, an
object store): shard files written whole or not at all, their checksums, and the run.json manifest
with a journal that survives a killed driver.

A shard file is encoded in memory and written whole (a hidden temporary name then a rename on a
filesystem, one put on an object store): a file under its final name is complete. The driver
records the shards that finished together in the journal the moment it hears of them (short lines
of `shards.jsonl` in one write, or on an object store one small object under `journal/`) and rewrites run.json now
and then and at the end; `--resume` reads both, so nothing recorded is ever computed twice."""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import fcntl
import hashlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Container, Iterator, Set
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from analysis.runs.manifest import TABLES, Manifest, ManifestError, ShardEntry
from analysis.runs.storage import Location, StorageError, check_read_write, location
from sim.inputs import MAX_MANIFEST_BYTES, InputFileError

Where = str | os.PathLike[str] | Location  # a run folder or file: a local path or a storage.Location

FORMAT = 1
MANIFEST = "run.json"
JOURNAL = "shards.jsonl"
JOURNAL_DIR = "journal"  # the journal on a store that cannot append: one object per batch of shards
LOCK_STALE = 120.0  # seconds after which another machine's lock object is taken over
LOCK_BEAT = 30.0  # seconds between refreshes of a held lock object
TOKEN = ".protolab-run"
LOCK = ".lock"
INPUTS = "inputs"
# Per-shard summaries of the events, written beside them: a run recorded before one existed has
# none, and the analysis then computes from `events` instead.
SUMMARIES = ("cards", "compiles")
# The per-shard summary of the games (analysis/runs/tallies.py), written whatever `events` says: a run
# recorded before it existed has none, and the analysis then computes from `games` instead.
GAME_SUMMARIES = ("tallies",)
ROW_GROUP = {
    "games": 128 * 1024,
    "events": 1024 * 1024,
    "cards": 128 * 1024,
    "compiles": 128 * 1024,
    "tallies": 128 * 1024,
}
COMPRESSION = "zstd"
# Dense integer keys compress better without a dictionary; statistics only where scans filter.
NO_DICTIONARY = {
    "games": {"game_index", "seed"},
    "events": {"game_index", "seq"},
    "cards": {"drawn", "drawn_wins", "up", "up_wins", "down", "down_wins", "played", "played_wins"},
    "compiles": {"turn", "n"},
    "tallies": set(),
}
STATISTICS = {"games": None, "events": ["game_index", "turn"], "cards": None, "compiles": None, "tallies": None}


class RunDirError(ValueError):
    """A run folder that cannot be used (missing, not a run, locked); one readable message."""


def open_location(where: Where) -> Location:
    """storage.location, its errors as RunDirError (a user's error: exit status 2)."""
    try:
        return location(where)
    except StorageError as e:
        raise RunDirError(str(e)) from None


# -- shard files ------------------------------------------------------------------------------------


def parquet_bytes(table: pa.Table, kind: str) -> bytes:
    """The whole Parquet file of one shard table, encoded in memory."""
    sink = pa.BufferOutputStream()
    pq.write_table(
        table,
        sink,
        row_group_size=ROW_GROUP[kind],
        compression=COMPRESSION,
        use_dictionary=[c for c in table.column_names if c not in NO_DICTIONARY[kind]],
        write_statistics=STATISTICS[kind] or True,
    )
    return bytes(sink.getvalue().to_pybytes())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Where) -> str:
    h = hashlib.sha256()
    with open_location(path).open_input() as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def write_atomic(path: Where, data: bytes) -> None:
    """The whole file or nothing under its name (storage.Location.write_atomic)."""
    open_location(path).write_atomic(data)


def shard_paths(run_dir: Where, name: str) -> dict[str, Location]:
    run_dir = open_location(run_dir)
    return {kind: run_dir / kind / f"{name}.parquet" for kind in TABLES}


def remove_temp_files(run_dir: Where) -> int:
    """Temporary files left by a killed writer; returns how many were removed."""
    run_dir = open_location(run_dir)
    n = 0
    for sub in (*TABLES, "."):
        for p in (run_dir / sub).glob(".*.tmp"):
            p.unlink()
            n += 1
    return n


# -- files the manifest does not list ---------------------------------------------------------------


def shard_name(index: int) -> str:
    """The file name stem of shard `index` (plan.ShardPlan.name)."""
    return f"shard-{index:05d}"


def table_files(run_dir: Where) -> list[Path | Location]:
    """Every Parquet file under games/ events/ cards/ compiles/ tallies/ (subfolders included: pandas and
    pyarrow read a folder recursively). Hidden temporary files end in `.tmp`, so they are not here."""
    run_dir = open_location(run_dir)
    return [p.public for kind in TABLES for p in (run_dir / kind).rglob("*.parquet")]


def listed_files(run_dir: Where, shards: list[ShardEntry]) -> set[Location]:
    """The files the shard entries list (every table)."""
    run_dir = open_location(run_dir)
    return {run_dir / f.path for s in shards for f in s.files()}


def shard_kinds(events: Any) -> tuple[str, ...]:
    """The tables a shard writes for the spec's `events` value (spec.py): `false` games and their
    tallies; "none" those and the summaries of the events; true, "all" or a fraction every table."""
    if events is False:
        return ("games", *GAME_SUMMARIES)
    if events == "none":
        return ("games", *SUMMARIES, *GAME_SUMMARIES)
    return TABLES


def pending_files(run_dir: Where, shard_count: int, recorded: Container[object], events: Any) -> set[Path | Location]:
    """Files of planned shards that are not recorded yet (a driver killed after a worker renamed its
    file, before the shard was recorded): the next `--resume` plays the shard and overwrites them."""
    return {
        shard_paths(run_dir, shard_name(i))[kind].public
        for i in range(shard_count)
        if i not in recorded
        for kind in shard_kinds(events)
    }


def unlisted_files(
    run_dir: Where, shards: list[ShardEntry], pending: Set[Path | Location] = frozenset()
) -> list[Path | Location]:
    """Parquet files in the table folders that no shard entry lists and no pending shard will write:
    a glob over `games/*.parquet` would read them, so a run holding one is not what run.json says."""
    known = listed_files(run_dir, shards) | {open_location(p) for p in pending}
    return [p for p in table_files(run_dir) if open_location(p) not in known]


# -- run folder -------------------------------------------------------------------------------------


def check_writable(parent: Where, where: str) -> None:
    """Refuse a location a run folder cannot be created in (`where` names the option or spec key):
    a folder is made if missing and a probe file is written, read back and removed, before anything is
    started (storage.check_read_write)."""
    parent = open_location(parent)
    try:
        if parent.is_file():
            raise RunDirError(f"{where}: {parent} is a file; expected a folder to create the run folder in")
        parent.mkdir()
        check_read_write(parent)
    except (OSError, StorageError) as e:
        why = getattr(e, "strerror", None) or " ".join(str(e).split())[:600]
        raise RunDirError(
            f"{where}: cannot create a run folder in {parent} ({why}); "
            "expected a writable folder or object-store location"
        ) from None


def create_run_dir(parent: Where, name: str, stamp: str) -> tuple[Location, str]:
    """A new, empty run folder `<parent>/<name>-<stamp>[-k]`; returns it and the run id."""
    parent = open_location(parent)
    parent.mkdir()
    for k in range(1, 1000):
        run_id = f"{name}-{stamp}" + (f"-{k}" if k > 1 else "")
        d = parent / run_id
        if d.exists():
            continue
        try:
            d.mkdir(parents=False, exist_ok=False)  # locally the claim is atomic
        except FileExistsError:
            continue
        make_table_dirs(d)
        return d, run_id
    raise RunDirError(f"{parent}: cannot create a new run folder for {name!r}")


def make_table_dirs(run_dir: Where) -> None:
    """games/, events/, cards/, compiles/, tallies/ (also when resuming a folder written before
    the summary tables existed); nothing to make on an object store."""
    run_dir = open_location(run_dir)
    for kind in TABLES:
        (run_dir / kind).mkdir()


def write_token(run_dir: Where) -> str:
    """A random token a worker reads to tell whether it sees this run folder (shared disk)."""
    token = uuid.uuid4().hex
    write_atomic(open_location(run_dir) / TOKEN, token.encode())
    return token


def sees_run_dir(run_dir: str, token: str) -> bool:
    """Whether this process reaches the run folder `run_dir` (a Location's `uri`) and it holds `token`."""
    try:
        return (location(run_dir) / TOKEN).read_bytes().decode() == token
    except (OSError, StorageError, ValueError):
        return False


@contextlib.contextmanager
def locked(run_dir: Where) -> Iterator[None]:
    """Hold the run folder for this driver; a second driver on the same folder is refused. Locally an
    flock; on an object store a lock object naming its holder, refreshed while held."""
    run_dir = open_location(run_dir)
    if not run_dir.is_local:
        with _lock_object(run_dir):
            yield
        return
    f = open(run_dir / LOCK, "a+")  # noqa: SIM115 - held for the whole run
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirError(f"{run_dir}: another protolab run is using this folder") from None
        yield
    finally:
        f.close()


def _lock_holder_alive(holder: dict[str, Any]) -> bool:
    """A lock object's holder still runs: on this machine its process exists; elsewhere it refreshed
    the object within LOCK_STALE seconds."""
    if holder.get("host") == socket.gethostname() and isinstance(holder.get("pid"), int):
        try:
            os.kill(holder["pid"], 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    beat = holder.get("time")
    return isinstance(beat, int | float) and time.time() - beat < LOCK_STALE


@contextlib.contextmanager
def _lock_object(run_dir: Location) -> Iterator[None]:
    lock = run_dir / LOCK
    try:
        holder = json.loads(lock.read_bytes()) if lock.is_file() else None
    except (OSError, ValueError):
        holder = None
    if isinstance(holder, dict) and _lock_holder_alive(holder):
        raise RunDirError(
            f"{run_dir}: another protolab run is using this folder ({holder.get('host')}, "
            f"pid {holder.get('pid')}; a lock not refreshed for {LOCK_STALE:g} s is taken over)"
        )
    me = {"host": socket.gethostname(), "pid": os.getpid()}
    stop = threading.Event()

    def write() -> None:
        lock.write_atomic(json.dumps({**me, "time": time.time()}).encode())

    def beat() -> None:
        while not stop.wait(LOCK_BEAT):
            with contextlib.suppress(OSError, StorageError):
                write()

    write()  # held before anything is written to the run

    beat_thread = threading.Thread(target=beat, name="protolab-lock", daemon=True)
    beat_thread.start()
    try:
        yield
    finally:
        stop.set()
        beat_thread.join()
        with contextlib.suppress(OSError, StorageError):
            lock.unlink()


# -- manifest ---------------------------------------------------------------------------------------


def write_manifest(run_dir: Where, manifest: Manifest) -> None:
    """run.json, one shard entry a line (encoded by json's C encoder: a run of 100,000 shards has a
    run.json of some 100 MB, rewritten now and then), every other key indented."""
    checked = manifest.checked(str(open_location(run_dir) / MANIFEST)).to_json()
    shards = sorted(checked["shards"], key=lambda s: s["index"])
    head = json.dumps({**checked, "shards": []}, indent=1, sort_keys=False)
    rows = ",\n  ".join(json.dumps(s) for s in shards)
    body = head.replace('\n "shards": []', f'\n "shards": [\n  {rows}\n ]' if rows else '\n "shards": []', 1)
    write_atomic(open_location(run_dir) / MANIFEST, (body + "\n").encode())


_HANDED: contextvars.ContextVar[tuple[tuple[str, Manifest], ...]] = contextvars.ContextVar(
    "protolab_handed", default=()
)


@contextlib.contextmanager
def handed(run_dir: Where, manifest: Manifest) -> Iterator[None]:
    """While the block runs, read_manifest(run_dir) is `manifest` (a copy), not parsed again: the
    end of `protolab run` hands the run.json it just wrote, journal folded in, to the report."""
    token = _HANDED.set(((open_location(run_dir).uri, manifest), *_HANDED.get()))
    try:
        yield
    finally:
        _HANDED.reset(token)


def read_manifest(run_dir: Where, journal: bool = True) -> Manifest:
    """run.json, checked, plus (`journal`) the shards recorded only in the journal (a driver killed
    between writes): the one reader of run.json, every command's. RunDirError naming the file, the
    key and what was expected."""
    run_dir = open_location(run_dir)
    known = dict(_HANDED.get()).get(run_dir.uri)
    if known is not None:
        return dataclasses.replace(known, shards=list(known.shards), sessions=list(known.sessions))
    p = run_dir / MANIFEST
    try:
        raw = json.loads(_manifest_text(run_dir))
    except (InputFileError, json.JSONDecodeError, StorageError, OSError, UnicodeDecodeError) as e:
        raise RunDirError(f"{p}: cannot be read ({str(e).removeprefix(f'{p}: ')})") from None
    if not isinstance(raw, dict):
        raise RunDirError(f"{p}: not a run manifest (expected a JSON object, got {type(raw).__name__})")
    if raw.get("format") != FORMAT:
        raise RunDirError(f"{p}: format {raw.get('format')!r}; this protolab reads format {FORMAT}")
    try:
        manifest = Manifest.of(raw, str(p))
    except ManifestError as e:
        raise RunDirError(str(e)) from None
    later = read_journal(run_dir) if journal else []
    if later:  # newer than the run.json they follow: they win (a shard listed twice there stays so)
        newer = {s.index: s for s in later}
        kept = [s for s in manifest.shards if s.index not in newer]
        manifest.shards = sorted([*kept, *newer.values()], key=lambda s: s.index)
    return manifest


def _manifest_text(run_dir: Location) -> str:
    """The text of run.json; RunDirError when the folder is missing or not a run folder."""
    p = run_dir / MANIFEST
    if not p.exists():  # one that is there but no file (a pipe, a folder) is refused by its read
        if not run_dir.exists():
            raise RunDirError(f"{run_dir}: no such run folder")
        if not run_dir.is_dir():
            raise RunDirError(f"{run_dir}: not a run folder (a run is a folder with {MANIFEST} and games/*.parquet)")
        raise RunDirError(f"{run_dir}: not a run folder (no {MANIFEST}; a run is what `protolab run` writes)")
    return p.read_text(MAX_MANIFEST_BYTES)


def append_journal(run_dir: Where, entries: ShardEntry | list[ShardEntry]) -> None:
    """Record finished shards at once, in one write however many: their lines appended to
    shards.jsonl (one flush), or on a store that cannot append one object journal/shard-NNNNN.json
    named by the batch's first shard. A kill mid-write leaves whole lines and at most one cut line
    (ignored with what follows it), or no object: never a wrong entry."""
    batch = [entries] if isinstance(entries, ShardEntry) else entries
    if not batch:
        return
    run_dir = open_location(run_dir)
    text = "".join(json.dumps(entry.to_json(), sort_keys=True) + "\n" for entry in batch)
    if run_dir.can_append:
        (run_dir / JOURNAL).append_line(text)
    else:
        first = min(entry.index for entry in batch)
        (run_dir / JOURNAL_DIR / f"{shard_name(first)}.json").write_atomic(text.encode())


def read_journal(run_dir: Where) -> list[ShardEntry]:
    """The shard entries of the journal, each checked (RunDirError naming the file and line)."""
    run_dir = open_location(run_dir)
    p = run_dir / JOURNAL
    lines: list[tuple[str, str]] = []
    try:
        if p.is_file():
            text = p.read_text(MAX_MANIFEST_BYTES)
            lines += [(f"{p}: line {n}", line) for n, line in enumerate(text.splitlines(), 1)]
        for f in (run_dir / JOURNAL_DIR).files(recursive=False):
            text = f.read_text(MAX_MANIFEST_BYTES)
            lines += [(f"{f}: line {n}", line) for n, line in enumerate(text.splitlines(), 1)]
    except (InputFileError, StorageError, OSError, UnicodeDecodeError) as e:
        raise RunDirError(f"{p}: cannot be read ({str(e).removeprefix(f'{p}: ')})") from None
    out = []
    for where, line in lines:
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            if where.startswith(str(p)):
                break  # a line cut by a kill: ignore it and what follows
            continue
        try:
            out.append(ShardEntry.of(raw, where))
        except ManifestError as e:
            raise RunDirError(str(e)) from None
    return out


def clear_journal(run_dir: Where) -> None:
    run_dir = open_location(run_dir)
    (run_dir / JOURNAL).unlink()
    for f in (run_dir / JOURNAL_DIR).files(recursive=False):
        f.unlink()


def save_inputs(run_dir: Where, files: dict[str, str]) -> None:
    """Copies of the card files the spec used (path as written -> contents), for --resume."""
    d = open_location(run_dir) / INPUTS
    d.mkdir()
    index = {}
    for i, (path, text) in enumerate(sorted(files.items())):
        name = f"{i:02d}-{Path(path).name}"
        write_atomic(d / name, text.encode())
        index[path] = name
    write_atomic(d / "index.json", json.dumps(index, indent=1).encode())


def load_inputs(run_dir: Where) -> dict[str, str]:
    d = open_location(run_dir) / INPUTS
    if not (d / "index.json").is_file():
        return {}
    try:
        index = json.loads((d / "index.json").read_text())
        if not isinstance(index, dict) or not all(isinstance(v, str) and "/" not in v for v in index.values()):
            raise RunDirError(f"{d / 'index.json'}: expected an object of card file names; was it edited?")
        return {path: (d / name).read_text() for path, name in index.items()}
    except (InputFileError, json.JSONDecodeError, StorageError) as e:
        raise RunDirError(f"{d}: the run's copies of its card files cannot be read ({e})") from None


def open_games(run_dir: Where, columns: list[str] | None = None) -> pa.Table:
    """All rows of `games`, sorted by game_index (for summaries and tests)."""
    games = open_location(run_dir) / "games"
    t = pq.read_table(games.path, filesystem=games.fs, columns=columns)
    if "game_index" in t.column_names:
        t = t.sort_by("game_index")
    return t


def events_statement(manifests: list[Manifest | None]) -> str:
    """What the runs kept of their events (spec key `events`), for the report: every game's, a seeded
    sample, none but the summaries, or nothing beyond the games table."""
    said = []
    for m in manifests:
        value = m.spec.events if m is not None else True
        if value is True:
            text = "events of every game"
        elif value is False:
            text = "no events and no card or compile summaries (events = false)"
        elif value == "none":
            text = 'no events (events = "none"); card impact and compile tables from every game\'s summaries'
        else:
            text = (
                f"events of a seeded {float(value):.0%} sample of the games (events = {value}); card impact "
                "and compile tables from every game's summaries"
            )
        if text not in said:
            said.append(text)
    return "; ".join(said)
