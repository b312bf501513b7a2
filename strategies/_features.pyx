# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The learned player's inputs: a feature vector of a position from seat p's view, and the C
recorder that collects them at every turn end of real games (the trainer's examples).

Honest: the vector reads only what p may see - p's own hand, the public field (face-up cards,
the Compiled marks, how many cards each stack holds and how many lie face-down), the sizes of
hands, decks and trashes, control and the turn. Never the opponent's hand, the identities of
face-down cards or any deck order. Line values are the engine's, which count a face-down card
by the public rule, whoever owns it.

From card data, not identities: a card enters only through its value, its protocol (whether it
can be played face-up) and the verbs of its compiled steps, so a designer's variant (a value, a
verb, a count) changes what the model sees without retraining a per-card table.

The vector's layout (FEATURES) and each entry's scale are declared once, in strategies/declared.py
(its C constants: the generated _declared.pxd); features() writes the entries in exactly that
order, and FEATURE_DIGEST (names and version) is what a model file must match."""

import numpy as np

from libc.stdint cimport int8_t, int16_t, int32_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy
from sim.engine._core cimport (
    State, SeatConfig, decide_fn_t, game_run, line_values, copy_for_lookahead, bot_below, seat_stream,
    D_ACTION, ST_EXTERNAL, SP_ANYWHERE,
)
from strategies._bots cimport prepare_copy, default_decide
from strategies._explain cimport Explanation, explain_fn_t, explainer_of, M_VISITS
from strategies._declared cimport (
    NFAMILY, FS_LINE_VALUE, FS_LINE_VALUE_LO, FS_LINE_VALUE_HI, FS_LINE_LEAD, FS_LINE_LEAD_LO, FS_LINE_LEAD_HI,
    FS_STACK, FS_STACK_LO, FS_STACK_HI, FS_FACEDOWN, FS_FACEDOWN_LO, FS_FACEDOWN_HI, FS_COMPILED, FS_HAND, FS_HAND_LO,
    FS_HAND_HI, FS_PILE, FS_TURN, FS_TURN_LO, FS_TURN_HI, FS_VERBS, FS_HAND_VALUE, FS_PLAYABLE, FS_MAY,
)
from strategies.declared import FEATURE_DIGEST, FEATURE_VERSION, FEATURES    # the trainer's and model's names

include "_declared.pxi"
include "_features_policy.pxi"     # the policy target's rows: the search's visit shares at its root decisions

VECTOR_LENGTH = NFEAT       # the C vector's length (a test checks it is len(FEATURES) and what features() writes)
assert len(FEATURES) == NFEAT, (len(FEATURES), NFEAT)

include "_families.pxi"      # FAMILY_OF, clip, card_verbs: a card's verbs by family


cdef void features(State* g, int p, float* out) noexcept nogil:
    """Seat p's view of the position, in FEATURES order (NFEAT floats, each roughly 0..1)."""
    cdef int lv[2][3]
    cdef int s, t, l, i, c, d, k = 0, n, down, v, ov, may = 0, playable = 0, vmax = 0, vmin = 99, vsum = 0
    cdef int side[2]
    line_values(g, lv)
    side[0] = p
    side[1] = 1 - p
    for s in range(2):
        t = side[s]
        for l in range(3):
            v = lv[t][l]
            ov = lv[1 - t][l]
            n = g.nstack[t][l]
            down = 0
            for i in range(n):
                down += g.face_up[g.stack[t][l][i]] == 0
            out[k] = clip(v, FS_LINE_VALUE_LO, FS_LINE_VALUE_HI) / FS_LINE_VALUE
            out[k + 1] = g.compiled[t][l] != 0
            out[k + 2] = clip(v - ov, FS_LINE_LEAD_LO, FS_LINE_LEAD_HI) / FS_LINE_LEAD
            out[k + 3] = (g.compiled[t][l] == 0) & (v >= 10) & (v > ov)
            out[k + 4] = clip(n, FS_STACK_LO, FS_STACK_HI) / FS_STACK
            out[k + 5] = clip(down, FS_FACEDOWN_LO, FS_FACEDOWN_HI) / FS_FACEDOWN
            k += 6
    for s in range(2):
        t = side[s]
        out[k] = (g.compiled[t][0] != 0) + (g.compiled[t][1] != 0) + (g.compiled[t][2] != 0)
        out[k] /= FS_COMPILED
        out[k + 1] = clip(g.nhand[t], FS_HAND_LO, FS_HAND_HI) / FS_HAND
        out[k + 2] = g.ndeck[t] / FS_PILE
        out[k + 3] = g.ntrash[t] / FS_PILE
        k += 4
    out[k] = g.control == p
    out[k + 1] = g.control == 1 - p
    out[k + 2] = g.control < 0
    out[k + 3] = clip(g.turn, FS_TURN_LO, FS_TURN_HI) / FS_TURN
    out[k + 4] = g.active == p
    k += 5
    for i in range(3 * NFAMILY):
        out[k + i] = 0
    for i in range(g.nhand[p]):
        d = g.def_id[g.hand[p][i]]
        may += card_verbs(g, d, &out[k])
        v = g.cdefs[d].value
        vsum += v
        vmax = v if v > vmax else vmax
        vmin = v if v < vmin else vmin
        if g.cdefs[d].self_play & SP_ANYWHERE:
            playable += 1
        else:
            for l in range(3):
                if g.cdefs[d].protocol == g.proto[p][l] or g.cdefs[d].protocol == g.proto[1 - p][l]:
                    playable += 1
                    break
    for s in range(2):
        t = side[s]
        for l in range(3):
            n = g.nstack[t][l]
            if n > 0:
                c = g.stack[t][l][n - 1]
                if g.face_up[c]:
                    card_verbs(g, g.def_id[c], &out[k + NFAMILY * (1 + s)])
    for i in range(3 * NFAMILY):
        out[k + i] /= FS_VERBS
    k += 3 * NFAMILY
    n = g.nhand[p]
    out[k] = (vsum / <float>n) / FS_HAND_VALUE if n > 0 else 0
    out[k + 1] = vmax / FS_HAND_VALUE
    out[k + 2] = vmin / FS_HAND_VALUE if n > 0 else 0
    out[k + 3] = playable / FS_PLAYABLE
    out[k + 4] = may / FS_MAY


# -- the trainer's examples: one row per turn end and seat view ------------------------------------
# A recorder wraps both seats' deciders and turn hooks. At an action decision of the real game it
# takes the action (the seat's own, or with probability `explore` a uniform one from the seat's
# stream) and marks the turn; at the next turn's start (the engine's turn hook, called in real games
# only, before the seats' own hooks) the position is that turn's end, and there it writes both seats'
# feature vectors, read from a copy whose turn and active seat are set back to the turn that ended
# (the real game is only read). Nothing is replayed and no seat is asked anything it would not be
# asked without the recorder, so the games are the seats' own (a seat that follows a plan, the
# learned player or ismcts with choices=model, finds every planned answer where it would).
# Turns whose action had one legal option (the engine takes it without asking) give no row, nor
# does a game's last turn (won there, or the turn cap reached): the model is never asked after it.
# With `policy` (the policy target), a seat's action decision is also recorded as the search weighed
# it: each root action's visit share with the features where that action's turn ends
# (_features_policy.pxi).

cdef struct RecorderCtx:
    decide_fn_t inner[2]
    const void* inner_ctx[2]
    decide_fn_t inner_turn[2]   # the seats' own turn hooks (NULL: none), called after the row is written
    const void* inner_turn_ctx[2]
    uint64_t mark_seed          # the real game's turn whose end gives rows: an action decision was asked
    int16_t mark_turn           # (-1: none)
    uint32_t explore            # probability of a uniform action, in 2**-24 units
    float* rows                 # n x NFEAT
    uint64_t* seed
    int16_t* turn
    int8_t* player
    int32_t n
    int32_t cap
    int8_t failed               # a buffer could not grow
    int8_t policy               # also the policy rows (PolicyRows) of each seat's root decisions
    explain_fn_t explain[2]     # with policy: each seat's explain function (it decides in place of inner)
    PolicyRows pol


cdef bint grow(RecorderCtx* r) noexcept nogil:
    cdef int32_t cap = r.cap * 2 if r.cap > 0 else 4096
    if not (resize(<void**>&r.rows, <size_t>cap * NFEAT * sizeof(float))
            and resize(<void**>&r.seed, <size_t>cap * sizeof(uint64_t))
            and resize(<void**>&r.turn, <size_t>cap * sizeof(int16_t))
            and resize(<void**>&r.player, <size_t>cap * sizeof(int8_t))):
        return False
    r.cap = cap
    return True


cdef void record_turn_end(RecorderCtx* r, State* g) noexcept nogil:
    """At the start of g's turn (the turn hook): both views of the previous turn's end, which is this
    position with that turn's number and active seat (next_turn changes nothing else), read from a
    copy so that the real game is not touched (line_values may refresh a cache)."""
    cdef State end
    cdef int q
    copy_for_lookahead(&end, g)
    end.turn = g.turn - 1
    end.active = 1 - g.active
    for q in range(2):
        if r.n >= r.cap and not grow(r):
            r.failed = 1
            return
        features(&end, q, &r.rows[<size_t>r.n * NFEAT])
        r.seed[r.n] = g.seed
        r.turn[r.n] = end.turn
        r.player[r.n] = q
        r.n += 1


cdef int recorder_turn(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Both seats' turn hook (real games only): the rows of the turn that just ended if it asked an
    action (the first seat's call writes them), then the seat's own hook."""
    cdef RecorderCtx* r = <RecorderCtx*>ctx
    if r.mark_turn >= 0:
        if r.mark_seed == g.seed and r.mark_turn == g.turn - 1:
            record_turn_end(r, g)
        r.mark_turn = -1
    if r.inner_turn[p] != NULL:
        r.inner_turn[p](r.inner_turn_ctx[p], g, p, kind)
    return 0


cdef int recorder_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    cdef RecorderCtx* r = <RecorderCtx*>ctx
    cdef int32_t action
    if kind != D_ACTION:
        return r.inner[p](r.inner_ctx[p], g, p, kind)
    if r.explore > 0 and <uint32_t>bot_below(g, seat_stream(p), 1 << 24) < r.explore:
        action = g.opts[bot_below(g, seat_stream(p), g.nopts)]
    elif r.policy:
        action = decide_and_record(r, g, p)
    else:
        action = r.inner[p](r.inner_ctx[p], g, p, kind)
    if g.turn_hook[p] != NULL:          # the real game (a lookahead copy has no turn hooks)
        r.mark_seed = g.seed
        r.mark_turn = g.turn
    return action


cdef int32_t decide_and_record(RecorderCtx* r, State* g, int p) noexcept nogil:
    """p's action by its explain function (the decision itself, as its decision function takes it),
    and the policy rows of its root actions (record_lines) when it weighed two or more by visits."""
    cdef Explanation out
    cdef int i
    cdef int32_t total = 0, action
    out.also = -1
    action = r.explain[p](r.inner_ctx[p], g, p, &out)
    if out.measure != M_VISITS or out.n < 2:
        return action
    for i in range(out.n):
        total += out.alt[i].count
    if total > 0 and not record_lines(&r.pol, g, p, &out, total):
        r.failed = 1
    return action


cdef class Recorder:
    """Collects examples from games played by two built seats (both must be C players: their
    deciders are wrapped). Install it, play the games with the seats, then take the rows (and with
    `policy`, the policy rows: both seats must be players that tell their weighing, ismcts)."""
    cdef RecorderCtx ctx
    cdef list keep

    def __cinit__(self, double explore, bint policy=False):
        self.ctx.explore = <uint32_t>(explore * (1 << 24))
        self.ctx.policy = policy
        self.ctx.mark_turn = -1
        self.keep = []

    def __dealloc__(self):
        free(self.ctx.rows)
        free(self.ctx.seed)
        free(self.ctx.turn)
        free(self.ctx.player)
        free_policy(&self.ctx.pol)

    def install(self, SeatConfig a, SeatConfig b):
        cdef int q
        cdef SeatConfig s
        for q, s in enumerate((a, b)):
            if s.strat != ST_EXTERNAL:
                raise ValueError(f"examples need C players on both seats (seat {q}: {s.spec!r})")
            self.ctx.inner[q] = s.decide
            self.ctx.inner_ctx[q] = s.ctx
            self.ctx.inner_turn[q] = s.turn_hook
            self.ctx.inner_turn_ctx[q] = s.turn_ctx
            self.ctx.explain[q] = explainer_of(s.decide)
            if self.ctx.policy and self.ctx.explain[q] == NULL:
                raise ValueError(f"policy rows need a player that tells its weighing (seat {q}: {s.spec!r})")
            self.keep.append(s.owner)
        for s in (a, b):
            s.set_decider(recorder_decide, &self.ctx, self)
            s.set_turn_hook(recorder_turn, &self.ctx)

    def rows(self) -> dict[str, np.ndarray]:
        cdef Py_ssize_t n = self.ctx.n
        if self.ctx.failed:
            raise MemoryError("the example recorder could not grow its buffers")
        out = {"seed": np.empty(n, np.uint64), "turn": np.empty(n, np.int16), "player": np.empty(n, np.int8),
               "features": np.empty((n, NFEAT), np.float32)}
        cdef float[:, ::1] f = out["features"]
        cdef uint64_t[::1] sd = out["seed"]
        cdef int16_t[::1] tu = out["turn"]
        cdef int8_t[::1] pl = out["player"]
        if n:
            memcpy(&f[0, 0], self.ctx.rows, n * NFEAT * sizeof(float))
            memcpy(&sd[0], self.ctx.seed, n * sizeof(uint64_t))
            memcpy(&tu[0], self.ctx.turn, n * sizeof(int16_t))
            memcpy(&pl[0], self.ctx.player, n * sizeof(int8_t))
        return out

    def policy_rows(self) -> dict[str, np.ndarray]:
        """The policy rows (one per root action of each decision recorded, a decision's rows together,
        in the order played): seed, turn, player (the deciding seat), action (its option), visits,
        share (of the decision's visits), score (the search's mean result after it for the deciding
        seat, 0 to 1) and features (the deciding seat's view where the action's turn ends)."""
        cdef PolicyRows* r = &self.ctx.pol
        cdef Py_ssize_t n = r.n
        if self.ctx.failed:
            raise MemoryError("the example recorder could not grow its buffers")
        out = {"seed": np.empty(n, np.uint64), "turn": np.empty(n, np.int16), "player": np.empty(n, np.int8),
               "action": np.empty(n, np.int32), "visits": np.empty(n, np.int32), "share": np.empty(n, np.float32),
               "score": np.empty(n, np.float32), "features": np.empty((n, NFEAT), np.float32)}
        cdef float[:, ::1] f = out["features"]
        cdef uint64_t[::1] sd = out["seed"]
        cdef int16_t[::1] tu = out["turn"]
        cdef int8_t[::1] pl = out["player"]
        cdef int32_t[::1] ac = out["action"]
        cdef int32_t[::1] vi = out["visits"]
        cdef float[::1] sh = out["share"]
        cdef float[::1] sc = out["score"]
        if n:
            memcpy(&f[0, 0], r.rows, n * NFEAT * sizeof(float))
            memcpy(&sd[0], r.seed, n * sizeof(uint64_t))
            memcpy(&tu[0], r.turn, n * sizeof(int16_t))
            memcpy(&pl[0], r.player, n * sizeof(int8_t))
            memcpy(&ac[0], r.action, n * sizeof(int32_t))
            memcpy(&vi[0], r.visits, n * sizeof(int32_t))
            memcpy(&sh[0], r.share, n * sizeof(float))
            memcpy(&sc[0], r.score, n * sizeof(float))
        return out


# -- features of one pending decision's position (tests, notebooks) ---------------------------------

cdef struct ProbeCtx:
    int viewer
    float* out


cdef int probe_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    cdef const ProbeCtx* c = <const ProbeCtx*>ctx
    features(g, c.viewer, c.out)
    return g.opts[0]


cdef enum:
    SPARE = 8            # entries past the vector, left NaN: the test of what features() writes


cdef class FeatureProbe:
    """A seat whose 'decision' writes the position's features from a viewer's seat (used with
    CoreState.decide_with at a pending decision, honesty re-deals included)."""
    cdef ProbeCtx ctx
    cdef float buf[NFEAT + SPARE]
    cdef public SeatConfig seat

    def __cinit__(self, int viewer):
        cdef int i
        for i in range(NFEAT + SPARE):
            self.buf[i] = float("nan")
        self.ctx.viewer = viewer
        self.ctx.out = self.buf
        self.seat = SeatConfig()
        self.seat.set_decider(probe_decide, &self.ctx, self)

    def values(self) -> np.ndarray:
        return np.array([self.buf[i] for i in range(NFEAT)], dtype=np.float32)

    def written(self) -> int:
        """How many entries features() wrote (the first non-NaN run of the buffer)."""
        cdef int i = 0
        while i < NFEAT + SPARE and self.buf[i] == self.buf[i]:
            i += 1
        return i
