# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Why each move, for replays only: a watched seat answers every decision with its own decision
function as always, and at each action decision first asks the seat's explain function on a copy
of the game (the same streams and memory, so the explained choice is the one it then plays).

A kind of player provides an explain function by registering it beside its decision function
(`register_explainer(decide, explain)`, at import); a seat whose decision function has none
(random, scripted, Python strategies) is not watched. Normal play never passes through here.

The coach's view (`coach`) is the same watch on a seat that someone else played: the seat's
decisions are the game's recorded answers (taken from the engine's script, as a scripted seat
takes them), and at each of them an adviser (any explaining seat, e.g. the learned player) says
on a copy what it would have done: its weighing at an action decision, its answer inside the turn
(the answer it planned for that action when the seat took the action the adviser chose, its own
rule otherwise)."""

from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int32_t
from strategies._declared cimport MAXPLAN
from sim.engine._core cimport (
    State, SeatConfig, decide_fn_t, has_option, D_ACTION, ST_EXTERNAL, HALT_PENDING, HALT_BAD_ANSWER,
)

MEASURES = ("evaluation", "mean evaluation", "visits", "model")
ADVICE = ("rule", "planned")    # how a coach's adviser answered inside a turn (Said.measure -1 - k)

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


cdef explain_fn_t explainer_of(decide_fn_t decide) noexcept nogil:
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
    int8_t measure             # Measure; an inner decision of a coached seat: -1 - its ADVICE index
    int8_t kind                # the decision's kind (D_ACTION, or one inside a turn: coached seats)
    int32_t nplan
    int8_t plan_kind[MAXPLAN]
    int32_t plan_answer[MAXPLAN]


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
    int32_t last_action        # coach: the Said of the seat's last action decision (-1: none yet)
    decide_fn_t play           # coach: the seat's own decision function (NULL: the recorded answers)
    const void* play_ctx
    int32_t ordinal            # coach: the seat's decisions inside that action's turn so far


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


cdef Said* add_said(Watch* w, State* g, int p, int kind, int choice, const Explanation* e) noexcept nogil:
    """Keep one decision (e: its explanation, or n 0); NULL when memory ran out (w.failed set)."""
    cdef Said* s
    cdef int k
    if not make_room(w, e.n):
        w.failed = 1
        return NULL
    s = &w.said[w.nsaid]
    s.turn = g.turn
    s.player = p
    s.played = choice
    s.chosen = e.chosen
    s.first = w.nalts
    s.n = e.n
    s.measure = e.measure
    s.kind = kind
    s.nplan = e.nplan
    for k in range(e.nplan):
        s.plan_kind[k] = e.plan_kind[k]
        s.plan_answer[k] = e.plan_answer[k]
    memcpy(&w.alts[w.nalts], e.alt, e.n * sizeof(Alternative))
    w.nalts += e.n
    w.nsaid += 1
    return s


cdef int watch_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """The watched seat's decisions: its own, each action decision explained first on a copy."""
    cdef Watch* w = <Watch*>ctx
    cdef Explanation* e = &w.scratch
    cdef Said* s
    cdef int choice
    if kind != D_ACTION or w.failed:
        return w.decide(w.ctx, g, p, kind)
    memcpy(w.copy, g, sizeof(State))
    e.also = -1
    w.explain(w.ctx, w.copy, p, e)
    choice = w.decide(w.ctx, g, p, kind)
    add_said(w, g, p, kind, choice, e)
    return choice


cdef int played(Watch* w, State* g, int p, int kind) noexcept nogil:
    """A coached seat's own decision: its decision function's, or the game's recorded answer (the
    engine's script, read as a scripted seat reads it: a missing answer halts the game pending, one
    out of range halts it as bad)."""
    cdef int32_t k
    if w.play != NULL:
        return w.play(w.play_ctx, g, p, kind)
    k = g.script[g.script_pos] if g.script_pos < g.nscript else -1
    if k < 0 or k >= g.nopts:
        g.halt = HALT_PENDING if g.script_pos >= g.nscript else HALT_BAD_ANSWER
        g.dkind = kind
        g.dplayer = p
        return -1
    g.script_pos += 1
    return g.opts[k]


cdef int coach_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A coached seat: its own decision (`played`), and beside it the adviser's, worked out on a
    copy taken before it (the adviser has its own context and the copy its own streams: the game
    is unchanged); at an action the move played is valued too when the adviser did not weigh it."""
    cdef Watch* w = <Watch*>ctx
    cdef Explanation* e = &w.scratch
    cdef Said* last
    cdef int k, choice, advice = 0
    if w.failed:
        return played(w, g, p, kind)
    memcpy(w.copy, g, sizeof(State))
    w.copy.script = NULL
    w.copy.nscript = 0
    if kind == D_ACTION:
        choice = played(w, g, p, kind)     # the copy was taken before: its streams are the decision's
        if choice < 0:
            return choice
        e.also = choice
        w.explain(w.ctx, w.copy, p, e)
        if add_said(w, g, p, kind, choice, e) != NULL:
            w.last_action = w.nsaid - 1
            w.ordinal = 0
        return choice
    e.n = 0
    e.nplan = 0
    last = &w.said[w.last_action] if w.last_action >= 0 else NULL
    if last != NULL and last.turn == g.turn and g.active == p:
        k = w.ordinal
        w.ordinal += 1
        if (last.played == last.chosen and k < last.nplan and last.plan_kind[k] == kind
                and has_option(g, last.plan_answer[k])):
            e.chosen = last.plan_answer[k]
            advice = 1
    if advice == 0:
        e.chosen = w.decide(w.ctx, w.copy, p, kind)
    e.measure = -1 - advice
    choice = played(w, g, p, kind)
    if choice >= 0:
        add_said(w, g, p, kind, choice, e)
    return choice


cdef class Watcher:
    """A seat watched for the replay: its decisions pass through watch_decide until release()."""
    cdef Watch w
    cdef SeatConfig seat
    cdef object owner
    cdef object adviser             # coach: keeps the adviser's context alive
    cdef public SeatConfig coached  # coach: the seat that plays the recorded answers

    def __dealloc__(self):
        free(self.w.copy)
        free(self.w.said)
        free(self.w.alts)

    def decisions(self) -> list:
        """Every explained decision: turn, player, kind, the option played, the explanation's
        choice, its measure, its alternatives as (option, score, count, allowed, first: the value
        at the end of this turn) and the answers it planned for the turn as (kind, option). A
        coached seat's decisions inside a turn have no alternatives; their measure says how the
        adviser answered ('planned' or 'rule')."""
        cdef int i, j
        cdef Said* s
        cdef Alternative* a
        out = []
        for i in range(self.w.nsaid):
            s = &self.w.said[i]
            alts = []
            for j in range(s.n):
                a = &self.w.alts[s.first + j]
                alts.append((a.option, a.score, a.count, bool(a.allowed), a.first))
            d = {"turn": s.turn, "player": s.player, "kind": s.kind, "played": s.played, "chosen": s.chosen,
                 "measure": MEASURES[s.measure] if s.measure >= 0 else ADVICE[-1 - s.measure],
                 "alternatives": alts, "plan": [(s.plan_kind[j], s.plan_answer[j]) for j in range(s.nplan)]}
            out.append(d)
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


cdef bint is_c_seat(object config):
    """Whether config is a built seat of a C player (strategies/)."""
    return isinstance(config, SeatConfig) and (<SeatConfig>config).strat == ST_EXTERNAL


cdef explain_fn_t seat_explainer(object config):
    """The explain function of a built C seat's kind of player (NULL: not a C seat, or its kind has none)."""
    return explainer_of((<SeatConfig>config).decide) if is_c_seat(config) else NULL


cdef Watcher new_watcher(SeatConfig seat, str who):
    """A Watcher of `seat`'s decision function, explained by its kind's explain function, with its
    copy of the game allocated (`who` names the caller in the MemoryError)."""
    cdef Watcher watcher = Watcher.__new__(Watcher)
    watcher.w.copy = <State*>malloc(sizeof(State))
    if watcher.w.copy == NULL:
        raise MemoryError(f"{who}: cannot allocate a copy of the game")
    watcher.w.decide = seat.decide
    watcher.w.ctx = seat.ctx
    watcher.w.explain = explainer_of(seat.decide)
    watcher.w.last_action = -1
    return watcher


def watch(object config):
    """Watch a seat (its decisions unchanged, its action decisions explained): a Watcher, or None
    when the seat's kind of player has no explain function."""
    cdef Watcher watcher
    cdef SeatConfig seat
    if seat_explainer(config) == NULL:
        return None
    seat = config
    watcher = new_watcher(seat, "explain")
    watcher.seat = seat
    watcher.owner = seat.owner
    seat.set_decider(watch_decide, &watcher.w, watcher)
    return watcher


def coach(object adviser, object player=None):
    """A seat to put in place of a game's seat: it decides as `player` (a built C seat) or, None,
    with the game's recorded answers (the engine's script, as a scripted seat), and keeps, at each
    decision, what `adviser` (a built seat of an explaining player, e.g. make_seat("learned", pool),
    never the player's own seat object) would have done there. A Watcher whose `coached` is that
    SeatConfig; None when the adviser cannot say why or the player is not a C seat."""
    cdef Watcher watcher
    cdef SeatConfig seat, own
    if seat_explainer(adviser) == NULL:
        return None
    seat = adviser
    watcher = new_watcher(seat, "coach")
    watcher.adviser = seat.owner
    if player is not None:
        if not is_c_seat(player):
            return None
        watcher.w.play = (<SeatConfig>player).decide
        watcher.w.play_ctx = (<SeatConfig>player).ctx
        watcher.owner = (<SeatConfig>player).owner
    own = SeatConfig()
    own.spec = "coached"
    own.set_decider(coach_decide, &watcher.w, watcher)
    if player is not None:            # the player's restrictions and draft, as its own seat has them
        own.spec = (<SeatConfig>player).spec
        own.restrictions = (<SeatConfig>player).restrictions
        own.set_draft_hook((<SeatConfig>player).draft_pick, (<SeatConfig>player).draft_ctx,
                           (<SeatConfig>player).draft_owner)
        # and its turn hook (the learned player's turn-start plans), or the coached game is not the game
        own.set_turn_hook((<SeatConfig>player).turn_hook, (<SeatConfig>player).turn_ctx)
    watcher.coached = own
    return watcher
