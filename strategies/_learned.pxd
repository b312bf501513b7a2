# cython: language_level=3
"""What other bot extensions (strategies/_ismcts.pyx: the guided search) share from _learned.pyx:
the model's network in C and its win probability at a position."""

from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint32_t, uint64_t
from sim.engine._core cimport State
# MAXL, MAXU (the model's room: declared.MAX_LAYERS, MAX_UNITS), MAXIN (declared.max_inputs()), MAXPLAN
# (the most inner decision points: the `inner` limit), MAXTOP (the most candidates planned: `top`'s),
# MAXOUT (the last layer's outputs at most: declared.MODEL_OUTPUTS, the value and the policy logit)
from strategies._declared cimport MAXL, MAXU, MAXIN, MAXPLAN, MAXTOP, MAXOUT
from strategies._explain cimport Explanation
from strategies._qlearned cimport QNet

cdef struct Mlp:
    int32_t nl
    int32_t nin[MAXL]
    int32_t nout[MAXL]
    int32_t act[MAXL]
    float w[MAXL][MAXU * MAXIN]
    float b[MAXL][MAXU]

cdef enum:
    NOANS = -1000000     # no forced answer
    PLAN_ACTION = 0      # a plan made at the seat's action decision (valid while the turn's view is the same)
    PLAN_TURN = 1        # a plan made at a turn's start (the choices asked before the seat's next action)

cdef struct Plan:
    # the seat's plan for the rest of its turn (valid for the game, turn and view it was made at)
    uint64_t seed
    uint64_t seen              # the view at the action (the last one in the seat's memory)
    int16_t turn
    int8_t origin              # PLAN_ACTION or PLAN_TURN
    int32_t n                  # decision points planned
    int32_t next               # the real game's next ordinal
    int8_t kind[MAXPLAN]
    int32_t answer[MAXPLAN]    # the option to take there
    int8_t src[MAXPLAN]        # the card whose text asks it (State.cur_dec_src)
    # counts for the may_share benchmark and the docs: planned answers followed / not
    int64_t followed
    int64_t fallback
    # of those followed, the turn-start plans' answers: before the seat's action, on the opponent's turn
    int64_t followed_before
    int64_t followed_theirs


cdef struct Settings:
    Mlp mlp
    int32_t sims               # determinizations per decision
    int32_t depth              # turns played after the decision's turn (default policy)
    int32_t inner              # decision points inside the turn the planner branches at
    int32_t branch             # alternatives tried per candidate action (budget)
    int32_t top                # candidate actions whose inner choices are branched
    int32_t reply              # best candidates scored again after the opponent's reply (0: none)
    uint32_t explore           # probability of a uniform action, in 2**-24 units
    Plan plan                  # mutable: the seat's plan for its current turn
    Explanation* said          # replays only (strategies/_learned_explain.pxi): the weighing told here; else NULL
    State ahead                # mutable: the determinized copy made at the turn's start (plan_ahead)
    int8_t pending             # 1: `ahead` is not planned yet (planned at the turn's first choice, if one comes)
    int32_t prune              # candidates the action-value network keeps to be played out (0: every one)
    const QNet* qnet           # that network (prune > 0; the seat object holds it)
    # counts for the tests and docs: action decisions weighed, candidates played out there, the most at one
    int64_t weighed
    int64_t played
    int32_t widest


cdef double win_probability(const Mlp* m, State* g, int p) noexcept nogil
cdef double model_value(const Mlp* m, State* g, int p, double* logit) noexcept nogil
cdef bint has_policy(const Mlp* m) noexcept nogil
cdef void plan_turn(Settings* s, State* g, int p, int32_t action) noexcept nogil
cdef void plan_ahead(Settings* s, State* g, int p) noexcept nogil
cdef bint plan_holds(const Plan* plan, State* g, int p) noexcept nogil
cdef void settle_plan(Settings* s, int p) noexcept nogil
cdef int follow_plan(Plan* plan, State* g, int kind) noexcept nogil
cdef int fill_mlp(Mlp* m, layers) except -1
