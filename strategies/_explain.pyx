# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Why each move, for replays only: a watched seat answers every decision with its own decision
function as always, and at each action decision first asks the seat's explain function on a copy
of the game (the same streams and memory, so the explained choice is the one it then plays).

A kind of player provides an explain function by registering it beside its decision function
(`register_explainer(decide, explain)`, at import); a seat whose decision function has none
(random, scripted, Python strategies) is not watched. Normal play never passes through here."""

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int32_t
from sim.engine._core cimport State, SeatConfig, decide_fn_t, D_ACTION, ST_EXTERNAL

MEASURES = ("evaluation", "mean evaluation", "visits")

cdef enum:
    NKINDS = 32                # registered kinds of player at most

cdef decide_fn_t _deciders[NKINDS]
cdef explain_fn_t _explainers[NKINDS]
cdef int _nkinds = 0


cdef void register_explainer(decide_fn_t decide, explain_fn_t explain) noexcept:
    """Seats deciding with `decide` are explained by `explain` (once per kind, at import)."""
    global _nkinds
    cdef int i
    for i in range(_nkinds):
        if _deciders[i] == decide:
            _explainers[i] = explain
            return
    if _nkinds < NKINDS:
        _deciders[_nkinds] = decide
        _explainers[_nkinds] = explain
        _nkinds += 1


cdef explain_fn_t explainer_of(decide_fn_t decide) noexcept:
    cdef int i
    for i in range(_nkinds):
        if _deciders[i] == decide:
            return _explainers[i]
    return NULL


cdef struct Said:
    # one explained action decision: where its alternatives start in Watch.alts, and what was played
    int32_t turn
    int32_t player
    int32_t played
    int32_t chosen
    int32_t first
    int32_t n
    int8_t measure


cdef struct Watch:
    decide_fn_t decide         # the seat's own decision function and context
    const void* ctx
    explain_fn_t explain
    State* copy                # the copy each explanation is worked out on
    Explanation scratch
    Said* said
    Alternative* alts
    int32_t nsaid, capsaid, nalts, capalts
    int8_t failed              # memory ran out: later decisions are played but not explained


cdef bint make_room(Watch* w, int n) noexcept nogil:
    """Room for one more decision of n alternatives (grown by doubling)."""
    cdef void* p
    if w.nsaid == w.capsaid:
        p = realloc(w.said, (2 * w.capsaid + 16) * sizeof(Said))
        if p == NULL:
            return False
        w.said = <Said*>p
        w.capsaid = 2 * w.capsaid + 16
    if w.nalts + n > w.capalts:
        p = realloc(w.alts, (2 * w.capalts + n + 64) * sizeof(Alternative))
        if p == NULL:
            return False
        w.alts = <Alternative*>p
        w.capalts = 2 * w.capalts + n + 64
    return True


cdef int watch_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """The watched seat's decisions: its own, each action decision explained first on a copy."""
    cdef Watch* w = <Watch*>ctx
    cdef Explanation* e = &w.scratch
    cdef Said* s
    cdef int choice
    if kind != D_ACTION or w.failed:
        return w.decide(w.ctx, g, p, kind)
    memcpy(w.copy, g, sizeof(State))
    w.explain(w.ctx, w.copy, p, e)
    choice = w.decide(w.ctx, g, p, kind)
    if not make_room(w, e.n):
        w.failed = 1
        return choice
    s = &w.said[w.nsaid]
    s.turn = g.turn
    s.player = p
    s.played = choice
    s.chosen = e.chosen
    s.first = w.nalts
    s.n = e.n
    s.measure = e.measure
    memcpy(&w.alts[w.nalts], e.alt, e.n * sizeof(Alternative))
    w.nalts += e.n
    w.nsaid += 1
    return choice


cdef class Watcher:
    """A seat watched for the replay: its decisions pass through watch_decide until release()."""
    cdef Watch w
    cdef SeatConfig seat
    cdef object owner

    def __dealloc__(self):
        free(self.w.copy)
        free(self.w.said)
        free(self.w.alts)

    def decisions(self) -> list:
        """Every explained action decision: turn, player, the option played, the explanation's
        choice, its measure and its alternatives as (option, score, count, allowed)."""
        cdef int i, j
        cdef Said* s
        cdef Alternative* a
        out = []
        for i in range(self.w.nsaid):
            s = &self.w.said[i]
            alts = []
            for j in range(s.n):
                a = &self.w.alts[s.first + j]
                alts.append((a.option, a.score, a.count, bool(a.allowed)))
            out.append({"turn": s.turn, "player": s.player, "played": s.played, "chosen": s.chosen,
                        "measure": MEASURES[s.measure], "alternatives": alts})
        return out

    @property
    def complete(self) -> bool:
        """False if memory ran out and some decisions went unexplained."""
        return not self.w.failed

    def release(self) -> None:
        """Give the seat back its own decision function."""
        if self.seat is not None:
            self.seat.set_decider(self.w.decide, self.w.ctx, self.owner)
            self.seat = None
            self.owner = None


def watch(object config):
    """Watch a seat (its decisions unchanged, its action decisions explained): a Watcher, or None
    when the seat's kind of player has no explain function."""
    cdef Watcher watcher
    cdef SeatConfig seat
    cdef explain_fn_t explain
    if not isinstance(config, SeatConfig):
        return None
    seat = config
    if seat.strat != ST_EXTERNAL:
        return None
    explain = explainer_of(seat.decide)
    if explain == NULL:
        return None
    watcher = Watcher.__new__(Watcher)
    watcher.w.copy = <State*>malloc(sizeof(State))
    if watcher.w.copy == NULL:
        raise MemoryError("explain: cannot allocate a copy of the game")
    watcher.w.decide = seat.decide
    watcher.w.ctx = seat.ctx
    watcher.w.explain = explain
    watcher.seat = seat
    watcher.owner = seat.owner
    seat.set_decider(watch_decide, &watcher.w, watcher)
    return watcher
