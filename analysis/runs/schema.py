"""The run-folder schema of docs/data.md as Arrow schemas: the one declaration of every column the
runner writes (its tables are built through `conform`), the analysis reads (checked when a run is
opened) and the tests' synthetic runs hold."""

from __future__ import annotations

import pyarrow as pa

from sim.describe import LINES
from sim.enums import names

DICT = pa.dictionary(pa.int32(), pa.string())

SEATS = (0, 1)
POSITIONS = LINES  # a seat's protocols, left to right (its lines)
# The vocabulary's names (sim/cards/vocabulary/engine_enums.py, ENUMS), in code order: the values of the `kind`
# and `end_reason` dictionaries.
EVENT_KINDS = tuple(str(w) for w in names("event_kind").values())  # words, no flags
END_REASONS = tuple(name for code, name in names("end_reason").items() if code)
PROTOCOL_COLUMNS = tuple(f"seat{s}_protocol_{p}" for s in SEATS for p in POSITIONS)


def _fields(typ: pa.DataType, *names: str) -> list[pa.Field]:
    """Columns of one type, in the order named."""
    return [pa.field(n, typ) for n in names]


# A seat's counts in a game (the games table's seat0_NAME, seat1_NAME).
SEAT_COUNTS = ("recompiles", "plays_face_up", "plays_face_down", "refreshes", "control_gains")

GAMES_SCHEMA = pa.schema(
    [
        pa.field("run_id", DICT),
        pa.field("game_index", pa.int64()),
        pa.field("arm", DICT),
        *_fields(pa.int32(), "matchup", "game_in_matchup"),
        pa.field("seed", pa.uint64()),
        *_fields(DICT, "pool_hash", "spec_hash", "engine_version", "strategy_0", "strategy_1", *PROTOCOL_COLUMNS),
        *_fields(pa.int8(), "first_player", "winner"),
        pa.field("end_reason", DICT),
        # the card whose text hit the loop bound (end_reason loop_guard: the card that repeated), else null
        pa.field("loop_card", DICT),
        pa.field("turns", pa.int16()),
        *_fields(pa.int16(), *(f"seat{s}_compile{k}_turn" for s in SEATS for k in (1, 2, 3))),
        *_fields(pa.int16(), *(f"seat{s}_{count}" for count in SEAT_COUNTS for s in SEATS)),
        # the six protocols in pick order (picks 1 to 6: A, B, B, A, A, B with A the first player), null
        # when the game did not draft (fixed trios, and the seat-swapped replay 2k+1 of a drafted game 2k)
        pa.field("picks", pa.list_(pa.string())),
    ]
)

EVENTS_SCHEMA = pa.schema(
    [
        pa.field("run_id", DICT),
        pa.field("game_index", pa.int64()),
        pa.field("seq", pa.int32()),
        pa.field("turn", pa.int16()),
        pa.field("seat", pa.int8()),
        *_fields(DICT, "kind", "card", "protocol"),
        pa.field("line", pa.int8()),
        pa.field("by_effect", pa.bool_()),
    ]
)

# Per shard and (arm, card): the seat-game counts behind card impact (docs/data.md, `cards`).
CARD_COUNTS = ("drawn", "drawn_wins", "up", "up_wins", "down", "down_wins", "played", "played_wins")
CARDS_SCHEMA = pa.schema(
    [
        *_fields(DICT, "run_id", "arm", "card", "protocol"),
        *_fields(pa.int64(), *CARD_COUNTS),
    ]
)

# Per shard: compile and recompile counts per (arm, kind, protocol, line, ordinal, turn)
# (docs/data.md, `compiles`); what the per-protocol and per-line compile tables sum.
COMPILES_SCHEMA = pa.schema(
    [
        *_fields(DICT, "run_id", "arm", "kind", "protocol"),
        *_fields(pa.int8(), "line", "ordinal"),
        pa.field("turn", pa.int16()),
        pa.field("n", pa.int64()),
    ]
)

PICKS_FIELD = GAMES_SCHEMA.field("picks")

# Columns the runner writes that a run folder need not have (runs written before them, synthetic runs).
OPTIONAL = {"games": ("arm", "game_in_matchup", "picks", "loop_card"), "events": ("seq",)}


def required(schema: pa.Schema, kind: str) -> pa.Schema:
    """The schema without the optional columns of its kind."""
    return pa.schema([f for f in schema if f.name not in OPTIONAL.get(kind, ())])


def conform(columns: dict[str, pa.Array], schema: pa.Schema) -> pa.Table:
    """A table of exactly the schema's columns, in its order and types; a column missing or not in
    the schema is an error in protolab (the writer and the schema disagree), never silently kept."""
    missing = [n for n in schema.names if n not in columns]
    unknown = [n for n in columns if n not in schema.names]
    if missing or unknown:
        raise ValueError(f"table does not match its schema: missing {missing}, not in the schema {unknown}")
    arrays = [columns[f.name] if columns[f.name].type == f.type else columns[f.name].cast(f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


# The columns a query may rely on; extra columns in a file are allowed (the schema can grow).
GAMES_COLUMNS = tuple(required(GAMES_SCHEMA, "games").names)
EVENTS_COLUMNS = tuple(required(EVENTS_SCHEMA, "events").names)
CARDS_COLUMNS = tuple(CARDS_SCHEMA.names)
COMPILES_COLUMNS = tuple(COMPILES_SCHEMA.names)
