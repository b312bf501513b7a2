"""The `protolab` command line: one entry point, a subcommand per job, `--help` everywhere.

The roof of the layers: it loads the module of the command it runs, and only that one (so that
`--version` and `--help` answer at once), and every error a user can cause, from whichever layer
raised it, ends here as one line and exit status 2."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from protolab.commands.errors import UsageError
from protolab.commands.registry import BY_NAME, COMMANDS
from protolab.experiment.stopnote import stop_requested
from protolab.version import protolab_version

# The project's errors a user can cause, as (defining module, class name): `main` prints them as
# one line, exit status 2. Named, not imported: an error of a module no command loaded cannot
# have been raised, and importing them all would load pandas, DuckDB and Ray for `--version`.
USER_ERRORS = (
    ("protolab.commands.errors", "UsageError"),
    ("sim.cards.loader", "CardDataError"),
    ("sim.inputs", "InputFileError"),
    ("protolab.experiment.spec", "SpecError"),
    ("analysis.runs.runfolder", "RunDirError"),
    ("strategies.spec", "StrategyError"),
    ("analysis.runs.open", "RunError"),
    ("sim.scenario", "ScenarioError"),
    ("analysis.runs.storage", "StorageError"),
)


class _Parser(argparse.ArgumentParser):
    """argparse whose errors (a wrong type, a missing argument) are one line like every other error."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("protolab").strip()
        where = f"{command}: " if command else ""
        raise UsageError(f"{where}{message} (see: {self.prog} --help)")


class _Version(argparse.Action):
    """`protolab --version`: the installed version (read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the installed protolab version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace, values, option_string=None) -> NoReturn:
        print(f"protolab {protolab_version()}")
        parser.exit()


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand argv names (its first word that is not an option), if it names one."""
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in BY_NAME else None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `protolab` parser. With argv, only the module of the command it names is loaded (the
    other commands are listed by name and help alone: COMMANDS); without, every command's."""
    ap = _Parser(prog="protolab", description="Balance lab for the card game Compile.")
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = {c.module for c in COMMANDS} if argv is None else {BY_NAME[c].module for c in [command_of(argv)] if c}
    loaded: set[str] = set()
    for c in COMMANDS:
        if c.module not in wanted:
            sub.add_parser(c.name, help=c.help)
        elif c.module not in loaded:
            importlib.import_module(c.module).add_commands(sub)
            loaded.add(c.module)
    return ap


def is_user_error(e: BaseException) -> bool:
    """An error the user caused (bad input), as opposed to a fault in protolab."""
    for module, name in USER_ERRORS:
        loaded = sys.modules.get(module)
        if loaded is not None and isinstance(e, getattr(loaded, name)):
            return True
    return False


def one_line(text: str) -> str:
    """The message with line breaks and control characters escaped: one line, no terminal codes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _stdout_gone() -> int:
    """The reader of our output left (`protolab ... | head -1`): stop quietly. Later writes,
    including the flush at exit, go to /dev/null instead of raising again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass
    return 141  # what a shell reports for a program ended by SIGPIPE


DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _disk_full(e: OSError) -> int:
    """The disk the output goes to is full (`protolab report RUN > file`): one line on stderr, exit
    status 2; the rest of the output, and the flush at exit, go to /dev/null instead of raising again."""
    where = e.filename or "the output"
    print(f"protolab: error: cannot write {where}: {e.strerror or e}", file=sys.stderr)
    _stdout_gone()
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every error a user can cause ends here as one line `protolab: error: ...`
    on stderr and exit status 2; faults in protolab itself keep their traceback."""
    try:
        args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
        if stop_requested():  # a Ctrl-C swallowed while the command's module was imported
            raise KeyboardInterrupt
        if hasattr(args, "prepare"):  # what the command's options set up first (the timeouts)
            args.prepare(args)
        return args.func(args)
    except BrokenPipeError:
        return _stdout_gone()
    except OSError as e:
        if e.errno not in DISK_FULL:
            raise
        return _disk_full(e)
    except KeyboardInterrupt:
        print("protolab: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if stop_requested():  # a library turned the Ctrl-C into its own error (DuckDB: "Query interrupted")
            print("protolab: interrupted", file=sys.stderr)
            return 130
        if not is_user_error(e):
            raise
        print(f"protolab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
