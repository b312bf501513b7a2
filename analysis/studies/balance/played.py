"""A playtest's report (a run whose seats include `human`: protolab/play/playtest.py): its games
measure how one person played, not the cards' balance, so the report and the dashboard say so at
the top and raise no balance flag from them unless asked (`--flag-played`). The tests stay in the
table, withheld, so what they would have said is still readable."""

from __future__ import annotations

from typing import Any

import pandas as pd

from strategies.human import HUMAN


def person_seats(blocks: list[dict[str, Any]]) -> list[str]:
    """The arms (or run ids) of the provenance blocks whose seats include a person."""
    found = []
    for b in blocks:
        for arm, seats in (b.get("strategies") or {}).items():
            if HUMAN in seats:
                found.append(str(b.get("run_id") or arm))
    return list(dict.fromkeys(found))


def played_statement(blocks: list[dict[str, Any]], games: int, flagged: bool) -> str:
    """The line a playtest's report starts with (`blocks` hold a person's seat: person_seats)."""
    runs = person_seats(blocks)
    flags = (
        "its balance flags are raised as asked (--flag-played): read them as this person's results"
        if flagged
        else "no balance flag is raised from them (--flag-played raises them)"
    )
    return (
        f"A playtest: these {games:,} games were played by a person (protolab play, {', '.join(runs)}), so every "
        f"figure measures how one person played, not the cards' balance; {flags}."
    )


def withheld(flags: pd.DataFrame) -> pd.DataFrame:
    """The flag table with nothing flagged (the tests kept), its statement saying why."""
    out = flags.assign(flagged=False)
    out.attrs = {
        **flags.attrs,
        "statement": "no balance flag raised from a playtest's games (one person's play); --flag-played raises them",
    }
    return out
