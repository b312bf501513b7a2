"""The one schema: the writer's tables go through `conform`, which takes exactly the schema's
columns (in its order and types) and refuses a table that disagrees with it."""

import pyarrow as pa
import pytest

from analysis.runs.schema import COMPILES_SCHEMA, conform


def _columns() -> dict[str, pa.Array]:
    return {f.name: pa.array([], f.type) for f in COMPILES_SCHEMA}


def test_conform_orders_and_casts_to_the_schema():
    cols = dict(reversed(list(_columns().items())))
    cols["turn"] = pa.array([], pa.int64())  # a wider int: cast to the schema's int16
    t = conform(cols, COMPILES_SCHEMA)
    assert t.schema == COMPILES_SCHEMA


@pytest.mark.parametrize("change, named", [("drop", "missing ['n']"), ("add", "not in the schema ['extra']")])
def test_conform_refuses_a_table_that_disagrees(change, named):
    cols = _columns()
    if change == "drop":
        del cols["n"]
    else:
        cols["extra"] = pa.array([], pa.int8())
    with pytest.raises(ValueError, match=named.replace("[", r"\[").replace("]", r"\]")):
        conform(cols, COMPILES_SCHEMA)
