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
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from sim.engine._core cimport (
    State, SeatConfig, MAXOPT, MAXPROTO, NRECENT, decide_fn_t, game_run, copy_for_lookahead, bot_below,
    seat_stream, has_option, D_ACTION, D_MAY, ST_EXTERNAL, NO_FORCED,
)
from strategies._bots cimport (
    prepare_copy, candidate_actions, default_decide, default_choice, field_hash, seen_hash,
    allowed_actions, note_turn_of, remember_action,
)
from strategies._declared cimport NFEAT
from strategies._features cimport features

from strategies._explain cimport Explanation, register_explainer, M_MODEL

import numpy as np

cdef enum:
    MAXALT = 8           # alternatives remembered per decision point

cdef double RESULT_LOGIT = 1e6  # a finished line's policy logit per point of result (model_value)


# Mlp, MAXL, MAXU, MAXIN: strategies/_learned.pxd (the guided ismcts reads the same network)

include "_dense.pxi"          # one dense layer in C: dense_layer (a build for AVX2 and one for any x86-64)
include "_layers.pxi"         # ACT_*, activate, copy_layers: a network's layers
include "_learned_prune.pxi"  # prune=K: the action-value network keeps the candidates played out


cdef double win_probability(const Mlp* m, State* g, int p) noexcept nogil:
    """The model's probability that p wins, at g (a finished game: its result)."""
    return model_value(m, g, p, NULL)


cdef bint has_policy(const Mlp* m) noexcept nogil:
    """Whether the model's last layer gives a policy logit beside the value (declared.MODEL_OUTPUTS)."""
    return m.nout[m.nl - 1] > 1


cdef double model_value(const Mlp* m, State* g, int p, double* logit) noexcept nogil:
    """The model's probability that p wins, at g (a finished game: its result), and, where `logit`
    is given and the model has a policy output, the policy logit of the line that ends at g, from
    the same pass (a finished game's line: RESULT_LOGIT times its result, +1 won, -1 lost, 0 drawn,
    so a line that wins is always among those the policy orders first). Each layer adds input j's
    column (the weights are stored by input: w[l][j * nout + i]) into all outputs at once, which
    the compiler vectorizes, and skips inputs that are 0 (most features are): the sums run in input
    order, so a result is the same on every run."""
    cdef float x[MAXIN]
    cdef float y[MAXIN]
    cdef int l, i, nout
    if g.winner >= 0 and logit != NULL:
        logit[0] = RESULT_LOGIT if g.winner == p else (-RESULT_LOGIT if g.winner == 1 - p else 0)
    if g.winner == p:
        return 1.0
    if g.winner == 1 - p:
        return 0.0
    if g.winner == 2:
        return 0.5
    features(g, p, x)
    for l in range(m.nl):
        nout = m.nout[l]
        dense_layer(y, m.w[l], m.b[l], x, m.nin[l], nout)
        activate(m.act[l], y, x, nout)
    if logit != NULL:
        logit[0] = x[1] if m.nout[m.nl - 1] > 1 else 0
    return 1.0 / (1.0 + exp(-<double>x[0]))


cdef int fill_mlp(Mlp* m, layers) except -1:
    """Copy a model's layers ((weights [out][in], bias, activation) each) into m."""
    copy_layers(&m.nl, m.nin, m.nout, m.act, &m.w[0][0], MAXU * MAXIN, &m.b[0][0], layers, MAXIN)
    if m.nin[0] != NFEAT:
        raise ValueError(f"the first layer takes {NFEAT} features, got {m.nin[0]}")
    if not 1 <= m.nout[m.nl - 1] <= MAXOUT:
        raise ValueError(f"the last layer gives 1..{MAXOUT} outputs (value, policy), got {m.nout[m.nl - 1]}")
    return 0


# Plan, Settings: strategies/_learned.pxd (the guided ismcts plans its choices with them)


cdef struct Planner:
    # the planner deciding p's choices inside the turn of a lookahead copy
    int p
    int16_t turn
    int32_t n                  # p's decision points reached in this run
    int32_t force[MAXPLAN]     # the option forced at each ordinal (NOANS: the default rule)
    int8_t kind[MAXPLAN]       # recorded per ordinal
    int8_t src[MAXPLAN]        # the card asking (State.cur_dec_src)
    int32_t before             # points reached before p's action decision in the copy (-1: none met)
    int32_t nalt[MAXPLAN]
    int32_t alt[MAXPLAN][MAXALT]
    int32_t taken[MAXPLAN]


cdef int planner_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """Decisions inside a lookahead copy: p's inside the planned turn are recorded and, where the
    planner forces one, answered so; everything else by the default policy."""
    cdef Planner* pl = <Planner*>ctx
    cdef int k, i, choice
    if p != pl.p or g.turn != pl.turn or kind == D_ACTION:
        if kind == D_ACTION and p == pl.p and g.turn == pl.turn and pl.before < 0:
            pl.before = pl.n
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
    pl.src[k] = g.cur_dec_src
    pl.nalt[k] = g.nopts if g.nopts < MAXALT else MAXALT
    for i in range(pl.nalt[k]):
        pl.alt[k][i] = g.opts[i]
    pl.taken[k] = choice
    return choice


cdef void planner_copy(State* g, State* base, int p) noexcept nogil:
    """A determinized copy of g from p's stream whose decisions go to the planner."""
    prepare_copy(g, base, p, seat_stream(p))
    base.decide[0] = planner_decide
    base.decide[1] = planner_decide


cdef double play_line(const Settings* s, State* base, int p, int32_t action, Planner* pl) noexcept nogil:
    """Play action on a copy of base with the planner's forced answers, to the turn's end (and
    `depth` turns more), and score it with the model."""
    return play_to(s, base, p, action, pl, s.depth, NULL)


cdef double play_to(const Settings* s, State* base, int p, int32_t action, Planner* pl, int depth,
                    double* logit) noexcept nogil:
    """play_line() to the end of the turn `depth` turns after base's (and, with `logit`, the model's
    policy logit there: model_value)."""
    cdef State sim
    copy_for_lookahead(&sim, base)
    pl.n = 0
    pl.before = -1
    sim.seat_ctx[0] = pl
    sim.seat_ctx[1] = pl
    sim.forced = action
    sim.horizon_turn = base.turn + depth
    game_run(&sim)
    return model_value(&s.mlp, &sim, p, logit)


cdef void clear_force(Planner* pl) noexcept nogil:
    cdef int k
    for k in range(MAXPLAN):
        pl.force[k] = NOANS


cdef void keep_record(const Planner* pl, int32_t* nalt, int32_t alt[MAXPLAN][MAXALT]) noexcept nogil:
    """The decision points (their options) of the line the planner just played."""
    cdef int k, i
    for k in range(MAXPLAN):
        nalt[k] = pl.nalt[k] if k < pl.n else 0
        for i in range(nalt[k]):
            alt[k][i] = pl.alt[k][i]


cdef void keep_answers(const Planner* pl, int32_t* best_force, int8_t* best_kind, int8_t* best_src) noexcept nogil:
    cdef int k
    for k in range(MAXPLAN):
        best_force[k] = pl.taken[k] if k < pl.n else NOANS
        best_kind[k] = pl.kind[k] if k < pl.n else -1
        best_src[k] = pl.src[k] if k < pl.n else -1


cdef double improve(const Settings* s, State* base, int p, int32_t action, Planner* pl, double score,
                    int32_t* best_force, int8_t* best_kind, int8_t* best_src, int limit) noexcept nogil:
    """Branch over the alternatives of the first `limit` decision points of action's line, one
    point at a time (the best answers so far kept, and the decision points of the best line
    so far branched next), within `branch` runs; best_force and best_kind get the best line's
    answers, the return value its score. pl holds the default line's record."""
    cdef int k, i, j, runs = 0, npoints
    cdef int32_t nalt[MAXPLAN]
    cdef int32_t alt[MAXPLAN][MAXALT]
    cdef int32_t alts[MAXALT]
    cdef int n
    cdef double sc
    keep_answers(pl, best_force, best_kind, best_src)
    keep_record(pl, nalt, alt)
    npoints = pl.n
    k = 0
    while k < npoints and k < limit and runs < s.branch:
        n = nalt[k]
        for i in range(n):
            alts[i] = alt[k][i]
        for i in range(n):
            if runs >= s.branch:
                break
            if alts[i] == best_force[k]:
                continue
            clear_force(pl)
            for j in range(k):
                pl.force[j] = best_force[j]
            pl.force[k] = alts[i]
            sc = play_line(s, base, p, action, pl)
            runs += 1
            if sc > score + 1e-9:
                score = sc
                keep_answers(pl, best_force, best_kind, best_src)
                keep_record(pl, nalt, alt)
                npoints = pl.n
        k += 1
    return score


cdef void keep_plan(Plan* plan, const int32_t* force, const int8_t* kinds, const int8_t* srcs,
                   int limit) noexcept nogil:
    """plan's answers: a line's forced answers up to its first unforced point or `limit` (plan.n was 0)."""
    cdef int i
    for i in range(MAXPLAN if limit > MAXPLAN else limit):
        if force[i] == NOANS:
            break
        plan.kind[i] = kinds[i]
        plan.answer[i] = force[i]
        plan.src[i] = srcs[i]
        plan.n += 1


cdef void rescore(const Settings* s, State* g, int p, Planner* pl, const int32_t* cand, int n,
                  const uint8_t* allowed, double* total, const double* order_by, const int* planned,
                  int32_t plans[MAXTOP][MAXPLAN], int nplanned) noexcept nogil:
    """The `reply` best candidates (by `order_by`: their scores so far, or with a policy output their
    policy logits) scored again one turn deeper, after the
    opponent's reply by the default policy (the candidate's planned answers kept), over `sims`
    determinizations; every other candidate is ruled out (its score set below any model score),
    since a score after the reply and one before it do not compare."""
    cdef State base
    cdef uint8_t chosen[MAXOPT]
    cdef double deeper[MAXOPT]
    cdef int i, j, k, r, order
    for i in range(n):
        chosen[i] = 0
        deeper[i] = 0
    for order in range(s.reply):
        k = -1
        for i in range(n):
            if (allowed == NULL or allowed[i]) and not chosen[i] and (k < 0 or order_by[i] > order_by[k]):
                k = i
        if k < 0:
            break
        chosen[k] = 1
    for r in range(s.sims):
        planner_copy(g, &base, p)
        for i in range(n):
            if not chosen[i]:
                continue
            clear_force(pl)
            for j in range(nplanned):
                if planned[j] == i:
                    for k in range(MAXPLAN):
                        pl.force[k] = plans[j][k]
            deeper[i] += play_to(s, &base, p, cand[i], pl, s.depth + 1, NULL) / s.sims
    for i in range(n):
        total[i] = deeper[i] if chosen[i] else -1.0


cdef int learned_action(Settings* s, State* g, int p, const uint8_t* allowed, uint64_t seen) noexcept nogil:
    """The candidate action of the best model score (mean over `sims` determinizations, each
    candidate's rest of the turn by the default rule), raised by what the planner's answers gain
    over the default rule for the `top` best candidates that ask the player anything; the plan
    of the chosen one is kept for the real game. With a policy output the `top` candidates planned
    and the `reply` ones scored again are the best by the policy's logit (at the same line ends,
    from the same network passes) instead of by the score; the score still decides among them."""
    cdef State base
    cdef Planner pl
    cdef int32_t cand[MAXOPT]
    cdef double total[MAXOPT]
    cdef double logit[MAXOPT]
    cdef double lg
    cdef bint policy = has_policy(&s.mlp)
    cdef const double* order_by = &total[0]
    cdef uint8_t picked[MAXOPT]
    cdef uint8_t kept[MAXOPT]
    cdef const uint8_t* legal = allowed
    cdef int32_t npoints[MAXOPT]
    cdef int32_t force[MAXPLAN]
    cdef int8_t kinds[MAXPLAN]
    cdef int8_t srcs[MAXPLAN]
    cdef int32_t plans[MAXTOP][MAXPLAN]
    cdef int8_t plan_kinds[MAXTOP][MAXPLAN]
    cdef int8_t plan_srcs[MAXTOP][MAXPLAN]
    cdef int planned[MAXTOP]
    cdef int n, i, k, r, order, nplanned = 0, best = -1, ties = 0, chosen_plan = -1
    cdef double sc, gain, bs = -1e18
    n = candidate_actions(g, cand)
    allowed = prune_candidates(s, g, p, cand, n, legal, kept)
    count_played(s, allowed, n)
    if policy:
        order_by = &logit[0]
    pl.p = p
    pl.turn = g.turn
    for i in range(n):
        total[i] = 0
        logit[i] = 0
        npoints[i] = 0
        picked[i] = 0
    for r in range(s.sims):
        planner_copy(g, &base, p)
        for i in range(n):
            if allowed != NULL and not allowed[i]:
                continue
            clear_force(&pl)
            if policy:
                total[i] += play_to(s, &base, p, cand[i], &pl, s.depth, &lg) / s.sims
                logit[i] += lg / s.sims
            else:
                total[i] += play_line(s, &base, p, cand[i], &pl) / s.sims
            npoints[i] = pl.n if pl.n > npoints[i] else npoints[i]
    if allowed != legal:
        for i in range(n):
            if (legal == NULL or legal[i]) and not allowed[i]:
                total[i] = -1.0     # pruned: not played out (its explanation's value, as a reply's unchosen)
    if s.inner > 0 and s.branch > 0:
        planner_copy(g, &base, p)
        for order in range(s.top if s.top < MAXTOP else MAXTOP):
            k = -1
            for i in range(n):
                if ((allowed == NULL or allowed[i]) and npoints[i] > 0 and not picked[i]
                        and (k < 0 or order_by[i] > order_by[k])):
                    k = i
            if k < 0:
                break
            picked[k] = 1
            clear_force(&pl)
            sc = play_line(s, &base, p, cand[k], &pl)
            gain = improve(s, &base, p, cand[k], &pl, sc, force, kinds, srcs, s.inner) - sc
            if gain > 1e-9:
                total[k] += gain
                planned[nplanned] = k
                for i in range(MAXPLAN):
                    plans[nplanned][i] = force[i]
                    plan_kinds[nplanned][i] = kinds[i]
                    plan_srcs[nplanned][i] = srcs[i]
                nplanned += 1
    if s.said != NULL:
        tell_weighing(s.said, s, cand, total, legal, allowed, n, False)
    if s.reply > 0:
        rescore(s, g, p, &pl, cand, n, allowed, total, order_by, planned, plans, nplanned)
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
    s.plan.origin = PLAN_ACTION
    for k in range(nplanned):
        if planned[k] == best:
            chosen_plan = k
    if chosen_plan >= 0:
        keep_plan(&s.plan, plans[chosen_plan], plan_kinds[chosen_plan], plan_srcs[chosen_plan], MAXPLAN)
    s.plan.seed = g.seed
    s.plan.turn = g.turn
    s.plan.seen = seen
    s.plan.next = 0
    if s.said != NULL:
        tell_weighing(s.said, s, cand, total, legal, allowed, n, True)
    return cand[best]


cdef int learned_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A learned seat's decisions (ctx: its Settings)."""
    cdef Settings* s = <Settings*>ctx
    cdef uint8_t allowed[MAXOPT]
    cdef int32_t cand[MAXOPT]
    cdef uint64_t seen, field
    cdef int action, n
    cdef Plan* plan = &s.plan
    if kind == D_ACTION:
        s.pending = 0
        field = field_hash(g, p)
        note_turn_of(g, p, field)
        seen = seen_hash(g, p, field)
        if s.explore > 0 and <uint32_t>bot_below(g, seat_stream(p), 1 << 24) < s.explore:
            action = g.opts[bot_below(g, seat_stream(p), g.nopts)]
            plan.n = 0
            plan.turn = -1
        else:
            n = candidate_actions(g, cand)
            action = learned_action(s, g, p, allowed_actions(&g.recent[p], seen, cand, n, allowed), seen)
        remember_action(&g.recent[p], seen, action)
        return action
    if plan_holds(plan, g, p):
        if plan.origin == PLAN_TURN:
            settle_plan(s, p)
        action = follow_plan(plan, g, kind)
        if action != NOANS:
            if plan.origin == PLAN_TURN:
                if g.active == p:
                    plan.followed_before += 1
                else:
                    plan.followed_theirs += 1
            return action
    return default_choice(g, p, kind)


cdef bint plan_holds(const Plan* plan, State* g, int p) noexcept nogil:
    """Whether p's plan is for this game and turn: one made at the turn's start (PLAN_TURN), or one
    made at p's action decision of this turn, from the view p's memory holds last."""
    if plan.turn != g.turn or plan.seed != g.seed:
        return False
    if plan.origin == PLAN_TURN:
        return True
    return g.active == p and (plan.seen == 0
                              or g.recent[p].seen[(g.recent[p].next + NRECENT - 1) % NRECENT] == plan.seen)


cdef int follow_plan(Plan* plan, State* g, int kind) noexcept nogil:
    """The plan's answer at the turn's next decision of its seat, if that decision is the planned
    one (same ordinal, kind and asking card, the option legal); NOANS otherwise (the caller's rule
    decides)."""
    cdef int k = plan.next
    plan.next += 1
    if k < plan.n and plan.kind[k] == kind and plan.src[k] == g.cur_dec_src and has_option(g, plan.answer[k]):
        plan.followed += 1
        return plan.answer[k]
    plan.fallback += 1
    return NOANS


cdef inline void clear_plan(Settings* s, State* g, int8_t origin) noexcept nogil:
    """No plan yet for g's game and turn, one to be made at `origin` (PLAN_ACTION or PLAN_TURN), and
    no turn-start copy pending."""
    s.plan.n = 0
    s.plan.seed = g.seed
    s.plan.turn = g.turn
    s.plan.origin = origin
    s.plan.seen = 0
    s.plan.next = 0
    s.pending = 0


cdef void plan_turn(Settings* s, State* g, int p, int32_t action) noexcept nogil:
    """s.plan: the answers to p's choices inside this turn after `action` (chosen by another
    search: the guided ismcts) that the model scores best, tried as learned_action tries them
    for one candidate (`inner` points, `branch` runs); no plan when the default rule's answers
    score as well."""
    cdef State base
    cdef Planner pl
    cdef int32_t force[MAXPLAN]
    cdef int8_t kinds[MAXPLAN]
    cdef int8_t srcs[MAXPLAN]
    cdef double sc
    clear_plan(s, g, PLAN_ACTION)
    if s.inner <= 0 or s.branch <= 0:
        return
    pl.p = p
    pl.turn = g.turn
    planner_copy(g, &base, p)
    clear_force(&pl)
    sc = play_line(s, &base, p, action, &pl)
    if pl.n == 0 or improve(s, &base, p, action, &pl, sc, force, kinds, srcs, s.inner) <= sc + 1e-9:
        return
    keep_plan(&s.plan, force, kinds, srcs, MAXPLAN)


cdef void plan_ahead(Settings* s, State* g, int p) noexcept nogil:
    """At the start of a turn (a restartable point; the engine's turn hook): s.plan will hold p's
    answers to the choices this turn asks of p before p's own next action decision: the Start
    phase's effects and the line to compile on p's turn (and, after a compile, the rest of that
    turn), and every choice the opponent's turn asks of p. Here only the determinized copy is made
    (s.ahead); the plan is made from it at the turn's first such choice (settle_plan), so a turn
    that asks p nothing before its action costs one re-deal and no play-out."""
    clear_plan(s, g, PLAN_TURN)
    if s.inner <= 0 or s.branch <= 0 or g.winner >= 0:
        return
    planner_copy(g, &s.ahead, p)
    s.pending = 1


cdef void settle_plan(Settings* s, int p) noexcept nogil:
    """The plan of the turn's start, made now from its copy (s.ahead) if not yet: planned as for an
    action (the first `inner` points within `branch` runs) on that copy played to the turn's end by
    the default policy (the opponent's action and choices, p's action if one comes), scored by the
    model from p's view; no plan when no choice of p's comes in that line. The real game follows it
    where its decisions match (ordinal, kind, asking card, option legal)."""
    cdef Planner pl
    cdef int32_t force[MAXPLAN]
    cdef int8_t kinds[MAXPLAN]
    cdef int8_t srcs[MAXPLAN]
    cdef double sc
    cdef int points
    if not s.pending:
        return
    s.pending = 0
    pl.p = p
    pl.turn = s.plan.turn
    clear_force(&pl)
    sc = play_line(s, &s.ahead, p, NO_FORCED, &pl)
    points = pl.n if pl.before < 0 else pl.before
    if points == 0:
        return
    improve(s, &s.ahead, p, NO_FORCED, &pl, sc, force, kinds, srcs, points if points < s.inner else s.inner)
    keep_plan(&s.plan, force, kinds, srcs, points)


cdef int learned_turn(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A learned seat's turn hook (ctx: its Settings): plan the choices before its next action."""
    plan_ahead(<Settings*>ctx, g, p)
    return 0


cdef class Learned:
    """A learned seat's context: the model's weights copied into C, the search settings and the
    seat's plan (the seat object plays one game at a time, as the batch loop does)."""
    cdef Settings s
    cdef QNet qnet                # prune > 0: the action-value network that keeps the candidates
    cdef public str model_hash
    cdef public str qmodel_hash   # that network's ("" without pruning)

    def __cinit__(self, layers, str model_hash, int sims, int depth, int inner, int branch, int top,
                  int reply, double explore, int prune=0, qlayers=None, str qmodel_hash=""):
        fill_mlp(&self.s.mlp, layers)
        self.model_hash = model_hash
        self.qmodel_hash = ""
        self.s.prune = 0
        self.s.qnet = NULL
        if prune > 0:
            if qlayers is None:
                raise ValueError("prune > 0 needs the action-value network's layers")
            fill_qnet(&self.qnet, qlayers)
            self.s.prune = prune if prune < MAXOPT else MAXOPT
            self.s.qnet = &self.qnet
            self.qmodel_hash = qmodel_hash
        self.s.sims = sims
        self.s.depth = depth
        self.s.inner = inner if inner < MAXPLAN else MAXPLAN
        self.s.branch = branch
        self.s.top = top
        self.s.reply = reply
        self.s.explore = <uint32_t>(explore * (1 << 24))
        self.s.plan.turn = -1

    def install(self, SeatConfig seat):
        seat.set_decider(learned_decide, &self.s, self)
        seat.set_turn_hook(learned_turn, &self.s)

    def plan_counts(self) -> tuple[int, int]:
        """(planned answers followed, planned decisions that fell back to the default rule)."""
        return self.s.plan.followed, self.s.plan.fallback

    def playout_counts(self) -> tuple[int, int, int]:
        """(action decisions weighed, candidates played out at them, the most at one decision)."""
        return self.s.weighed, self.s.played, self.s.widest

    def turn_plan_counts(self) -> tuple[int, int]:
        """Of the answers followed, those planned at a turn's start: (before its action on its own turn,
        on the opponent's turn)."""
        return self.s.plan.followed_before, self.s.plan.followed_theirs


include "_learned_explain.pxi"      # why each move (replays, the coach's view)


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
