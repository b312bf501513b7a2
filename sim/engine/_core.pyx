# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The rules engine's C core. The rules live in the included files, one concern each:

- rng.pxi        shuffles on the counter-based streams (the streams: rng.pxd, _core.pxd)
- hidden.pxi     what a player cannot see, and its honest re-deal (determinization)
- zones.pxi      where cards are, active text, values, play restrictions
- decisions.pxi  decisions and the readable log
- effects.pxi    the card-step interpreter: texts, "after" windows, conditions (rules 6 and 7)
- targets.pxi    selectors: which cards and lines a step may act on (6.3)
- verbs.pxi      the verbs of the card language (docs/cards.md)
- plays.pxi      legal plays and landing a played card (rule 5)
- primitives.pxi draw, discard, flip, delete, return, shift, rearrange
- turn.pxi       draft and turn structure (rules 1, 3 and 4)

This module only adds the thin Python-facing wrappers used by `sim.game` and `sim.batch`.
Shared declarations other extensions cimport: _core.pxd (the game, halts, streams,
determinization), rng.pxd (splitmix64), options.pxd (the encoding of decision options).
"""

from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcmp, memcpy, memset
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from sim.engine.options cimport (
    OPT_DONE, OPT_REFRESH, OPT_SKIP, noted_box, noted_card, noted_option, play_card_of, play_face_up,
    play_line_of, play_opp_side, play_option, rearrange_option, rearrange_perm, rearrange_side,
)
from sim.engine.rng cimport mix64, splitmix64, stream_word
import numpy as np
cimport numpy as cnp

cnp.import_array()

include "rng.pxi"
include "hidden.pxi"
include "zones.pxi"
include "decisions.pxi"
include "effects.pxi"
include "targets.pxi"
include "verbs.pxi"
include "plays.pxi"
include "primitives.pxi"
include "turn.pxi"
include "invariants.pxi"
include "_vocab_impl.pxi"

MAX_PROTOCOLS = MAXPROTO     # a pool's protocols: the engine keeps sets of them as 64-bit masks

CARD_FIELDS = (
    "protocol", "value", "trig", "by_opp", "during", "here", "cover_same", "step_start",
    "step_len", "passive", "facedown_value", "line_value", "line_value_opp", "line_value_cond",
    "per_facedown", "per_hand", "per_opp_card", "self_play", "deny", "deny_whose", "deny_face",
    "deny_by", "deny_line", "deny_values", "deny_protocol", "deny_covered",
)


cdef class CorePool:
    """Compiled card tables in C memory, shared read-only by every game of a pool."""
    cdef CardDef* cards
    cdef Step* steps
    cdef int16_t* proto_cards
    cdef public int ncards, nsteps, nprotocols

    def __cinit__(self, list cards, list steps, list proto_cards):
        cdef int i, b
        cdef CardDef* d
        if len(proto_cards) > MAXPROTO:
            raise ValueError(f"a pool holds at most {MAXPROTO} protocols, not {len(proto_cards)}")
        self.ncards = len(cards)
        self.nsteps = len(steps)
        self.nprotocols = len(proto_cards)
        self.cards = <CardDef*>calloc(max(1, self.ncards), sizeof(CardDef))
        self.steps = <Step*>calloc(max(1, self.nsteps), sizeof(Step))
        self.proto_cards = <int16_t*>calloc(max(1, self.nprotocols * 6), sizeof(int16_t))
        if self.cards == NULL or self.steps == NULL or self.proto_cards == NULL:
            raise MemoryError(f"cannot allocate the card tables ({self.ncards} cards, {self.nsteps} steps)")
        for i, cd in enumerate(cards):
            d = &self.cards[i]
            d.protocol = cd["protocol"]
            d.value = cd["value"]
            for b in range(3):
                d.trig[b] = cd["trig"][b]
                d.by_opp[b] = cd["by_opp"][b]
                d.during[b] = cd["during"][b]
                d.here[b] = cd["here"][b]
                d.cover_same[b] = cd["cover_same"][b]
                d.step_start[b] = cd["step_start"][b]
                d.step_len[b] = cd["step_len"][b]
                d.passive[b] = cd["passive"][b]
                d.deny[b] = cd["deny"][b]
                d.deny_whose[b] = cd["deny_whose"][b]
                d.deny_face[b] = cd["deny_face"][b]
                d.deny_by[b] = cd["deny_by"][b]
                d.deny_line[b] = cd["deny_line"][b]
                d.deny_values[b] = cd["deny_values"][b]
                d.deny_protocol[b] = cd["deny_protocol"][b]
                d.deny_covered[b] = cd["deny_covered"][b]
                d.trig_bits |= 1u << d.trig[b]
                d.any_passive |= d.passive[b]
            d.facedown_value = cd["facedown_value"]
            d.line_value = cd["line_value"]
            d.line_value_opp = cd["line_value_opp"]
            d.per_facedown = cd["per_facedown"]
            d.line_value_cond = cd["line_value_cond"]
            d.per_hand = cd["per_hand"]
            d.per_opp_card = cd["per_opp_card"]
            d.self_play = cd["self_play"]
        for i, st in enumerate(steps):
            if not 0 <= st["verb"] < NVERBS:
                raise ValueError(f"step {i}: verb code {st['verb']} is not one this engine was built with")
            step_from_record(&self.steps[i], st)
        for i, six in enumerate(proto_cards):
            for b in range(6):
                self.proto_cards[i * 6 + b] = six[b]

    def __dealloc__(self):
        free(self.cards)
        free(self.steps)
        free(self.proto_cards)


cdef void no_restrictions(SeatRestrictions* r) noexcept nogil:
    """A seat that may play anything (the avoid lists empty: -1)."""
    cdef int k
    memset(r, 0, sizeof(SeatRestrictions))
    for k in range(NAVOID):
        r.avoid_faceup[k] = -1
        r.avoid_card[k] = -1
        r.avoid_protocol[k] = -1


cdef class SeatConfig:
    def __cinit__(self):
        no_restrictions(&self.restrictions)
        self.strat = ST_RANDOM
        self.decide = NULL
        self.ctx = NULL
        self.owner = None
        self.turn_hook = NULL
        self.turn_ctx = NULL
        self.draft_pick = NULL
        self.draft_ctx = NULL
        self.draft_owner = None
        self.spec = "random"

    cdef void set_decider(self, decide_fn_t decide, const void* ctx, object owner):
        """Decisions go to decide(ctx, ...), a strategy's C function; owner keeps ctx alive."""
        self.strat = ST_EXTERNAL
        self.decide = decide
        self.ctx = ctx
        self.owner = owner

    cdef void set_turn_hook(self, decide_fn_t hook, const void* ctx):
        """At the start of every turn of a real game (never in a lookahead copy) hook(ctx, g, p, -1) is
        called: a restartable point where the seat can plan the choices it will be asked before its
        next action decision (strategies/_learned.pyx, `plan_ahead`). ctx must live as long as the
        decider's owner (a decider wrapped later, as the explain and tally wrappers do, keeps it)."""
        self.turn_hook = hook
        self.turn_ctx = ctx

    cdef void set_draft_hook(self, decide_fn_t pick, const void* ctx, object owner):
        """Draft decisions go to pick(ctx, ...) whatever the seat's strategy (not a scripted seat's);
        owner keeps ctx alive."""
        self.draft_pick = pick
        self.draft_ctx = ctx
        self.draft_owner = owner

    def set_restrictions(self, int flags, avoid_faceup=(), avoid_card=(), avoid_protocol=()):
        """Restricted play: flags (R_*) and card/protocol ids the seat never plays."""
        if max(len(avoid_faceup), len(avoid_card), len(avoid_protocol)) > NAVOID:
            raise ValueError(f"at most {NAVOID} avoided cards or protocols per seat")
        self.restrictions.restrict = flags
        self.restrictions.restricted = bool(flags or avoid_faceup or avoid_card or avoid_protocol)
        for k, v in enumerate(avoid_faceup):
            self.restrictions.avoid_faceup[k] = v
        for k, v in enumerate(avoid_card):
            self.restrictions.avoid_card[k] = v
        for k, v in enumerate(avoid_protocol):
            self.restrictions.avoid_protocol[k] = v

    def set_python(self, obj):
        """Decisions go to obj._choose(view, player, kind, options) (see strategies/user.py)."""
        self.strat = ST_PYTHON
        self.decide = NULL
        self.ctx = <void*>obj
        self.owner = obj


cdef void seat_apply(State* g, int p, object seat) noexcept:
    """Install a seat's strategy in a game: an int (ST_RANDOM/ST_SCRIPT) or a SeatConfig."""
    cdef SeatConfig sc
    if isinstance(seat, SeatConfig):
        sc = <SeatConfig>seat
        g.strat[p] = sc.strat
        g.decide[p] = sc.decide
        g.seat_ctx[p] = sc.ctx
        g.turn_hook[p] = sc.turn_hook if sc.strat == ST_EXTERNAL else NULL
        g.turn_ctx[p] = sc.turn_ctx
        g.restrictions[p] = sc.restrictions
        g.restricted[p] = sc.restrictions.restricted
        g.draft_pick[p] = sc.draft_pick
        g.draft_ctx[p] = sc.draft_ctx
    else:
        g.strat[p] = seat
        g.turn_hook[p] = NULL


_python_errors = []


cdef int _call_python_strategy(State* g, int player, int kind) except? -2:
    cdef int i
    obj = <object><void*>g.seat_ctx[player]
    opts = [g.opts[i] for i in range(g.nopts)]
    view = StateView.wrap(g)
    try:
        idx = obj._choose(view, player, kind, opts)
    finally:
        view.release()
    if not isinstance(idx, int) or not 0 <= idx < g.nopts:
        raise ValueError(f"strategy {obj!r} returned {idx!r}; expected an option index 0..{g.nopts - 1}")
    return g.opts[idx]


cdef str run_outcome(int halt):
    """What CoreState.run reports for the halt a replay stopped at; errors are raised."""
    if halt == HALT_PYTHON_ERROR:
        raise _python_errors[0]
    if halt == HALT_NO_MEMORY:
        raise MemoryError("the engine could not grow the game's log or event buffer")
    if halt == HALT_VIOLATION:
        return "violation"
    if halt == HALT_BAD_ANSWER:
        return "bad"
    if halt == HALT_HORIZON:
        return "turn_end"
    if halt != HALT_NONE:
        return "pending"
    return "over"


cdef class StateView:
    """A borrowed, read-only view of a running game, valid only during one decision."""
    cdef State* g

    @staticmethod
    cdef StateView wrap(State* g):
        cdef StateView v = StateView.__new__(StateView)
        v.g = g
        return v

    def release(self):
        self.g = NULL

    def state(self):
        if self.g == NULL:
            raise RuntimeError("this game view is no longer valid (use it only inside choose())")
        return state_of(self.g)

    @property
    def seed(self):
        """The seed of the game being played (named in a user strategy's errors)."""
        if self.g == NULL:
            raise RuntimeError("this game view is no longer valid (use it only inside choose())")
        return self.g.seed


cdef void game_init(State* g, CorePool pool, uint64_t seed, int turn_cap) noexcept:
    memset(g, 0, sizeof(State))
    g.cdefs = pool.cards
    g.steps = pool.steps
    g.proto_cards = pool.proto_cards
    g.nprotocols = pool.nprotocols
    g.seed = seed
    g.turn_cap = turn_cap
    g.control = -1
    g.winner = -1
    g.loop_card = -1
    g.first_player = -1
    g.cur_src = -1
    g.cur_dec_src = -1
    g.compiling_line = -1
    g.forced = NO_FORCED
    g.horizon_turn = NO_HORIZON
    g.field_ver = 1
    g.cache_ver = 0
    for p in range(2):
        no_restrictions(&g.restrictions[p])
    g.no_compile_turn[0] = -1
    g.no_compile_turn[1] = -1
    for p in range(2):
        for k in range(3):
            g.proto[p][k] = -1
    for c in range(MAXCARDS):
        g.def_id[c] = 0
        g.zone[c] = Z_OUT
        g.owner[c] = c // 18
        g.side[c] = c // 18
        g.line[c] = -1


cdef inline void game_begin(State* g, int first_player, int fixed) noexcept nogil:
    """Coin for the first player unless fixed, then the draft (or the deal for fixed trios)."""
    if first_player < 0:
        g.first_player = rng_below(g, STREAM_GAME, 2)
    else:
        g.first_player = first_player
    if fixed:
        deal(g)
    else:
        g.phase = PH_DRAFT


cdef dict state_of(State* g):
    cdef int p, l, i, c
    return {
        "cdef": [g.def_id[c] for c in range(MAXCARDS)],
        "owner": [g.owner[c] for c in range(MAXCARDS)],
        "face_up": [g.face_up[c] for c in range(MAXCARDS)],
        "zone": [g.zone[c] for c in range(MAXCARDS)],
        "deck": [[g.deck[p][i] for i in range(g.ndeck[p] - 1, -1, -1)] for p in range(2)],
        "hand": [[g.hand[p][i] for i in range(g.nhand[p])] for p in range(2)],
        "trash": [[g.trash[p][i] for i in range(g.ntrash[p])] for p in range(2)],
        "stacks": [[[g.stack[p][l][i] for i in range(g.nstack[p][l])] for l in range(3)] for p in range(2)],
        "protocols": [[g.proto[p][l] for l in range(3)] for p in range(2)],
        "dealt": [[g.dealt[p][l] for l in range(3)] for p in range(2)],
        "picks": [g.drafted[k] for k in range(6)],      # pick order, when the game drafted
        "compiled": [[g.compiled[p][l] for l in range(3)] for p in range(2)],
        "values": [[line_value(g, p, l) for l in range(3)] for p in range(2)],
        "card_values": [card_value(g, c) for c in range(MAXCARDS)],
        "control": g.control,
        "active": g.active,
        "first_player": g.first_player,
        "phase": g.phase,
        "turn": g.turn,
        "turn_cap": g.turn_cap,
        "winner": g.winner,
        "end_reason": g.end_reason,
        "loop_card": g.loop_card,
        "violation": g.violation,
        "plays_up": [g.plays_up[0], g.plays_up[1]],
        "plays_down": [g.plays_down[0], g.plays_down[1]],
        "refreshes": [g.refreshes[0], g.refreshes[1]],
        "control_gains": [g.control_gains[0], g.control_gains[1]],
        "compiles": [(g.ce_turn[i], g.ce_player[i], g.ce_line[i], g.ce_proto[i], g.ce_recompile[i]) for i in range(g.nce)],
        "no_compile_turn": [g.no_compile_turn[0], g.no_compile_turn[1]],
    }


cdef class CoreState:
    """One game: a snapshot of its set-up position and a working copy replayed from it.

    Decisions taken from outside (Python strategies, scenario scripts, the step API) are given as
    a list of option indices; the engine replays them from the snapshot and halts at the next
    decision it has no answer for. Replays are cheap (a whole game is well under a millisecond)
    and make every position reachable exactly, with no resumable C stack."""
    cdef State start
    cdef State g
    cdef CorePool pool
    cdef int32_t* answers
    cdef public int nanswers

    def __cinit__(self, CorePool pool, uint64_t seed, int turn_cap=200):
        self.pool = pool
        game_init(&self.start, pool, seed, turn_cap)
        game_init(&self.g, pool, seed, turn_cap)
        self.answers = NULL

    def __dealloc__(self):
        free(self.g.log)
        free(self.answers)

    # -- set-up ------------------------------------------------------------------------------
    def begin(self, int first_player=-1, protocols=None):
        """Start a normal game: draft (protocols None) or fixed trios [[a,b,c],[d,e,f]]."""
        cdef int p, k
        if protocols is not None:
            for p in range(2):
                for k in range(3):
                    self.start.proto[p][k] = protocols[p][k]
            self.start.ndrafted = 6
        game_begin(&self.start, first_player, protocols is not None)

    def place(self, dict pos):
        """Set up an exact position (scenarios): see sim/scenario.py for the dict layout."""
        cdef State* g = &self.start
        cdef int p, k, l, c
        g.active = pos["active"]
        g.first_player = pos.get("first_player", 0)
        g.turn = pos.get("turn", 1)
        g.phase = pos["phase"]
        g.control = pos.get("control", -1)
        for p in range(2):
            g.no_compile_turn[p] = pos["no_compile_turn"][p]
            for k in range(3):
                g.proto[p][k] = pos["protocols"][p][k]
                g.compiled[p][k] = pos["compiled"][p][k]
                g.dealt[p][k] = pos["protocols"][p][k]
        g.ndrafted = 6
        for c, d in pos["cdef"].items():
            g.def_id[c] = d
        for c, o in pos["owner"].items():
            g.owner[c] = o
        for p in range(2):
            g.ndeck[p] = 0
            for c in reversed(pos["deck"][p]):      # given top first; stored top last
                g.deck[p][g.ndeck[p]] = c
                g.ndeck[p] += 1
                g.zone[c] = Z_DECK
                g.side[c] = p
            g.nhand[p] = 0
            for c in pos["hand"][p]:
                put_hand(g, p, c)
            g.ntrash[p] = 0
            for c in pos["trash"][p]:
                g.trash[p][g.ntrash[p]] = c
                g.ntrash[p] += 1
                g.zone[c] = Z_TRASH
                g.side[c] = p
                g.face_up[c] = 1
            for l in range(3):
                g.nstack[p][l] = 0
                for c, up in pos["stacks"][p][l]:
                    g.stack[p][l][g.nstack[p][l]] = c
                    g.nstack[p][l] += 1
                    g.zone[c] = Z_FIELD
                    g.side[c] = p
                    g.line[c] = l
                    g.face_up[c] = up
        note_restrictions(g)
        touch(g)

    # -- running -----------------------------------------------------------------------------
    def run(self, answers, strategies=(ST_SCRIPT, ST_SCRIPT), bint logging=False, bint checking=False,
            int until_turn=-1):
        """Replay from the snapshot with these answers; returns 'pending', 'over' or 'bad'.

        With `until_turn` >= 1, stop when that turn ends (after its End phase, before the next
        turn starts) and return 'turn_end': the state is then the turn boundary (replay --states).
        It uses the lookahead horizon the turn loop already checks, so the batch path is unchanged."""
        cdef int i, n = len(answers)
        free(self.g.log)
        memcpy(&self.g, &self.start, sizeof(State))
        self.g.log = NULL
        self.g.nlog = 0
        self.g.caplog = 0
        self.g.logging = logging
        self.g.checking = checking
        self.g.horizon_turn = until_turn if until_turn >= 1 else NO_HORIZON
        free(self.answers)
        self.answers = <int32_t*>malloc(max(1, n) * sizeof(int32_t))
        if self.answers == NULL:
            self.nanswers = 0
            raise MemoryError(f"cannot allocate {n} answers")
        for i in range(n):
            self.answers[i] = answers[i]
        self.nanswers = n
        self.g.script = self.answers
        self.g.nscript = n
        self.g.script_pos = 0
        seat_apply(&self.g, 0, strategies[0])
        seat_apply(&self.g, 1, strategies[1])
        del _python_errors[:]
        with nogil:
            game_run(&self.g)
        return run_outcome(self.g.halt)

    def pending(self):
        """(player, kind, options) of the decision the engine halted at."""
        cdef int i
        return (self.g.dplayer, self.g.dkind, [self.g.opts[i] for i in range(self.g.nopts)])

    def asking(self):
        """(card, box) whose text asks the pending decision, or (-1, -1) for a turn's own decisions
        (the action, a compile, control, the draft)."""
        if self.g.dsrc < 0:
            return (-1, -1)
        return (self.g.dsrc, self.g.dbox)

    def check(self, bint boundary=False):
        """Invariant violation code of the current position (0: none); see invariants.pxi."""
        return check_invariants(&self.g, boundary)

    def decide_with(self, SeatConfig seat, long permute_seed=-1):
        """What `seat` would answer at the pending decision; with permute_seed >= 0, first
        re-deal everything the deciding player cannot see (honesty tests)."""
        cdef State* tmp
        cdef int p = self.g.dplayer, kind = self.g.dkind, r
        cdef uint64_t counter = 0
        if not self.g.halt:
            raise RuntimeError("no pending decision")
        tmp = <State*>malloc(sizeof(State))
        if tmp == NULL:
            raise MemoryError("cannot allocate a game")
        memcpy(tmp, &self.g, sizeof(State))
        tmp.halt = HALT_NONE
        tmp.log = NULL
        tmp.logging = 0
        tmp.checking = 0
        if permute_seed >= 0:           # the bots' own re-deal, from a stream of its own
            redeal_hidden(tmp, tmp, p, <uint64_t>permute_seed, &counter, KEY_BOT)
        seat_apply(tmp, p, seat)
        try:
            with nogil:
                r = ask(tmp, p, kind)
        finally:
            free(tmp)
        return r

    def used_answers(self):
        return self.g.script_pos

    # -- reading the state -------------------------------------------------------------------
    def state(self):
        """The whole state as plain Python data (omniscient: tests and the scenario runner)."""
        return state_of(&self.g)

    def log_entries(self):
        cdef int i
        cdef LogEntry* e
        out = []
        for i in range(self.g.nlog):
            e = &self.g.log[i]
            out.append((e.kind, e.depth, e.player, e.card, e.target, e.a, e.b))
        return out


def play_batch(CorePool pool, cnp.uint64_t[::1] seeds, int turn_cap, int first_player,
               cnp.int16_t[:, ::1] protocols, dict out, int max_compiles, bint checking=False,
               bint events=False, tuple seats=(None, None)):
    """Play whole games at C speed with the built-in random strategy, without the GIL.

    Fills the preallocated column arrays in `out` (one row per seed): see sim/batch.py. With
    `events`, returns the dataset events of all games as numpy columns (row = game index)."""
    cdef Py_ssize_t n = seeds.shape[0], i, j
    cdef State* g = NULL
    cdef State* proto_game = NULL
    cdef cnp.int8_t[::1] winner = out["winner"]
    cdef cnp.int8_t[::1] first = out["first_player"]
    cdef cnp.int8_t[::1] reason = out["end_reason"]
    cdef cnp.int16_t[::1] loop_card = out["loop_card"]
    cdef cnp.int16_t[::1] turns = out["turns"]
    cdef cnp.int16_t[:, ::1] drafted = out["protocols"]
    cdef cnp.int16_t[:, ::1] picks = out["picks"]           # protocol ids in pick order; -1: not drafted
    cdef cnp.int16_t[:, ::1] plays_up = out["plays_up"]
    cdef cnp.int16_t[:, ::1] plays_down = out["plays_down"]
    cdef cnp.int16_t[:, ::1] refreshes = out["refreshes"]
    cdef cnp.int16_t[:, ::1] control_gains = out["control_gains"]
    cdef cnp.int16_t[::1] ncomp = out["n_compiles"]
    cdef cnp.int16_t[:, ::1] ce_turn = out["compile_turn"]
    cdef cnp.int8_t[:, ::1] ce_player = out["compile_player"]
    cdef cnp.int8_t[:, ::1] ce_line = out["compile_line"]
    cdef cnp.int16_t[:, ::1] ce_proto = out["compile_protocol"]
    cdef cnp.int8_t[:, ::1] ce_re = out["compile_recompile"]
    cdef cnp.int8_t[::1] violation = out["violation"]
    cdef bint fixed = protocols.shape[0] > 0
    cdef int p, k, m
    cdef EventRec* allev = NULL
    cdef int32_t* allgame = NULL
    cdef Py_ssize_t nall = 0, capall = 0
    cdef bint no_memory = False
    try:
        g = <State*>malloc(sizeof(State))
        proto_game = <State*>calloc(1, sizeof(State))
        if g == NULL or proto_game == NULL:
            raise MemoryError("cannot allocate a game")
        game_init(proto_game, pool, 0, turn_cap)
        for p in range(2):
            if seats[p] is not None:
                seat_apply(proto_game, p, seats[p])
        del _python_errors[:]
        if events:
            capall = 1 << 16
            proto_game.evbuf = <EventRec*>malloc(1024 * sizeof(EventRec))
            allev = <EventRec*>malloc(capall * sizeof(EventRec))
            allgame = <int32_t*>malloc(capall * sizeof(int32_t))
            if proto_game.evbuf == NULL or allev == NULL or allgame == NULL:
                raise MemoryError("cannot allocate the event buffers")
            proto_game.evcap = 1024
        with nogil:
            for i in range(n):
                memcpy(g, proto_game, sizeof(State))
                g.nev = 0
                g.seed = seeds[i]
                if fixed:
                    for p in range(2):
                        for k in range(3):
                            g.proto[p][k] = protocols[i % protocols.shape[0], p * 3 + k]
                    g.ndrafted = 6
                g.checking = checking
                game_begin(g, first_player, fixed)
                game_run(g)
                if events:
                    proto_game.evbuf = g.evbuf          # keep the (possibly grown) buffer
                    proto_game.evcap = g.evcap
                if g.halt == HALT_PYTHON_ERROR:
                    break
                if g.halt == HALT_NO_MEMORY:
                    no_memory = True
                    break
                violation[i] = g.violation
                winner[i] = g.winner
                first[i] = g.first_player
                reason[i] = g.end_reason
                loop_card[i] = g.loop_card
                turns[i] = g.turn if g.turn <= g.turn_cap else g.turn_cap
                for k in range(6):
                    picks[i, k] = -1 if fixed else g.drafted[k]
                for p in range(2):
                    for k in range(3):
                        drafted[i, p * 3 + k] = g.dealt[p][k]
                    plays_up[i, p] = g.plays_up[p]
                    plays_down[i, p] = g.plays_down[p]
                    refreshes[i, p] = g.refreshes[p]
                    control_gains[i, p] = g.control_gains[p]
                m = g.nce if g.nce < max_compiles else max_compiles
                ncomp[i] = g.nce
                for j in range(m):
                    ce_turn[i, j] = g.ce_turn[j]
                    ce_player[i, j] = g.ce_player[j]
                    ce_line[i, j] = g.ce_line[j]
                    ce_proto[i, j] = g.ce_proto[j]
                    ce_re[i, j] = g.ce_recompile[j]
                if events:
                    if nall + g.nev > capall:
                        while nall + g.nev > capall:
                            capall *= 2
                        if not grow_events(&allev, &allgame, capall):
                            no_memory = True
                            break
                    memcpy(&allev[nall], g.evbuf, g.nev * sizeof(EventRec))
                    for j in range(g.nev):
                        allgame[nall + j] = <int32_t>i
                    nall += g.nev
        if _python_errors:
            raise _python_errors[0]
        if no_memory:
            raise MemoryError("the engine could not grow the event buffers")
        if events:
            return _event_columns(allev, allgame, nall)
        return None
    finally:
        free(g)
        if proto_game != NULL:
            free(proto_game.evbuf)
        free(allev)
        free(allgame)
        free(proto_game)


cdef bint grow_events(EventRec** ev, int32_t** game, Py_ssize_t cap) noexcept nogil:
    """Grow the batch's event columns to `cap` rows; False (both still valid) when out of memory."""
    cdef EventRec* e = <EventRec*>realloc(ev[0], cap * sizeof(EventRec))
    cdef int32_t* k
    if e == NULL:
        return False
    ev[0] = e
    k = <int32_t*>realloc(game[0], cap * sizeof(int32_t))
    if k == NULL:
        return False
    game[0] = k
    return True


cdef dict _event_columns(EventRec* ev, int32_t* game, Py_ssize_t n):
    cdef cnp.int32_t[::1] gi = np.empty(n, np.int32)
    cdef cnp.int16_t[::1] turn = np.empty(n, np.int16)
    cdef cnp.int8_t[::1] player = np.empty(n, np.int8)
    cdef cnp.int8_t[::1] kind = np.empty(n, np.int8)
    cdef cnp.int16_t[::1] card = np.empty(n, np.int16)
    cdef cnp.int8_t[::1] line = np.empty(n, np.int8)
    cdef cnp.int8_t[::1] extra = np.empty(n, np.int8)
    cdef Py_ssize_t i
    for i in range(n):
        gi[i] = game[i]
        turn[i] = ev[i].turn
        player[i] = ev[i].player
        kind[i] = ev[i].kind
        card[i] = ev[i].card
        line[i] = ev[i].line
        extra[i] = ev[i].extra
    return {"game": np.asarray(gi), "turn": np.asarray(turn), "player": np.asarray(player),
            "kind": np.asarray(kind), "card": np.asarray(card), "line": np.asarray(line),
            "extra": np.asarray(extra)}


# -- the shared definitions, for Python ------------------------------------------------------

def mix64_array(x) -> np.ndarray:
    """splitmix64's finaliser (rng.pxd) on every element of a uint64 array (wrapping arithmetic)."""
    return _map_words(x, False)


def splitmix64_array(x) -> np.ndarray:
    """splitmix64's output for every state of a uint64 array (rng.pxd): the finaliser of the state
    plus the golden-ratio increment."""
    return _map_words(x, True)


cdef object _map_words(x, bint advance):
    """mix64 (or splitmix64 when `advance`) element-wise, keeping the input's shape."""
    out = np.array(x, dtype=np.uint64, order="C")         # a copy: the input is never written
    cdef cnp.uint64_t[::1] v = out.reshape(-1)
    cdef Py_ssize_t i
    with nogil:
        for i in range(v.shape[0]):
            v[i] = splitmix64(v[i]) if advance else mix64(v[i])
    return out


def unpack_play(int opt) -> tuple:
    """(card, line, face_up, opponent's side) of an action or play option (options.pxd)."""
    return (play_card_of(opt), play_line_of(opt), play_face_up(opt), play_opp_side(opt))


def unpack_noted(int opt) -> tuple:
    """(card, box) of an "order" option: which noted text resolves next (options.pxd)."""
    return (noted_card(opt), noted_box(opt))


def unpack_rearrange(int opt) -> tuple:
    """(side, permutation index into constants()["perms"]) of a rearrange option (options.pxd)."""
    return (rearrange_side(opt), rearrange_perm(opt))


def constants():
    """Enum values shared with the Python side. The words and codes are the vocabulary's
    (sim/cards/vocabulary/: verbs, counts, log kinds and ENUMS, which the build turns into
    _vocab_*.pxi); the values here are the compiled ones."""
    words = {key: dict(codes) for key, codes in ENUM_WORDS.items()}
    return {
        "verbs": dict(VERB_CODES),          # engine verb name -> code (sim/cards/vocabulary/verbs.py)
        "count": dict(COUNT_KINDS),
        **words,
        "cond_cmp": COND_CMP,
        "end_reason": {code: word for word, code in words["end_reason"].items()},
        "event_kind": {code: word for word, code in words["event_kind"].items()},
        "log": dict(LOG_KINDS),
        "strategy": {"random": ST_RANDOM, "script": ST_SCRIPT},
        "opt_refresh": OPT_REFRESH, "opt_done": OPT_DONE, "opt_skip": OPT_SKIP,
        "perms": [[PERMS[i][j] for j in range(3)] for i in range(6)],
    }
