# cython: language_level=3
"""Why each move: what a bot weighed at an action decision, in one shape for every kind of player
(strategies/_explain.pyx). A kind that can say it registers an explain function beside its
decision function; the replay asks it at each action decision of the game it watches."""

from libc.stdint cimport int8_t, int32_t
from sim.engine._core cimport State, MAXOPT, decide_fn_t
from strategies._declared cimport MAXPLAN

cdef enum Measure:
    M_EVALUATION = 0           # score: the one-ply evaluation (greedy and its styles)
    M_MEAN_EVALUATION = 1      # score: the mean evaluation over `count` determinizations (search)
    M_VISITS = 2               # count: visits at the root; score: the mean result, 0 to 1 (ismcts)
    M_MODEL = 3                # score: the model's win probability (learned; count: determinizations)

cdef struct Alternative:
    int32_t option             # the action option (sim/engine/options.pxd)
    int32_t count              # determinizations or visits behind the score (greedy: 1)
    double score
    double first               # learned: the model's value at the end of this turn (score: after the
                               # opponent's reply for the best few, -1 for the rest); others: = score
    int8_t allowed             # 0: set aside as a repeat at a view seen before (loop avoidance)

cdef struct Explanation:
    int32_t n                  # candidates weighed
    int32_t chosen             # the option the bot takes
    int32_t also               # in: an action to value too if it is not a candidate (-1: none; the learned
                               # player values it as its candidates, count 0, score -1: a coach's played move)
    int8_t measure             # Measure
    int32_t nplan              # the answers planned for the chosen action's turn (learned, guided ismcts)
    int8_t plan_kind[MAXPLAN]
    int32_t plan_answer[MAXPLAN]
    Alternative alt[MAXOPT]

# explain(ctx, g, player, out): at an action decision of `player` in g, weigh it exactly as the
# seat's decision function with the same ctx does (same streams, same memory: g is a copy the
# caller throws away) and fill out; returns out.chosen.
ctypedef int (*explain_fn_t)(const void* ctx, State* g, int player, Explanation* out) noexcept nogil

cdef void register_explainer(decide_fn_t decide, explain_fn_t explain) noexcept
cdef explain_fn_t explainer_of(decide_fn_t decide) noexcept nogil     # NULL: the kind cannot say why
