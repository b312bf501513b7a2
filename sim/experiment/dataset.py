"""The run folder on disk (docs/data.md): shard files written whole or not at all, their
checksums, and the run.json manifest with a journal that survives a killed driver.

A shard file is encoded in memory, written under a hidden temporary name, flushed to disk and
renamed: a file under its final name is complete. The driver appends each finished shard to
`shards.jsonl` the moment it hears of it (one short line) and rewrites run.json now and then and
at the end; `--resume` reads both, so nothing recorded is ever computed twice."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from sim.inputs import MAX_MANIFEST_BYTES, InputFileError, read_input_text

FORMAT = 1
MANIFEST = "run.json"
JOURNAL = "shards.jsonl"
TOKEN = ".protolab-run"
LOCK = ".lock"
INPUTS = "inputs"
KINDS = ("games", "events", "cards", "compiles")          # the shard tables, one folder each
# Per-shard summaries of the events, written beside them: a run recorded before one existed has
# none, and the analysis then computes from `events` instead.
SUMMARIES = ("cards", "compiles")
ROW_GROUP = {"games": 128 * 1024, "events": 1024 * 1024, "cards": 128 * 1024, "compiles": 128 * 1024}
COMPRESSION = "zstd"
# Dense integer keys compress better without a dictionary; statistics only where scans filter.
NO_DICTIONARY = {"games": {"game_index", "seed"}, "events": {"game_index", "seq"},
                 "cards": {"drawn", "drawn_wins", "up", "up_wins", "down", "down_wins", "played", "played_wins"},
                 "compiles": {"turn", "n"}}
STATISTICS = {"games": None, "events": ["game_index", "turn"], "cards": None, "compiles": None}


class RunDirError(ValueError):
    """A run folder that cannot be used (missing, not a run, locked); one readable message."""


# -- shard files ------------------------------------------------------------------------------------

def parquet_bytes(table: pa.Table, kind: str) -> bytes:
    """The whole Parquet file of one shard table, encoded in memory."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=ROW_GROUP[kind], compression=COMPRESSION,
                   use_dictionary=[c for c in table.column_names if c not in NO_DICTIONARY[kind]],
                   write_statistics=STATISTICS[kind] or True)
    return sink.getvalue().to_pybytes()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write under a hidden temporary name in the same folder, fsync, then rename."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def shard_paths(run_dir: Path, name: str) -> dict[str, Path]:
    return {kind: run_dir / kind / f"{name}.parquet" for kind in KINDS}


def remove_temp_files(run_dir: Path) -> int:
    """Temporary files left by a killed writer; returns how many were removed."""
    n = 0
    for sub in (*KINDS, "."):
        if not (run_dir / sub).is_dir():
            continue
        for p in (run_dir / sub).glob(".*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
                n += 1
    return n


def verify_shard(run_dir: Path, entry: dict[str, Any]) -> str | None:
    """None if the shard's files exist and match their checksums, else why not. A file is checked
    when the entry lists it (shards recorded before the `cards` or `compiles` table existed do not
    list it)."""
    for kind in KINDS:
        rel = entry.get(f"{kind}_file")
        if rel is None:
            continue
        p = run_dir / rel
        if not p.is_file():
            return f"{rel} is missing"
        if p.stat().st_size != entry.get(f"{kind}_bytes", p.stat().st_size):
            return f"{rel} has the wrong size (truncated?)"
        if file_sha256(p) != entry[f"{kind}_sha256"]:
            return f"{rel} does not match its checksum"
    return None


# -- files the manifest does not list ---------------------------------------------------------------

def shard_name(index: int) -> str:
    """The file name stem of shard `index` (plan.ShardPlan.name)."""
    return f"shard-{index:05d}"


def table_files(run_dir: Path) -> list[Path]:
    """Every Parquet file under games/ events/ cards/ compiles/ (subfolders included: pandas and
    pyarrow read a folder recursively). Hidden temporary files end in `.tmp`, so they are not here."""
    out: list[Path] = []
    for kind in KINDS:
        folder = run_dir / kind
        if folder.is_dir():
            out += sorted(p for p in folder.rglob("*.parquet") if p.is_file())
    return out


def listed_files(run_dir: Path, shards: list[dict[str, Any]]) -> set[Path]:
    """The files the shard entries list (every table)."""
    return {run_dir / s[f"{kind}_file"] for s in shards if isinstance(s, dict)
            for kind in KINDS if isinstance(s.get(f"{kind}_file"), str)}


def pending_files(run_dir: Path, shard_count: int, recorded: set[int], events: bool) -> set[Path]:
    """Files of planned shards that are not recorded yet (a driver killed after a worker renamed its
    file, before the shard was recorded): the next `--resume` plays the shard and overwrites them."""
    kinds = KINDS if events else ("games",)
    return {shard_paths(run_dir, shard_name(i))[kind] for i in range(shard_count) if i not in recorded
            for kind in kinds}


def unlisted_files(run_dir: Path, shards: list[dict[str, Any]], pending: set[Path] = frozenset()) -> list[Path]:
    """Parquet files in the table folders that no shard entry lists and no pending shard will write:
    a glob over `games/*.parquet` would read them, so a run holding one is not what run.json says."""
    known = listed_files(run_dir, shards) | set(pending)
    return [p for p in table_files(run_dir) if p not in known]


# -- run folder -------------------------------------------------------------------------------------

def check_writable(parent: Path, where: str) -> None:
    """Refuse a folder a run folder cannot be created in (`where` names the option or spec key):
    it is made if missing and a probe file is written and removed, before anything is started."""
    if parent.exists() and not parent.is_dir():
        raise RunDirError(f"{where}: {parent} is a file; expected a folder to create the run folder in")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".protolab-probe-", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise RunDirError(f"{where}: cannot create a run folder in {parent} ({e.strerror or e}); "
                          "expected a writable folder") from None


def create_run_dir(parent: Path, name: str, stamp: str) -> tuple[Path, str]:
    """A new, empty run folder `<parent>/<name>-<stamp>[-k]`; returns it and the run id."""
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(1, 1000):
        run_id = f"{name}-{stamp}" + (f"-{k}" if k > 1 else "")
        d = parent / run_id
        try:
            d.mkdir()
        except FileExistsError:
            continue
        make_table_dirs(d)
        return d, run_id
    raise RunDirError(f"{parent}: cannot create a new run folder for {name!r}")


def make_table_dirs(run_dir: Path) -> None:
    """games/, events/, cards/, compiles/ (also when resuming a folder written before the
    summary tables existed)."""
    for kind in KINDS:
        (run_dir / kind).mkdir(exist_ok=True)


def write_token(run_dir: Path) -> str:
    """A random token a worker reads to tell whether it sees this run folder (shared disk)."""
    token = uuid.uuid4().hex
    write_atomic(run_dir / TOKEN, token.encode())
    return token


def sees_run_dir(run_dir: str, token: str) -> bool:
    try:
        return (Path(run_dir) / TOKEN).read_text() == token
    except OSError:
        return False


@contextlib.contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """Hold the run folder for this driver; a second driver on the same folder is refused."""
    f = open(run_dir / LOCK, "a+")  # noqa: SIM115 - held for the whole run
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirError(f"{run_dir}: another protolab run is using this folder") from None
        yield
    finally:
        f.close()


# -- manifest ---------------------------------------------------------------------------------------

def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    shards = sorted(manifest["shards"], key=lambda s: s["index"])
    body = json.dumps({**manifest, "shards": shards}, indent=1, sort_keys=False) + "\n"
    write_atomic(run_dir / MANIFEST, body.encode())


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """run.json plus the shards recorded only in the journal (a driver killed between writes)."""
    p = run_dir / MANIFEST
    if not run_dir.is_dir():
        raise RunDirError(f"{run_dir}: no such run folder")
    if not p.is_file():
        raise RunDirError(f"{run_dir}: not a run folder (no {MANIFEST})")
    try:
        manifest = json.loads(read_input_text(p, MAX_MANIFEST_BYTES))
    except (InputFileError, json.JSONDecodeError) as e:
        raise RunDirError(f"{p}: cannot be read ({str(e).removeprefix(f'{p}: ')})") from None
    if not isinstance(manifest, dict):
        raise RunDirError(f"{p}: expected a JSON object, got {type(manifest).__name__}; was it edited?")
    if manifest.get("format") != FORMAT:
        raise RunDirError(f"{p}: format {manifest.get('format')!r}; this protolab reads format {FORMAT}")
    shards = manifest.get("shards", [])
    if not isinstance(shards, list) or not isinstance(manifest.get("sessions", []), list):
        raise RunDirError(f"{p}: key 'shards' or 'sessions': expected a list; was it edited?")
    for i, entry in enumerate(shards):
        _check_entry(entry, f"{p}: key 'shards[{i}]'")
    by_index = {s["index"]: s for s in shards}
    for entry in read_journal(run_dir):        # newer than the run.json they follow: they win
        by_index[entry["index"]] = entry
    manifest["shards"] = sorted(by_index.values(), key=lambda s: s["index"])
    return manifest


def _check_entry(entry: Any, where: str) -> None:
    """A shard entry as the driver records it (index, games, and per table its file, size and
    checksum); a hand-edited one is refused with `where` (file and key)."""
    problem = None
    if not isinstance(entry, dict):
        problem = f"expected a shard entry (an object), got {entry!r:.60}"
    elif any(isinstance(entry.get(k), bool) or not isinstance(entry.get(k), int) or entry[k] < 0
             for k in ("index", "games")):
        problem = "expected whole numbers 'index' and 'games'"
    else:
        for kind in KINDS:
            f, size, digest = (entry.get(f"{kind}_{x}") for x in ("file", "bytes", "sha256"))
            if f is not None and (not isinstance(f, str) or not isinstance(digest, str)
                                  or not isinstance(size, int | None)):
                problem = f"expected '{kind}_file' and '{kind}_sha256' strings and '{kind}_bytes' a whole number"
    if problem:
        raise RunDirError(f"{where}: {problem}; was it edited?")


def append_journal(run_dir: Path, entry: dict[str, Any]) -> None:
    with open(run_dir / JOURNAL, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_journal(run_dir: Path) -> list[dict[str, Any]]:
    p = run_dir / JOURNAL
    if not p.is_file():
        return []
    try:
        text = read_input_text(p, MAX_MANIFEST_BYTES)
    except InputFileError as e:
        raise RunDirError(str(e)) from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            break                      # a line cut by a kill: ignore it and what follows
        _check_entry(entry, f"{p}: line {n}")
        out.append(entry)
    return out


def clear_journal(run_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (run_dir / JOURNAL).unlink()


def save_inputs(run_dir: Path, files: dict[str, str]) -> None:
    """Copies of the card files the spec used (path as written -> contents), for --resume."""
    d = run_dir / INPUTS
    d.mkdir(exist_ok=True)
    index = {}
    for i, (path, text) in enumerate(sorted(files.items())):
        name = f"{i:02d}-{Path(path).name}"
        write_atomic(d / name, text.encode())
        index[path] = name
    write_atomic(d / "index.json", json.dumps(index, indent=1).encode())


def load_inputs(run_dir: Path) -> dict[str, str]:
    d = run_dir / INPUTS
    if not (d / "index.json").is_file():
        return {}
    try:
        index = json.loads(read_input_text(d / "index.json"))
        if not isinstance(index, dict) or not all(isinstance(v, str) and "/" not in v for v in index.values()):
            raise RunDirError(f"{d / 'index.json'}: expected an object of card file names; was it edited?")
        return {path: read_input_text(d / name) for path, name in index.items()}
    except (InputFileError, json.JSONDecodeError) as e:
        raise RunDirError(f"{d}: the run's copies of its card files cannot be read ({e})") from None


def open_games(run_dir: Path, columns: list[str] | None = None) -> pa.Table:
    """All rows of `games`, sorted by game_index (for summaries and tests)."""
    t = pq.read_table(run_dir / "games", columns=columns)
    if "game_index" in t.column_names:
        t = t.sort_by("game_index")
    return t
