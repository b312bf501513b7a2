"""protolab, the application layer: the `protolab` command, experiments on Ray, and the bench.

The layers import one way, floor to roof (docs/architecture.md): `sim` (engine, card loader, game
API, batch play) < `strategies` < `analysis` (with the run-folder format) < `protolab`.

This file is as small as it can be: the command's Ctrl-C handler is set by the first line that
runs after the interpreter has started, so a Ctrl-C while anything else loads (protolab.process,
the layers, the libraries) is one line and status 130, not Python's traceback."""

import signal

early: list[int] = []  # a Ctrl-C that came before protolab.process set its own handler


def _early_interrupt(signum: int, _frame) -> None:
    early.append(signum)
    raise KeyboardInterrupt


def main() -> int:
    """The `protolab` command (protolab/process.py), its SIGINT handler first."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when started with it ignored
        signal.signal(signal.SIGINT, _early_interrupt)
    try:
        from protolab.process import main as run
    except KeyboardInterrupt:
        import os
        import sys

        sys.stderr.write("protolab: interrupted\n")
        sys.stderr.flush()
        os._exit(130)  # nothing of the command's has started: nothing to end but the process
    return run()
