"""The `protolab` subcommands: each one's name, the module that builds it and its one-line help.

The one declaration of which commands exist. It imports nothing, so `protolab --version` and
`protolab --help` answer without loading a command module (they pull in pandas, DuckDB, Ray):
the command line loads only the module of the command it runs (protolab/cli.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import argparse


class Command(NamedTuple):
    name: str
    module: str  # defines add_commands(sub), which registers this command (and its neighbours)
    help: str


# simulate's and replay's players unless told (the strongest affordable verdict, docs/strategies.md):
# declared here, where `protolab --help` reads it without loading the command's module
DEFAULT_STRATEGIES = ("learned", "learned")

# In the order `protolab --help` lists them; a module's commands stand together.
COMMANDS = (
    Command(
        "simulate",
        "protolab.commands.games",
        f"play a batch of games ({' vs '.join(DEFAULT_STRATEGIES)} unless told) and print a summary",
    ),
    Command(
        "replay", "protolab.commands.games", "print the readable log of a game: one of a run (RUN --game N) or a seed's"
    ),
    Command("scenario", "protolab.commands.games", "run scenario files (docs/scenarios.md)"),
    Command("cards", "protolab.commands.cards", "list, show and check card data"),
    Command("bench", "protolab.commands.bench", "measure games per second on one core"),
    Command("ladder", "protolab.commands.ladder", "round robin between strategies: win rates and ratings"),
    Command("run", "protolab.commands.run", "run an experiment spec on Ray and write its run folder (Parquet)"),
    Command(
        "cardvalue",
        "protolab.commands.cardvalue",
        "what each card is worth: restricted play (never played / never face-up) on Ray",
    ),
    Command(
        "report", "protolab.commands.analysis", "balance report of run folders (win rates, matchups, compiles, cards)"
    ),
    Command(
        "compare", "protolab.commands.analysis", "A/B comparison of two runs (e.g. official pool vs a card variant)"
    ),
    Command("dashboard", "protolab.commands.analysis", "self-contained HTML dashboard of a run (works offline)"),
    Command(
        "meta",
        "protolab.commands.meta",
        "the metagame: equilibrium of 'choose a trio', alpha-rank, Nash-averaged ratings",
    ),
    Command("tune", "protolab.commands.tune", "search for the smallest card changes that bring protocols into balance"),
    Command(
        "train",
        "protolab.commands.train",
        "train a learned player: example games on Ray, a fitted model, a ladder per generation",
    ),
    Command(
        "play", "protolab.commands.play", "play a game in the browser against the lab's player; games join the analysis"
    ),
    Command("power", "protolab.commands.power", "how many games an experiment needs to see an effect (from a pilot)"),
)

BY_NAME = {c.name: c for c in COMMANDS}


def summary(name: str) -> str:
    """The one-line help of command `name`."""
    return BY_NAME[name].help


def command_parser(sub: argparse._SubParsersAction, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """The parser of command `name`, its help the one line declared here (`kwargs`: the rest of
    add_parser's, e.g. a description), so `protolab --help` says the same with or without the module."""
    return sub.add_parser(name, help=summary(name), **kwargs)
