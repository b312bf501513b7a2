# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The learned player at C level (spec `learned`, docs/strategies.md "The learned player"): the
model's win probability (strategies/model.py, an MLP over strategies/_features.pyx) scores every
candidate action at the end of the turn, on a determinized copy, together with the player's own
answers to the choices inside that turn's effects.

Every choice inside the turn is the player's: the engine resolves effects recursively, so a copy
taken in the middle of an effect cannot be resumed; the action decision is the restartable point.
When a candidate action is played out on the copy, the player's decisions inside the turn go to
a planner (a stack struct of the search) that records each decision point it reaches and can
force an answer by ordinal. The planner tries the alternatives of the first few decision points
(a bounded budget, one point at a time, keeping the best answers found so far), scores each line
with the model and keeps the best (action, answers) plan. In the real game the seat follows the
plan at each of its decisions in that turn where the decision matches (same ordinal, same kind,
the planned option available); anywhere else it answers by the shared default rule
(strategies/_bots.pyx, `heuristic`).

Honest: the copy is the engine's determinization (every card p cannot see re-dealt from p's
stream), the features read only p's view, and the plan is a function of that copy.
Deterministic: ties and sampling use the seat's own stream (bot_below). No Python object and no
allocation per decision: the weights live in the seat's context (copied there at configure time)
and inference uses stack buffers."""

from libc.math cimport exp, tanh
from libc.string cimport memset
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from sim.engine._core cimport (
    State, SeatConfig, MAXOPT, MAXPROTO, NRECENT, decide_fn_t, game_run, copy_for_lookahead, bot_below,
    seat_stream, D_ACTION, D_MAY, ST_EXTERNAL,
)
from strategies._bots cimport (
    prepare_copy, candidate_actions, default_decide, default_choice, field_hash, seen_hash,
    allowed_actions, note_turn_of, remember_action,
)
from strategies._features cimport NFEAT, features

import numpy as np

cdef enum:
    MAXL = 4             # model.MAX_LAYERS
    MAXU = 64            # model.MAX_UNITS
    MAXIN = 80           # max(NFEAT, MAXU)
    MAXPLAN = 12         # inner decision points a plan remembers
    MAXALT = 8           # alternatives remembered per decision point
    NOANS = -1000000     # no forced answer
    ACT_RELU = 0
    ACT_TANH = 1
    ACT_LINEAR = 2

ACTIVATION_CODES = {"relu": ACT_RELU, "tanh": ACT_TANH, "linear": ACT_LINEAR}


cdef struct Mlp:
    int32_t nl
    int32_t nin[MAXL]
    int32_t nout[MAXL]
    int32_t act[MAXL]
    float w[MAXL][MAXU * MAXIN]
    float b[MAXL][MAXU]


cdef double win_probability(const Mlp* m, State* g, int p) noexcept nogil:
    """The model's probability that p wins, at g (a finished game: its result)."""
    cdef float x[MAXIN]
    cdef float y[MAXIN]
    cdef float s
    cdef int l, i, j, nin
    cdef const float* row
    if g.winner == p:
        return 1.0
    if g.winner == 1 - p:
        return 0.0
    if g.winner == 2:
        return 0.5
    features(g, p, x)
    for l in range(m.nl):
        nin = m.nin[l]
        for i in range(m.nout[l]):
            row = &m.w[l][i * nin]
            s = m.b[l][i]
            for j in range(nin):
                s += row[j] * x[j]
            if m.act[l] == ACT_RELU:
                s = s if s > 0 else 0
            elif m.act[l] == ACT_TANH:
                s = tanh(s)
            y[i] = s
        for i in range(m.nout[l]):
            x[i] = y[i]
    return 1.0 / (1.0 + exp(-<double>x[0]))


cdef struct Plan:
    # the seat's plan for the rest of its turn (valid for the game, turn and view it was made at)
    uint64_t seed
    uint64_t seen              # the view at the action (the last one in the seat's memory)
    int16_t turn
    int32_t n                  # decision points planned
    int32_t next               # the real game's next ordinal
    int8_t kind[MAXPLAN]
    int32_t answer[MAXPLAN]    # the option to take there
    # counts for the may_share benchmark and the docs: planned answers followed / not
    int64_t followed
    int64_t fallback


cdef struct Settings:
    Mlp mlp
    int32_t sims               # determinizations per decision
    int32_t depth              # turns played after the decision's turn (default policy)
    int32_t inner              # decision points inside the turn the planner branches at
    int32_t branch             # alternatives tried per candidate action (budget)
    int32_t top                # candidate actions whose inner choices are branched
    uint32_t explore           # probability of a uniform action, in 2**-24 units
    Plan plan                  # mutable: the seat's plan for its current turn


cdef struct Planner:
    # the planner deciding p's choices inside the turn of a lookahead copy
    int p
    int16_t turn
    int32_t n                  # p's decision points reached in this run
    int32_t force[MAXPLAN]     # the option forced at each ordinal (NOANS: the default rule)
    int8_t kind[MAXPLAN]       # recorded per ordinal
    int32_t nalt[MAXPLAN]
    int32_t alt[MAXPLAN][MAXALT]
    int32_t taken[MAXPLAN]


cdef bint has_option(State* g, int32_t opt) noexcept nogil:
    cdef int i
    for i in range(g.nopts):
        if g.opts[i] == opt:
            return True
    return False


cdef int planner_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Decisions inside a lookahead copy: p's inside the planned turn are recorded and, where the
    planner forces one, answered so; everything else by the default policy."""
    cdef Planner* pl = <Planner*>ctx
    cdef int k, i, choice
    if p != pl.p or g.turn != pl.turn or kind == D_ACTION:
        return default_decide(g, p, kind)
    k = pl.n
    if k >= MAXPLAN:
        return default_decide(g, p, kind)
    pl.n += 1
    if pl.force[k] != NOANS and has_option(g, pl.force[k]):
        choice = pl.force[k]
    else:
        choice = default_decide(g, p, kind)
    pl.kind[k] = kind
    pl.nalt[k] = g.nopts if g.nopts < MAXALT else MAXALT
    for i in range(pl.nalt[k]):
        pl.alt[k][i] = g.opts[i]
    pl.taken[k] = choice
    return choice


cdef double play_line(const Settings* s, State* base, int p, int32_t action, Planner* pl) noexcept nogil:
    """Play action on a copy of base with the planner's forced answers, to the turn's end (and
    `depth` turns more), and score it with the model."""
    cdef State sim
    copy_for_lookahead(&sim, base)
    pl.n = 0
    sim.seat_ctx[0] = pl
    sim.seat_ctx[1] = pl
    sim.forced = action
    sim.horizon_turn = base.turn + s.depth
    game_run(&sim)
    return win_probability(&s.mlp, &sim, p)


cdef void clear_force(Planner* pl) noexcept nogil:
    cdef int k
    for k in range(MAXPLAN):
        pl.force[k] = NOANS


cdef double improve(const Settings* s, State* base, int p, int32_t action, Planner* pl, double score,
                    int32_t* best_force, int8_t* best_kind) noexcept nogil:
    """Branch over the alternatives of the first `inner` decision points of action's line, one
    point at a time (the best answers so far kept), within `branch` runs; best_force gets the
    best line's answers, the return value its score. pl holds the default line's record."""
    cdef int k, i, i2, runs = 0, npoints
    cdef int32_t alts[MAXALT]
    cdef int nalt
    cdef double sc
    for k in range(MAXPLAN):
        best_force[k] = pl.taken[k] if k < pl.n else NOANS
        best_kind[k] = pl.kind[k] if k < pl.n else -1
    npoints = pl.n
    k = 0
    while k < npoints and k < s.inner and runs < s.branch:
        nalt = pl.nalt[k]
        for i in range(nalt):
            alts[i] = pl.alt[k][i]
        for i in range(nalt):
            if runs >= s.branch:
                break
            if alts[i] == best_force[k]:
                continue
            clear_force(pl)
            for i2 in range(k):
                pl.force[i2] = best_force[i2]
            pl.force[k] = alts[i]
            sc = play_line(s, base, p, action, pl)
            runs += 1
            if sc > score + 1e-9:
                score = sc
                for i2 in range(MAXPLAN):
                    best_force[i2] = pl.taken[i2] if i2 < pl.n else NOANS
                    best_kind[i2] = pl.kind[i2] if i2 < pl.n else -1
                npoints = pl.n
        k += 1
    return score


cdef int learned_action(Settings* s, State* g, int p, const uint8_t* allowed, uint64_t seen) noexcept nogil:
    """The candidate action of the best model score (mean over `sims` determinizations, each
    candidate's rest of the turn by the default rule), raised by what the planner's answers gain
    over the default rule for the `top` best candidates that ask the player anything; the plan
    of the chosen one is kept for the real game."""
    cdef State base
    cdef Planner pl
    cdef int32_t cand[MAXOPT]
    cdef double total[MAXOPT]
    cdef uint8_t picked[MAXOPT]
    cdef int32_t npoints[MAXOPT]
    cdef int32_t force[MAXPLAN]
    cdef int8_t kinds[MAXPLAN]
    cdef int32_t plans[4][MAXPLAN]
    cdef int8_t plan_kinds[4][MAXPLAN]
    cdef int planned[4]
    cdef int n, i, k, r, order, nplanned = 0, best = -1, ties = 0, chosen_plan = -1
    cdef double sc, gain, bs = -1e18
    n = candidate_actions(g, cand)
    pl.p = p
    pl.turn = g.turn
    for i in range(n):
        total[i] = 0
        npoints[i] = 0
        picked[i] = 0
    for r in range(s.sims):
        prepare_copy(g, &base, p, seat_stream(p))
        base.decide[0] = planner_decide
        base.decide[1] = planner_decide
        for i in range(n):
            if allowed != NULL and not allowed[i]:
                continue
            clear_force(&pl)
            total[i] += play_line(s, &base, p, cand[i], &pl) / s.sims
            npoints[i] = pl.n if pl.n > npoints[i] else npoints[i]
    if s.inner > 0 and s.branch > 0:
        prepare_copy(g, &base, p, seat_stream(p))
        base.decide[0] = planner_decide
        base.decide[1] = planner_decide
        for order in range(s.top if s.top < 4 else 4):
            k = -1
            for i in range(n):
                if ((allowed == NULL or allowed[i]) and npoints[i] > 0 and not picked[i]
                        and (k < 0 or total[i] > total[k])):
                    k = i
            if k < 0:
                break
            picked[k] = 1
            clear_force(&pl)
            sc = play_line(s, &base, p, cand[k], &pl)
            gain = improve(s, &base, p, cand[k], &pl, sc, force, kinds) - sc
            if gain > 1e-9:
                total[k] += gain
                planned[nplanned] = k
                for i in range(MAXPLAN):
                    plans[nplanned][i] = force[i]
                    plan_kinds[nplanned][i] = kinds[i]
                nplanned += 1
    for i in range(n):
        if allowed != NULL and not allowed[i]:
            continue
        if total[i] > bs + 1e-9:
            bs = total[i]
            best = i
            ties = 1
        elif total[i] > bs - 1e-9:
            ties += 1
            if bot_below(g, seat_stream(p), ties) == 0:
                best = i
    s.plan.n = 0
    for k in range(nplanned):
        if planned[k] == best:
            chosen_plan = k
    if chosen_plan >= 0:
        for i in range(MAXPLAN):
            if plans[chosen_plan][i] == NOANS:
                break
            s.plan.kind[i] = plan_kinds[chosen_plan][i]
            s.plan.answer[i] = plans[chosen_plan][i]
            s.plan.n += 1
    s.plan.seed = g.seed
    s.plan.turn = g.turn
    s.plan.seen = seen
    s.plan.next = 0
    return cand[best]


cdef int learned_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A learned seat's decisions (ctx: its Settings)."""
    cdef Settings* s = <Settings*>ctx
    cdef uint8_t allowed[MAXOPT]
    cdef uint64_t seen, field
    cdef int action, k
    cdef Plan* plan = &s.plan
    if kind == D_ACTION:
        field = field_hash(g, p)
        note_turn_of(g, p, field)
        seen = seen_hash(g, p, field)
        if s.explore > 0 and <uint32_t>bot_below(g, seat_stream(p), 1 << 24) < s.explore:
            action = g.opts[bot_below(g, seat_stream(p), g.nopts)]
            plan.n = 0
            plan.turn = -1
        else:
            action = learned_action(s, g, p, allowed_actions(g, &g.recent[p], seen, allowed), seen)
        remember_action(&g.recent[p], seen, action)
        return action
    if (plan.turn == g.turn and plan.seed == g.seed and g.active == p
            and g.recent[p].seen[(g.recent[p].next + NRECENT - 1) % NRECENT] == plan.seen):
        k = plan.next
        plan.next += 1
        if k < plan.n and plan.kind[k] == kind and has_option(g, plan.answer[k]):
            plan.followed += 1
            return plan.answer[k]
        plan.fallback += 1
    return default_choice(g, p, kind)


cdef class Learned:
    """A learned seat's context: the model's weights copied into C, the search settings and the
    seat's plan (the seat object plays one game at a time, as the batch loop does)."""
    cdef Settings s
    cdef public str model_hash

    def __cinit__(self, layers, str model_hash, int sims, int depth, int inner, int branch, int top,
                  double explore):
        cdef int l, i, j
        if not 1 <= len(layers) <= MAXL:
            raise ValueError(f"a model of 1..{MAXL} layers, got {len(layers)}")
        self.s.mlp.nl = len(layers)
        for l, (w, b, act) in enumerate(layers):
            w = np.ascontiguousarray(w, np.float32)
            if w.shape[0] > MAXU or w.shape[1] > MAXIN:
                raise ValueError(f"layer {l}: at most {MAXU} units of {MAXIN} inputs, got {w.shape}")
            self.s.mlp.nout[l] = w.shape[0]
            self.s.mlp.nin[l] = w.shape[1]
            self.s.mlp.act[l] = ACTIVATION_CODES[act]
            for i in range(w.shape[0]):
                self.s.mlp.b[l][i] = b[i]
                for j in range(w.shape[1]):
                    self.s.mlp.w[l][i * w.shape[1] + j] = w[i, j]
        if self.s.mlp.nin[0] != NFEAT:
            raise ValueError(f"the first layer takes {NFEAT} features, got {self.s.mlp.nin[0]}")
        self.model_hash = model_hash
        self.s.sims = sims
        self.s.depth = depth
        self.s.inner = inner if inner < MAXPLAN else MAXPLAN
        self.s.branch = branch
        self.s.top = top
        self.s.explore = <uint32_t>(explore * (1 << 24))
        self.s.plan.turn = -1

    def install(self, SeatConfig seat):
        seat.set_decider(learned_decide, &self.s, self)

    def plan_counts(self) -> tuple[int, int]:
        """(planned answers followed, planned decisions that fell back to the default rule)."""
        return self.s.plan.followed, self.s.plan.fallback


# -- what a seat answers to optional steps, per card (benchmarks/may_share.py) ----------------------

cdef struct MayCtx:
    decide_fn_t inner
    const void* inner_ctx
    int64_t asked[MAXPROTO * 6]
    int64_t declined[MAXPROTO * 6]


cdef int may_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    cdef MayCtx* m = <MayCtx*>ctx
    cdef int choice = m.inner(m.inner_ctx, g, p, kind), d
    if kind == D_MAY and g.cur_dec_src >= 0:
        d = g.def_id[g.cur_dec_src]
        m.asked[d] += 1
        m.declined[d] += choice == 0
    return choice


cdef class MayTally:
    """Wraps a built C seat: counts, per card definition, the optional steps ("may") it was asked
    and how many it declined."""
    cdef MayCtx ctx
    cdef object keep

    def __cinit__(self, SeatConfig seat):
        if seat.strat != ST_EXTERNAL:
            raise ValueError(f"a C player is needed to count its answers, got {seat.spec!r}")
        self.ctx.inner = seat.decide
        self.ctx.inner_ctx = seat.ctx
        self.keep = seat.owner
        memset(self.ctx.asked, 0, sizeof(self.ctx.asked))
        memset(self.ctx.declined, 0, sizeof(self.ctx.declined))
        seat.set_decider(may_decide, &self.ctx, self)

    def counts(self) -> dict[int, tuple[int, int]]:
        """{card definition id: (asked, declined)} for every card asked at least once."""
        cdef int d
        return {d: (self.ctx.asked[d], self.ctx.declined[d]) for d in range(MAXPROTO * 6) if self.ctx.asked[d]}
