# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The action-value player at C level (spec `qlearned`, docs/strategies.md "The action-value
player"): one network pass per legal action scores it at the decision itself, from the seat's view
(strategies/_features.pyx) and the action's own features from the card data (action_features
below); no candidate is played out. Choices inside effects: the shared default rule.

The first layer's sums over the position's features are made once per decision and every action
adds its own inputs' columns to them: the same products and sums in the same order as one pass over
the joined input (dense_layer adds inputs in order), so a score is the plain network's to the bit.

Honest: the action features read only the seat's hand (the card it plays), the field's public faces
and values (a face-down card counts by the public rule and shows no text). Deterministic: ties from
the seat's own stream. No Python object and no allocation per decision: the weights live in the
seat's context, inference uses stack buffers."""

from libc.math cimport exp, tanh
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint32_t, uint64_t
from sim.engine._core cimport (
    State, SeatConfig, MAXOPT, decide_fn_t, line_values, bot_below, seat_stream, D_ACTION, ST_EXTERNAL,
)
from sim.engine.options cimport (
    OPT_REFRESH, play_card_of, play_line_of, play_face_up, play_opp_side,
)
from strategies._bots cimport (
    default_choice, field_hash, seen_hash, allowed_actions, note_turn_of, remember_action, takes_lead,
)
from strategies._declared cimport (
    NFEAT, NACT, QMAXIN, MAXIN, MAXL, MAXU, NFAMILY, FS_LINE_VALUE, FS_LINE_VALUE_LO, FS_LINE_VALUE_HI, FS_LINE_LEAD,
    FS_LINE_LEAD_LO, FS_LINE_LEAD_HI, FS_STACK, FS_STACK_LO, FS_STACK_HI, FS_VERBS, FS_HAND_VALUE, FS_MAY,
)
from strategies._features cimport features
from strategies._explain cimport Explanation, explain_fn_t, explainer_of, M_MODEL, M_VISITS

import numpy as np

from strategies.declared import ACTION_FEATURES

include "_dense.pxi"          # one dense layer in C: dense_layer (a build for AVX2 and one for any x86-64)

include "_layers.pxi"         # ACT_*, activate, copy_layers: a network's layers

cdef enum:
    NQIN = NFEAT + NACT  # the network's input: the position's features, then the action's
if QMAXIN > DENSE_MAXIN:
    raise ImportError(f"the action-value network's {QMAXIN} inputs exceed the dense layer's {DENSE_MAXIN}")
ACTION_LENGTH = NACT
assert len(ACTION_FEATURES) == NACT, (len(ACTION_FEATURES), NACT)

include "_families.pxi"      # FAMILY_OF, clip, card_verbs: a card's verbs by family


# QNet: strategies/_qlearned.pxd (the learned player's pruning, prune=K, reads the same network)


cdef inline float ready(int compiled, int v, int ov) noexcept nogil:
    return (compiled == 0) & (v >= 10) & (v > ov)


cdef void action_features(State* g, int p, int32_t opt, float* out) noexcept nogil:
    """Action opt of seat p (an action option of g), in ACTION_FEATURES order (NACT floats)."""
    cdef int lv[2][3]
    cdef int i, c, d, t, l, up, n, top, added, v, ov, may = 0
    for i in range(NACT):
        out[i] = 0
    if opt == OPT_REFRESH:
        out[0] = 1
        return
    line_values(g, lv)        # refreshes the field's cache (fdv below is read from it)
    c = play_card_of(opt)
    d = g.def_id[c]
    l = play_line_of(opt)
    up = play_face_up(opt)
    t = 1 - p if play_opp_side(opt) else p
    added = g.cdefs[d].value if up else (g.fdv[t][l] if g.fdv[t][l] >= 0 else 2)
    out[1] = up
    out[2] = t != p
    out[3] = g.cdefs[d].value / FS_HAND_VALUE
    out[4] = added / FS_HAND_VALUE
    if up:
        may = card_verbs(g, d, &out[5])
        for i in range(NFAMILY):
            out[5 + i] /= FS_VERBS
    out[13] = may / FS_MAY
    out[14] = g.cdefs[d].protocol == g.proto[t][l]
    out[15 + l] = 1
    v = lv[t][l]
    ov = lv[1 - t][l]
    out[18] = clip(v, FS_LINE_VALUE_LO, FS_LINE_VALUE_HI) / FS_LINE_VALUE
    out[19] = clip(v + added, FS_LINE_VALUE_LO, FS_LINE_VALUE_HI) / FS_LINE_VALUE
    out[20] = clip(ov, FS_LINE_VALUE_LO, FS_LINE_VALUE_HI) / FS_LINE_VALUE
    out[21] = clip(v + added - ov, FS_LINE_LEAD_LO, FS_LINE_LEAD_HI) / FS_LINE_LEAD
    n = g.nstack[t][l]
    out[22] = clip(n, FS_STACK_LO, FS_STACK_HI) / FS_STACK
    out[23] = g.compiled[t][l] != 0
    out[24] = ready(g.compiled[t][l], v, ov)
    out[25] = ready(g.compiled[t][l], v + added, ov)
    if n > 0:
        top = g.stack[t][l][n - 1]
        out[26] = 1
        if g.face_up[top]:           # a face-down card shows no text and counts by the public rule
            out[27] = 1
            out[28] = g.cdefs[g.def_id[top]].value / FS_HAND_VALUE
            card_verbs(g, g.def_id[top], &out[29])
            for i in range(NFAMILY):
                out[29 + i] /= FS_VERBS
        else:
            out[28] = (g.fdv[t][l] if g.fdv[t][l] >= 0 else 2) / FS_HAND_VALUE


cdef void first_layer_state(const QNet* m, const float* x, float* h) noexcept nogil:
    """The first layer's sums over the position's features (inputs 0..NFEAT-1), bias included."""
    dense_layer(h, m.w[0], m.b[0], x, NFEAT, m.nout[0])


cdef double action_logit(const QNet* m, const float* h0, const float* a) noexcept nogil:
    """The network's logit for one action: h0 (first_layer_state) plus the action's inputs' columns,
    then the other layers."""
    cdef float x[QMAXIN]
    cdef float y[QMAXIN]
    cdef int l, i, nout
    for l in range(m.nl):
        nout = m.nout[l]
        if l == 0:
            dense_layer(y, &m.w[0][NFEAT * nout], h0, a, NACT, nout)
        else:
            dense_layer(y, m.w[l], m.b[l], x, m.nin[l], nout)
        activate(m.act[l], y, x, nout)
    return x[0]


cdef int fill_qnet(QNet* m, layers) except -1:
    """Copy a model's layers ((weights [out][in], bias, activation) each) into m."""
    copy_layers(&m.nl, m.nin, m.nout, m.act, &m.w[0][0], MAXU * QMAXIN, &m.b[0][0], layers, QMAXIN)
    if m.nin[0] != NQIN:
        raise ValueError(f"the first layer takes {NQIN} inputs, got {m.nin[0]}")
    if m.nout[m.nl - 1] != 1:
        raise ValueError(f"the last layer gives 1 output (the action's value), got {m.nout[m.nl - 1]}")
    return 0


cdef struct QSettings:
    QNet net
    uint32_t explore           # probability of a uniform action, in 2**-24 units


cdef int q_best(const QSettings* s, State* g, int p, const int32_t* cand, int n, const uint8_t* allowed,
                double* scores) noexcept nogil:
    """The index of the allowed candidate of the highest logit (ties from p's stream); scores: each
    candidate's logit (NULL: not kept)."""
    cdef float x[NFEAT]
    cdef float h0[MAXU]
    cdef float a[NACT]
    cdef int i, best = -1, ties = 0
    cdef double q, bs = -1e300
    features(g, p, x)
    first_layer_state(&s.net, x, h0)
    for i in range(n):
        if allowed != NULL and not allowed[i]:
            continue
        action_features(g, p, cand[i], a)
        q = action_logit(&s.net, h0, a)
        if scores != NULL:
            scores[i] = q
        if takes_lead(g, p, q, &bs, &ties):
            best = i
    return best


cdef int qlearned_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A qlearned seat's decisions (ctx: its QSettings): its actions by the network, every other
    choice by the default rule."""
    cdef const QSettings* s = <const QSettings*>ctx
    cdef uint8_t allowed[MAXOPT]
    cdef int32_t cand[MAXOPT]
    cdef uint64_t seen, field
    cdef int action, n, i
    if kind != D_ACTION:
        return default_choice(g, p, kind)
    field = field_hash(g, p)
    note_turn_of(g, p, field)
    seen = seen_hash(g, p, field)
    if s.explore > 0 and <uint32_t>bot_below(g, seat_stream(p), 1 << 24) < s.explore:
        action = g.opts[bot_below(g, seat_stream(p), g.nopts)]
    else:
        n = g.nopts
        for i in range(n):
            cand[i] = g.opts[i]
        action = cand[q_best(s, g, p, cand, n, allowed_actions(&g.recent[p], seen, cand, n, allowed), NULL)]
    remember_action(&g.recent[p], seen, action)
    return action


cdef class QLearned:
    """A qlearned seat's context: the network's weights copied into C and the seat's settings."""
    cdef QSettings s
    cdef public str model_hash

    def __cinit__(self, layers, str model_hash, double explore):
        fill_qnet(&self.s.net, layers)
        self.model_hash = model_hash
        self.s.explore = <uint32_t>(explore * (1 << 24))

    def install(self, SeatConfig seat):
        seat.set_decider(qlearned_decide, &self.s, self)


# -- the trainer's examples: one row per (action decision, action weighed) --------------------------
# A recorder wraps both seats' deciders. At each action decision of two or more options it takes the
# seat's action (or, with probability `explore`, a uniform one from the seat's stream) and writes, for
# the options the seat weighed (its explain function, where it has one: the learned player's model
# values, a search's mean results) or else for the action taken alone, the seat's view and the
# action's features, the teacher's value of it (-1: none) and whether it was taken. The game's result
# is the Monte Carlo return of the rows taken (strategies/qexamples.py).

cdef struct QRecorderCtx:
    decide_fn_t inner[2]
    const void* inner_ctx[2]
    decide_fn_t inner_turn[2]   # the seats' own turn hooks (NULL: none)
    const void* inner_turn_ctx[2]
    explain_fn_t explain[2]
    uint32_t explore
    float* rows                 # n x NQIN
    uint64_t* seed
    int16_t* turn
    int8_t* player
    int32_t* decision           # the decision's number in the recording (rows of one decision together)
    float* teacher              # the teacher's value of the action, 0..1 (-1: none)
    int8_t* taken
    int32_t n
    int32_t cap
    int32_t ndec
    int8_t failed


cdef bint resize(void** p, size_t size) noexcept nogil:
    cdef void* q = realloc(p[0], size)
    if q == NULL:
        return False
    p[0] = q
    return True


cdef bint grow(QRecorderCtx* r, int need) noexcept nogil:
    cdef int32_t cap = r.cap if r.cap > 0 else 4096
    while cap < r.n + need:
        cap *= 2
    if cap == r.cap:
        return True
    if not (resize(<void**>&r.rows, <size_t>cap * NQIN * sizeof(float))
            and resize(<void**>&r.seed, <size_t>cap * sizeof(uint64_t))
            and resize(<void**>&r.turn, <size_t>cap * sizeof(int16_t))
            and resize(<void**>&r.player, <size_t>cap * sizeof(int8_t))
            and resize(<void**>&r.decision, <size_t>cap * sizeof(int32_t))
            and resize(<void**>&r.teacher, <size_t>cap * sizeof(float))
            and resize(<void**>&r.taken, <size_t>cap * sizeof(int8_t))):
        return False
    r.cap = cap
    return True


cdef void write_row(QRecorderCtx* r, State* g, int p, const float* x, int32_t opt, double teacher,
                    bint taken) noexcept nogil:
    cdef float* row = &r.rows[<size_t>r.n * NQIN]
    memcpy(row, x, NFEAT * sizeof(float))
    action_features(g, p, opt, &row[NFEAT])
    r.seed[r.n] = g.seed
    r.turn[r.n] = g.turn
    r.player[r.n] = p
    r.decision[r.n] = r.ndec
    r.teacher[r.n] = teacher
    r.taken[r.n] = taken
    r.n += 1


cdef int32_t weigh_and_record(QRecorderCtx* r, State* g, int p, const float* x) noexcept nogil:
    """p's action by its explain function (the decision itself), a row per option it weighed."""
    cdef Explanation out
    cdef int i
    cdef double v
    cdef int32_t action
    out.also = -1
    action = r.explain[p](r.inner_ctx[p], g, p, &out)
    if not grow(r, out.n + 1):
        r.failed = 1
        return action
    for i in range(out.n):
        if out.measure == M_MODEL:
            v = out.alt[i].first
        elif out.measure == M_VISITS and out.alt[i].count > 0:
            v = out.alt[i].score
        else:
            v = -1
        write_row(r, g, p, x, out.alt[i].option, v, out.alt[i].option == action)
    return action


cdef int qrecorder_turn(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Both seats' turn hook (real games only, which is how the recorder tells them): the seat's own."""
    cdef QRecorderCtx* r = <QRecorderCtx*>ctx
    if r.inner_turn[p] != NULL:
        r.inner_turn[p](r.inner_turn_ctx[p], g, p, kind)
    return 0


cdef int qrecorder_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    cdef QRecorderCtx* r = <QRecorderCtx*>ctx
    cdef float x[NFEAT]
    cdef int32_t action
    if kind != D_ACTION or g.nopts < 2 or g.turn_hook[p] == NULL:     # a lookahead copy has no turn hooks
        return r.inner[p](r.inner_ctx[p], g, p, kind)
    features(g, p, x)
    if r.explore > 0 and <uint32_t>bot_below(g, seat_stream(p), 1 << 24) < r.explore:
        action = g.opts[bot_below(g, seat_stream(p), g.nopts)]
        if grow(r, 1):
            write_row(r, g, p, x, action, -1, True)
        else:
            r.failed = 1
    elif r.explain[p] != NULL:
        action = weigh_and_record(r, g, p, x)
    else:
        action = r.inner[p](r.inner_ctx[p], g, p, kind)
        if grow(r, 1):
            write_row(r, g, p, x, action, -1, True)
        else:
            r.failed = 1
    r.ndec += 1
    return action


cdef class QRecorder:
    """Collects the action-value examples of games played by two built C seats (install, play, rows)."""
    cdef QRecorderCtx ctx
    cdef list keep

    def __cinit__(self, double explore):
        self.ctx.explore = <uint32_t>(explore * (1 << 24))
        self.keep = []

    def __dealloc__(self):
        free(self.ctx.rows)
        free(self.ctx.seed)
        free(self.ctx.turn)
        free(self.ctx.player)
        free(self.ctx.decision)
        free(self.ctx.teacher)
        free(self.ctx.taken)

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
            self.keep.append(s.owner)
        for s in (a, b):
            s.set_decider(qrecorder_decide, &self.ctx, self)
            s.set_turn_hook(qrecorder_turn, &self.ctx)

    def rows(self) -> dict[str, np.ndarray]:
        cdef Py_ssize_t n = self.ctx.n
        if self.ctx.failed:
            raise MemoryError("the action-value recorder could not grow its buffers")
        out = {"seed": np.empty(n, np.uint64), "turn": np.empty(n, np.int16), "player": np.empty(n, np.int8),
               "decision": np.empty(n, np.int32), "teacher": np.empty(n, np.float32),
               "taken": np.empty(n, np.int8), "inputs": np.empty((n, NQIN), np.float32)}
        cdef float[:, ::1] f = out["inputs"]
        cdef uint64_t[::1] sd = out["seed"]
        cdef int16_t[::1] tu = out["turn"]
        cdef int8_t[::1] pl = out["player"]
        cdef int32_t[::1] de = out["decision"]
        cdef float[::1] te = out["teacher"]
        cdef int8_t[::1] ta = out["taken"]
        if n:
            memcpy(&f[0, 0], self.ctx.rows, n * NQIN * sizeof(float))
            memcpy(&sd[0], self.ctx.seed, n * sizeof(uint64_t))
            memcpy(&tu[0], self.ctx.turn, n * sizeof(int16_t))
            memcpy(&pl[0], self.ctx.player, n * sizeof(int8_t))
            memcpy(&de[0], self.ctx.decision, n * sizeof(int32_t))
            memcpy(&te[0], self.ctx.teacher, n * sizeof(float))
            memcpy(&ta[0], self.ctx.taken, n * sizeof(int8_t))
        return out


# -- tests: one decision's inputs and logits ---------------------------------------------------------

cdef struct QProbeCtx:
    const QSettings* s
    float* inputs               # MAXOPT x NQIN
    double* logits
    int32_t* opts
    int32_t n


cdef int qprobe_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    cdef QProbeCtx* c = <QProbeCtx*>ctx
    cdef int i
    c.n = g.nopts
    for i in range(g.nopts):
        c.opts[i] = g.opts[i]
        features(g, p, &c.inputs[i * NQIN])
        action_features(g, p, g.opts[i], &c.inputs[i * NQIN + NFEAT])
    if c.s != NULL:
        q_best(c.s, g, p, c.opts, c.n, NULL, c.logits)
    return g.opts[0]


cdef class QProbe:
    """A seat whose 'decision' writes, for each option of the pending action decision, the network's
    inputs and (given a QLearned) its C logit (with CoreState.decide_with: tests)."""
    cdef QProbeCtx ctx
    cdef float inputs[MAXOPT * NQIN]
    cdef double logits[MAXOPT]
    cdef int32_t opts[MAXOPT]
    cdef QLearned player
    cdef public SeatConfig seat

    def __cinit__(self, QLearned player=None):
        self.player = player
        self.ctx.s = &player.s if player is not None else NULL
        self.ctx.inputs = self.inputs
        self.ctx.logits = self.logits
        self.ctx.opts = self.opts
        self.ctx.n = 0
        self.seat = SeatConfig()
        self.seat.set_decider(qprobe_decide, &self.ctx, self)

    def result(self) -> dict[str, np.ndarray]:
        n = self.ctx.n
        inputs = np.array([[self.inputs[i * NQIN + j] for j in range(NQIN)] for i in range(n)], np.float32)
        out = {"options": np.array([self.opts[i] for i in range(n)], np.int32), "inputs": inputs}
        if self.player is not None:
            out["logits"] = np.array([self.logits[i] for i in range(n)], np.float64)
        return out
