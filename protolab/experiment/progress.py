"""The progress of a run on the console: games done, games/s and ETA."""

from __future__ import annotations

import time


class Progress:
    """A rich progress bar with games done, games/s and ETA (plain lines when not a terminal)."""

    def __init__(self, console, total: int, done: int, enabled: bool):
        self.total, self.start_done, self.t0 = total, done, time.perf_counter()
        self.bar = None
        self.last_line = time.perf_counter()
        self.console = console
        self.enabled = enabled
        if enabled and console is not None and console.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn

            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.completed:,.0f}/{task.total:,.0f} games"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA {task.fields[eta]}"),
                console=console,
                transient=False,
            )
            self.task = self.bar.add_task("playing", total=total, completed=done, rate="", eta="-")
            self.bar.start()

    def rate_eta(self, done: int) -> tuple[float, float | None]:
        dt = time.perf_counter() - self.t0
        rate = (done - self.start_done) / dt if dt > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else None
        return rate, eta

    def update(self, done: int) -> None:
        rate, eta = self.rate_eta(done)
        eta_s = "-" if eta is None else time.strftime("%H:%M:%S", time.gmtime(eta))
        if self.bar is not None:
            self.bar.update(self.task, completed=done, rate=f"{rate:,.0f} games/s", eta=eta_s)
        elif (
            self.enabled
            and self.console is not None
            and (time.perf_counter() - self.last_line > 10 or done == self.total)
        ):
            self.last_line = time.perf_counter()
            self.console.print(f"  {done:,}/{self.total:,} games, {rate:,.0f} games/s, ETA {eta_s}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
