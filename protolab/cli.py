"""The `protolab` command line: one entry point, a subcommand per job, `--help` everywhere.

The roof of the layers: it imports each command module directly, and every error a user can
cause, from whichever layer raised it, ends here as one line and exit status 2."""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from analysis.open import RunError
from analysis.runfolder import RunDirError
from analysis.storage import (
    StorageError,
    requests_left_behind,  # noqa: F401 - asked by protolab.main at exit
    set_storage_timeout,
)
from protolab.commands import analysis, bench, cards, cardvalue, games, ladder, meta, power, run, tune
from protolab.commands.common import UsageError
from protolab.experiment.spec import SpecError
from protolab.version import protolab_version
from sim.cards.loader import CardDataError
from sim.inputs import InputFileError
from sim.scenario import ScenarioError
from strategies.spec import StrategyError
from strategies.user import set_decision_timeout

# The project's errors a user can cause: `main` prints them as one line, exit status 2.
USER_ERRORS = (UsageError, CardDataError, InputFileError, SpecError, RunDirError, StrategyError, RunError,
               ScenarioError, StorageError)

# Subcommands in the order `protolab --help` lists them.
COMMANDS = (games, cards, bench, ladder, run, cardvalue, analysis, meta, tune, power)


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

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        print(f"protolab {protolab_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="protolab", description="Balance lab for the card game Compile.")
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS:
        module.add_commands(sub)
    return ap


def is_user_error(e: BaseException) -> bool:
    """An error the user caused (bad input), as opposed to a fault in protolab."""
    return isinstance(e, USER_ERRORS)


def one_line(text: str) -> str:
    """The message with line breaks and control characters escaped: one line, no terminal codes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _apply_decision_timeout(args: argparse.Namespace) -> None:
    if getattr(args, "decision_timeout", None) is not None:
        try:
            set_decision_timeout(args.decision_timeout)
        except ValueError as e:
            raise UsageError(f"--decision-timeout: {e}") from None


def _apply_storage_timeout(args: argparse.Namespace) -> None:
    if getattr(args, "storage_timeout", None) is not None:
        try:
            set_storage_timeout(args.storage_timeout)
        except ValueError as e:
            raise UsageError(f"--storage-timeout: {e}") from None


def _stdout_gone() -> int:
    """The reader of our output left (`protolab ... | head -1`): stop quietly. Later writes,
    including the flush at exit, go to /dev/null instead of raising again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass
    return 141                                     # what a shell reports for a program ended by SIGPIPE


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
        args = build_parser().parse_args(argv)
        _apply_decision_timeout(args)
        _apply_storage_timeout(args)
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
        if not is_user_error(e):
            raise
        print(f"protolab: error: {one_line(str(e))}", file=sys.stderr)
        return 2
