"""What every kind of study offers (analysis/studies/__init__.py lists the kinds): which run folders
it claims, how it opens them, and one small surface the commands use without asking which kind it
is: the terminal report, the page, JSON, and CSV of its tables."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from analysis.pages.shell import write_page
from analysis.runs.open import Runs, open_runs
from analysis.runs.runfolder import Where, open_location, write_atomic

OpenFn = Callable[[list[str]], Runs]
Served = TypeVar("Served")  # what serves the games a page links (protolab/commands/game_links.py)


@dataclass
class Options:
    """How to read a study: the flag band and the multiple-comparison settings, the one table asked
    for (None: all), and how to open run folders (the commands pass theirs: threads, verification,
    warnings on stderr)."""

    band: float = 0.05
    correction: str = "holm"
    alpha: float = 0.05
    table: str | None = None
    verify: str = "fast"  # the level open_fn verifies at (named in `report --timing`)
    open_fn: OpenFn | None = None
    flag_played: bool = False  # raise balance flags from a playtest's games (a person's), not by default

    def open(self, paths: list[str]) -> Runs:
        return (self.open_fn or open_runs)(paths)

    def open_one(self, path: str) -> Runs:
        return self.open([path])


class Study(ABC):
    """One study of one or more run folders. `run` is the folder as given (for the commands it
    prints), `run_id` names the study (the default dashboard file name)."""

    kind: ClassVar[str]  # e.g. "tiers"; says what was found in messages and tests
    TABLE_NAMES: ClassVar[tuple[str, ...]]  # what `report --table` accepts
    DEFAULT_TABLE: ClassVar[str]  # `report --format csv` without --table or --out
    PAGE_LABEL: ClassVar[str] = "Dashboard"  # `protolab run` ends with "<label>: <file>"

    run: str
    run_id: str
    timings: dict[str, float]

    @classmethod
    @abstractmethod
    def claims(cls, paths: Sequence[str]) -> bool:
        """Whether `paths` (as given on the command line) are a study of this kind."""

    @classmethod
    @abstractmethod
    def open(cls, paths: Sequence[str], options: Options) -> Study:
        """Open the runs and compute (or prepare to compute) the study's tables."""

    @abstractmethod
    def print(self, console) -> None:
        """The study in the terminal (a rich console)."""

    @abstractmethod
    def page(self) -> str:
        """The study as one self-contained HTML page (analysis/pages/shell.py)."""

    def page_linking_games(self, examples: Callable[[Any], tuple[str, Served]]) -> tuple[str, Served | None]:
        """The page with a section linking its findings to example games of its one run, and what serves
        those games. `examples(report)` builds that section from the study's report (the commands hold
        the run's games); a kind whose page links no games gives its page and None, without calling it."""
        return self.page(), None

    @abstractmethod
    def to_json(self) -> str:
        """Every table (or Options.table alone) with the study's meta, as one JSON document."""

    @abstractmethod
    def table_csv(self, name: str | None = None) -> str:
        """One table (DEFAULT_TABLE when None) as CSV text, under its provenance header."""

    @abstractmethod
    def write_csv(self, out_dir: str | Path) -> list[Path]:
        """Every table as a CSV file under `out_dir`; the files written."""

    def summarise(self, console) -> None:
        """What `protolab run` prints when the run ends (the terminal report unless a kind says less)."""
        self.print(console)

    def afterword(self, page_file: Any) -> list[str]:
        """The lines `protolab run` ends with, after writing the page to `page_file`."""
        return [
            f"{self.PAGE_LABEL}: {page_file} (self-contained, works offline; protolab dashboard {self.run} --serve)"
        ]

    def conclude(self, console, folder: Where) -> None:
        """The end of `protolab run`: the summary, and the page written into the run folder."""
        self.summarise(console)
        out = open_location(folder) / "dashboard.html"
        write_page(out, self.page())
        for line in self.afterword(out):
            console.print(line)


def write_tables(tables: dict[str, str], out_dir: str | Path) -> list[Path]:
    """Each (name, CSV text) as OUT_DIR/NAME.csv, written whole or not at all."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in tables.items():
        write_atomic(out / f"{name}.csv", text.encode("utf-8"))
        written.append(out / f"{name}.csv")
    return written
