"""The rows of a run folder as one hash, for the fault benchmarks (sigint_sweep.py, chaos_run.py):
two runs hold the same rows when their hashes agree.

Every table of the run (games, and events or cards when it has them), its dictionary-encoded
columns as plain values, each sorted by its game (and event) order (cards: by every column),
without the run_id column (a resumed run keeps its id, a fresh one has another), is written in
Arrow's stream format into one sha256."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ORDER = {
    "games": [("game_index", "ascending")],
    "events": [("game_index", "ascending"), ("seq", "ascending")],
}


def decoded(table: pa.Table) -> pa.Table:
    """The table with its dictionary-encoded columns as plain values: Arrow sorts no dictionary
    column, and the rows, not how each file happened to encode them, are what the hash is of."""
    for i, field in enumerate(table.schema):
        if pa.types.is_dictionary(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(field.type.value_type))
    return table


def rows_hash(run_dir: Path) -> str:
    """sha256 of every row of the run folder `run_dir` (see the module docstring)."""
    h = hashlib.sha256()
    for name in ("games", "events", "cards"):
        folder = Path(run_dir) / name
        if not folder.is_dir() or not any(folder.glob("*.parquet")):
            continue
        table = decoded(pq.read_table(folder))
        if "run_id" in table.column_names:
            table = table.drop_columns(["run_id"])
        keys = ORDER.get(name) or [(c, "ascending") for c in table.column_names]
        table = table.sort_by(keys)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        h.update(name.encode())
        h.update(sink.getvalue().to_pybytes())
    return h.hexdigest()
