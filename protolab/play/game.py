"""One live game of a playtest: the engine halted at the person's decision, what that person may
see (sim/observation.py's honest view, the log as they may read it), the legal options with
readable labels, and one decision at a time (analysis/runs/played.py keeps every answer).

The engine asks the `human` seats by halting (a scripted seat, as the step API does): each
answer replays the game from its start with the answers so far, the opponent's decisions taken
inside C by its strategy, exactly as `protolab replay` rebuilds the game later."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from analysis.runs.played import PlayedGame, path_of
from protolab.experiment.run.replay import new_game
from protolab.play.options import grouped
from protolab.play.playtest import Playtest, PlaytestError
from protolab.play.prompts import asker, asking_box, option_labels, prompt
from sim.describe import DK, SEAT_NAMES, LogLine, Namer, log_line
from sim.observation import observation_from_state
from sim.record import ending

LOG_KEEP = 80  # log lines the page shows (the last ones)


class Refused(ValueError):
    """A decision the game cannot take (illegal, stale, or the game is over): HTTP 409, nothing changes."""


class NotSaved(OSError):
    """A decision (or a game's end) the run folder could not keep (a full disk): HTTP 507. The
    decision is not taken: the game stays at what its played/ file holds."""


class LiveGame:
    """The game a playtest is at; every method holds the lock (two tabs, one game)."""

    def __init__(self, playtest: Playtest, rec: PlayedGame):
        self.playtest = playtest
        self.rec = rec
        self.lock = threading.RLock()
        t = playtest
        self.game = new_game(t.pool, rec.seed, t.strategies, t.protocols, None, t.spec.turn_cap, answers=rec.answers)
        if self.game._status == "bad":
            raise PlaytestError(
                f"{path_of(playtest.run_dir, rec.game_index)}: its recorded decisions do not fit game "
                f"{rec.game_index} (was it edited?)"
            )
        self._log_cache: tuple[int, list[tuple]] | None = None
        self.not_saved: str | None = None  # the last write's failure, until a write succeeds
        self._finish_if_over()

    # -- deciding ---------------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.game.is_over

    def decide(self, option: Any, decision: Any = None) -> None:
        """Play option `option` of the pending decision; `decision` (optional) is the decision number
        the caller saw: another one means its view is stale. Refused, changing nothing, otherwise."""
        with self.lock:
            if self.over:
                raise Refused("the game is over; there is no decision to take")
            n = len(self.rec.answers)
            if decision is not None and decision != n:
                raise Refused(f"stale: decision {decision} was taken already; the game is at decision {n}")
            _, kind, values = self.game.core.pending()
            if isinstance(option, bool) or not isinstance(option, int) or not 0 <= option < len(values):
                raise Refused(f"option {option!r} is not legal; expected an index 0..{len(values) - 1}")
            answers = [*self.rec.answers, option]
            status = self.game.core.run(answers, self.game.strategies)
            if status == "bad":  # cannot happen for an index in range; keep the game as it was
                self.game._status = self.game.core.run(self.rec.answers, self.game.strategies)
                raise Refused(f"option {option} is not legal here")
            try:  # kept first: a decision the disk cannot hold is not taken
                self.playtest.save(replace(self.rec, answers=answers))
            except OSError as e:
                self.game._status = self.game.core.run(self.rec.answers, self.game.strategies)
                self.not_saved = (
                    f"not saved, so not taken: {e}; the game stays at decision {n} (free some space, then decide again)"
                )
                raise NotSaved(self.not_saved) from None
            self.not_saved = None
            self.game.answers = answers
            self.game._status = status
            self.rec.answers = answers
            self._finish_if_over()

    def _finish_if_over(self) -> None:
        """An ended game becomes its shard; also one whose shard a stop cut short (not in run.json)."""
        if self.over and self.rec.game_index not in self.playtest.done():
            try:
                self.playtest.finish(self.rec, self.game.record())
            except OSError as e:  # its decisions are kept: the next `play --out` writes the shard
                self.not_saved = (
                    f"the game is over and its decisions are kept, but its result could not be written: {e} "
                    "(free some space and start protolab play --out on this folder again to write it)"
                )
                raise NotSaved(self.not_saved) from None

    # -- what the person sees -----------------------------------------------------------------------
    def viewer(self) -> int:
        """Whose view: the deciding person's, else (the game over) the first human seat's."""
        if not self.over:
            return self.game.core.pending()[0]
        return self.rec.human_seats[0]

    def state(self) -> dict[str, Any]:
        """GET /api/state (docs/play-api.md)."""
        with self.lock:
            pool, s = self.game.pool, self.game.core.state()
            me = self.viewer()
            out: dict[str, Any] = {
                "run": self.playtest.run_id,
                "game": self.rec.game_index,
                "games": self.playtest.games,
                "seed": self.rec.seed if self.over else None,  # the seed and the engine tell every deck's order
                "seats": {SEAT_NAMES[p]: self._who(p) for p in (0, 1)},
                "seat": SEAT_NAMES[me],
                "decision": len(self.rec.answers),
                "over": self.over,
                "view": observation_from_state(pool, s, me),
                "cards": self._texts(s),
                "log": self._log(me),
                "options": [],
                "not_saved": self.not_saved,
            }
            if self.over:
                r = self.game.record()
                out["result"] = {
                    "winner": SEAT_NAMES[r["winner"]] if r["winner"] in (0, 1) else None,
                    "end_reason": r["end_reason"],
                    "loop_card": r.get("loop_card"),
                    "ending": ending(r),
                    "turns": r["turns"],
                    "replay": f"/replay/{self.rec.game_index}",
                }
                nxt = self.playtest.next_game()
                out["next_game"] = nxt
                return out
            player, kind, values = self.game.core.pending()
            nm = Namer(pool, s, viewer=player)
            word, asking = DK[kind], self.game.core.asking()
            out["kind"] = word
            out["prompt"] = prompt(pool, nm, word, asking)
            out["asked_by"] = asker(pool, nm, asking) or None
            out["asking"] = asking_box(pool, nm, asking)
            labels = option_labels(pool, nm, kind, word, values, asking)
            out["options"] = grouped(nm, kind, values, labels)
            return out

    def _who(self, p: int) -> str:
        strategy = self.playtest.strategies[p]
        name = self.rec.names.get(SEAT_NAMES[p])
        return f"{strategy} ({name})" if name else strategy

    def _texts(self, s: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Every card of the six protocols in play, as printed (a variant's text where it changed them):
        the decks' lists are public, only where each card is may be hidden."""
        pool = self.game.pool
        protos = {pool.protocols[i] for side in s["protocols"] for i in side}
        changed = self.playtest.changed_cards()
        return {
            c.name: {
                "protocol": c.protocol,
                "value": c.value,
                "top": c.top,
                "middle": c.middle,
                "bottom": c.bottom,
                "variant": c.name in changed,
            }
            for c in pool.cards
            if c.protocol in protos
        }

    def _log(self, viewer: int) -> list[str]:
        """The last LOG_KEEP lines of the game's log, each card named as `viewer` may see it now."""
        n = len(self.rec.answers)
        if self._log_cache is None or self._log_cache[0] != n:
            self.game.core.run(self.game.answers, self.game.strategies, True)
            entries = self.game.core.log_entries()
            self.game.core.run(self.game.answers, self.game.strategies)
            self._log_cache = (n, entries)
        entries = self._log_cache[1]
        nm = Namer(self.game.pool, self.game.core.state(), viewer)
        return [log_line(LogLine(self.game.pool, nm, *e)) for e in entries[-LOG_KEEP:]]
