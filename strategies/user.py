"""Writing your own strategy in Python (docs/strategies.md).

    # mybots.py
    from strategies.user import Strategy

    class FirstOption(Strategy):
        def choose(self, observation, decision):
            return 0            # index into decision.options

Name it anywhere a strategy is named: `protolab ladder mybots:FirstOption greedy`. The engine
calls `choose` for every decision with more than one option; `observation` holds only what the
player may know (sim/observation.py) and `decision` has `kind` and readable `options`.

`choose` may return any integral index (an int, or numpy's int64 that np.argmax returns). Each
call has a time limit, PROTOLAB_DECISION_TIMEOUT seconds (default 10; `--decision-timeout` sets
it, 0 turns it off): a strategy that never returns ends the games with an error naming it and the
game's seed instead of hanging the run.
"""

from __future__ import annotations

import atexit
import contextlib
import operator
import os
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sim.describe import DK, Namer
from sim.observation import observation_from_state
from strategies.errors import StrategyError

TIMEOUT_ENV = "PROTOLAB_DECISION_TIMEOUT"
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 86_400.0


@dataclass(frozen=True)
class UserDecision:
    """A decision as a user strategy sees it."""

    player: str
    kind: str
    options: list[str]


class Strategy:
    """Base class for user strategies: override choose()."""

    def choose(self, observation: dict[str, Any], decision: UserDecision) -> int:
        raise NotImplementedError


class UserStrategyError(StrategyError):
    """A user strategy that failed during a game: it raised, answered something that is not an
    option, or took longer than the decision time limit. The message names it and the seed."""


class _DecisionTimeout(BaseException):
    """Raised by the alarm inside choose(); a BaseException so that a strategy's own
    `except Exception` cannot swallow it."""


def check_timeout(seconds: float) -> float:
    """A decision time limit in seconds: 0 (no limit) or up to a day."""
    if not 0 <= seconds <= MAX_TIMEOUT:  # also refuses nan
        raise ValueError(f"expected 0 (no limit) to {MAX_TIMEOUT:,.0f} seconds, got {seconds}")
    return seconds


def set_decision_timeout(seconds: float) -> None:
    """Set the limit for this process and the Ray workers it starts (through the environment)."""
    os.environ[TIMEOUT_ENV] = repr(check_timeout(seconds))


def decision_timeout() -> float:
    """The limit in force: PROTOLAB_DECISION_TIMEOUT, else the default."""
    text = os.environ.get(TIMEOUT_ENV)
    if text is None:
        return DEFAULT_TIMEOUT
    try:
        return check_timeout(float(text))
    except ValueError as e:
        raise StrategyError(f"environment variable {TIMEOUT_ENV}={text!r}: {e}") from None


def where_raised(e: BaseException) -> str:
    """`KeyError: 'x' (mybots.py:12)`: the exception and the innermost line that raised it."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith("<frozen")]
    at = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})" if frames else ""
    if isinstance(e, SyntaxError):  # its message already says file and line
        at = ""
    return f"{type(e).__name__}: {e}{at}"


class _Alarm:
    """The decision clock. A periodic real-time timer (SIGALRM, every quarter of the limit, at most
    1 s) checks the decision in progress and raises _DecisionTimeout in it once it is over its
    limit. Timing one decision costs a clock read (arming a timer per decision would cost ~20 us, half
    a Python decision); the timer stops itself after two idle ticks and is re-armed on demand."""

    armed = False
    active = False
    started = 0.0
    limit = 0.0
    idle_ticks = 0

    @classmethod
    def tick(cls, signum: int, frame: Any) -> None:
        if cls.active and time.monotonic() - cls.started > cls.limit:
            cls.active = False  # raised once per decision
            raise _DecisionTimeout
        cls.idle_ticks = 0 if cls.active else cls.idle_ticks + 1
        if cls.idle_ticks >= 2:
            signal.setitimer(signal.ITIMER_REAL, 0)
            cls.armed = False

    @classmethod
    def stop(cls) -> None:
        """Disarm the timer and ignore a tick already on its way. Runs at exit: a tick arriving after
        the interpreter has put back the default SIGALRM action would kill the process (exit status
        142, "Alarm clock") after the command had finished well."""
        if cls.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            cls.armed = cls.active = False

    @classmethod
    def begin(cls, seconds: float) -> None:
        if not cls.armed or seconds != cls.limit:
            signal.signal(signal.SIGALRM, cls.tick)
            period = min(1.0, max(0.01, seconds / 4))
            signal.setitimer(signal.ITIMER_REAL, period, period)
            cls.armed = True
        cls.limit, cls.started, cls.idle_ticks, cls.active = seconds, time.monotonic(), 0, True


atexit.register(_Alarm.stop)


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise _DecisionTimeout in this thread once `seconds` have passed. Signals reach only the main
    thread; elsewhere, or with 0, there is no limit."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return
    _Alarm.begin(seconds)
    try:
        yield
    finally:
        _Alarm.active = False


class PythonSeat:
    """Adapter the engine calls (with the GIL) for a seat played by a Python strategy."""

    def __init__(self, strategy: Any, pool=None, name: str | None = None):
        self.strategy = strategy
        self.pool = pool
        self.name = name or f"{type(strategy).__module__}:{type(strategy).__name__}"
        self.timeout = decision_timeout()

    def __repr__(self) -> str:
        return f"{type(self.strategy).__module__}.{type(self.strategy).__name__}"

    def _fail(self, view, what: str) -> UserStrategyError:
        return UserStrategyError(f"user strategy {self.name!r} {what}, in the game with seed {view.seed}")

    def _choose(self, view, player: int, kind: int, options: list[int]) -> int:
        s = view.state()
        nm = Namer(self.pool, s, viewer=player)
        decision = UserDecision("AB"[player], DK[kind], [nm.option(kind, o) for o in options])
        observation = observation_from_state(self.pool, s, player)
        try:
            with _time_limit(self.timeout):
                answer = self.strategy.choose(observation, decision)
        except _DecisionTimeout:
            raise self._fail(
                view,
                f"took longer than {self.timeout:g} s to choose ({decision.kind}; "
                f"the limit is --decision-timeout or {TIMEOUT_ENV})",
            ) from None
        except Exception as e:  # noqa: BLE001 - the user's code: one line naming it, not a traceback
            raise self._fail(view, f"raised {where_raised(e)}") from None
        return self._index(view, answer, len(options))

    def _index(self, view, answer: Any, n: int) -> int:
        """The answer as an option index: any integral (operator.index), 0 .. n-1."""
        try:
            idx = operator.index(answer)
        except TypeError:
            idx = None
        if idx is None or not 0 <= idx < n:
            raise self._fail(view, f"returned {answer!r}; expected an option index 0..{n - 1}")
        return idx
