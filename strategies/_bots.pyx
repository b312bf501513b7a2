# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Built-in scripted strategies at C level: greedy one-ply (and its styles) and determinized
search. They plug into the engine as a decision function and its context per seat
(SeatConfig.set_decider; sim/engine/decisions.pxi calls it): greedy's context is its evaluation,
search's its settings (SearchSettings). The engine holds no weight or budget of theirs.

Honesty: a bot never reads the opponent's hand, the identities of the opponent's face-down cards
or any deck order. Lookahead runs on a *determinized* copy: every card the bot cannot see is
re-dealt at random (from the bot's own random stream) among the slots it cannot see, after
sorting those cards into a canonical order, so any permutation of hidden information gives the
very same copy and the very same choice. The re-deal is the engine's (`determinize`, declared in
sim/engine/_core.pxd, sim/engine/hidden.pxi), as are the random streams and the option encoding
(sim/engine/rng.pxd, options.pxd).

Why each move: greedy_explain and search_explain say what an action decision weighed, from the
very code the decision runs (greedy_weigh, search_weigh); registered with strategies/_explain.pyx
for replays, never called in play.
"""

from libc.math cimport fabs, floor, ldexp
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from sim.engine._core cimport (
    State, MAXCARDS, MAXPROTO, RecentActions, NRECENT, SeatConfig, decide_fn_t, game_run, line_value, line_values,
    copy_for_lookahead, card_value,
    random_option, determinize, bot_below, seat_stream, MAXOPT, ST_EXTERNAL, HALT_NONE,
    Z_FIELD, Z_HAND, Z_DECK,
    D_ACTION, D_MAY, D_TARGET, D_EACH_CARD, D_LINE, D_DISCARD, D_DISCARD_MORE, D_HAND, D_ORDER,
    D_EACH_LINE, D_EITHER, D_CONTROL_REARRANGE, D_REARRANGE, D_COMPILE_LINE, D_PLAY, D_DRAFT,
    D_STATE_NUMBER, D_STATE_PROTOCOL,
    bot_target, BT_REMOVE, BT_FLIP, BT_RANDOM,
)
from sim.engine._core import constants
from sim.engine.options cimport (
    OPT_DONE, OPT_REFRESH, OPT_SKIP, PLAY_CARD_MASK, PLAY_LINE_SHIFT, play_card_of, play_face_up,
    play_line_of, rearrange_perm, rearrange_side,
)
from sim.engine.rng cimport mix64, times_gamma
from strategies._explain cimport Explanation, register_explainer, M_EVALUATION, M_MEAN_EVALUATION
from strategies.declared import SEARCH, by_key

# Each job in its own include, in this order (a later one calls an earlier one's functions):
include "_bots_evaluation.pxi"     # the evaluation of a position
include "_bots_policy.pxi"         # the default policy for choices inside effects and lookahead copies
include "_bots_loops.pxi"          # loop avoidance: a seat's view and its memory
include "_bots_greedy.pxi"         # greedy one-ply
include "_bots_search.pxi"         # determinized search
include "_bots_explain.pxi"        # why each move (replays)


# -- Python-facing configuration ----------------------------------------------------------------

STYLE_WEIGHTS = {
    # w_compiled, w_value, w_margin, w_ready, w_control, w_hand, w_near, w_opponent, w_deck
    "greedy":  (60.0, 1.0, 0.5, 12.0, 4.0, 1.5, 0.0, 1.0, 0.0),
    "rush":    (60.0, 1.5, 0.2, 20.0, 1.0, 1.0, 2.0, 0.6, 0.0),
    "disrupt": (60.0, 0.8, 0.8, 10.0, 3.0, 1.5, 0.0, 1.6, 0.0),
    "control": (60.0, 1.0, 0.6, 12.0, 14.0, 2.0, 0.0, 1.0, 0.0),
    "search":  (60.0, 1.0, 0.5, 12.0, 4.0, 1.5, 0.0, 1.0, 0.0),
}

cdef Evaluation _default_evaluation = Evaluation(STYLE_WEIGHTS["greedy"])
DEFAULT = &_default_evaluation.products

_fill_pattern_after(constants()["perms"])
_fill_down_line_bit()
_fill_all_allowed()
_fill_pile_keys()


cdef class Search:
    """A search seat's settings (its context), holding its Evaluation alive."""
    cdef SearchSettings settings
    cdef Evaluation evaluation

    def __cinit__(self, Evaluation evaluation, int sims, int depth):
        self.evaluation = evaluation
        self.settings.evaluation = &evaluation.products
        self.settings.sims = sims
        self.settings.depth = depth


SEARCH_DEFAULTS = {k: int(p.default) for k, p in by_key(SEARCH).items()}     # strategies/declared.py


def configure(SeatConfig seat, str bot, dict weights, int sims=SEARCH_DEFAULTS["sims"],
              int depth=SEARCH_DEFAULTS["depth"]):
    """Make `seat` play with a built-in bot: 'greedy', a style ('rush', 'disrupt', 'control')
    or 'search'; weights override the style's defaults by name (w_control=...)."""
    cdef Evaluation evaluation
    cdef Search search
    if bot not in STYLE_WEIGHTS:
        raise ValueError(f"unknown bot {bot!r}")
    base = list(STYLE_WEIGHTS[bot])
    for k, v in weights.items():
        base[WEIGHT_NAMES.index(k)] = float(v)
    evaluation = Evaluation(base)
    if bot == "search":
        search = Search(evaluation, sims, depth)
        seat.set_decider(search_decide, &search.settings, search)
    else:
        seat.set_decider(greedy_decide, &evaluation.products, evaluation)


# -- shared with other bot extensions (strategies/_bots.pxd) ---------------------------------------

cdef int default_decide(State* g, int p, int kind) noexcept nogil:
    """The rollout policy with the default weights (greedy's): for other extensions' lookahead."""
    return rollout_decide(DEFAULT, g, p, kind)


cdef int default_choice(State* g, int p, int kind) noexcept nogil:
    """A greedy seat's answer to a decision that is not an action (the documented rule, the
    rearrangements weighed by the default evaluation, the stalled seat's variation)."""
    return greedy_decide(DEFAULT, g, p, kind)


cdef void note_turn_of(State* g, int p, uint64_t field) noexcept nogil:
    note_turn(g, p, field)


cdef void remember_action(RecentActions* r, uint64_t seen, int32_t action) noexcept nogil:
    remember(r, seen, action)
