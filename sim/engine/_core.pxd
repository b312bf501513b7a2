# cython: language_level=3
"""C-level interface of the rules engine: compiled card tables, the game state and the calls a
strategy needs. Everything here is plain C data so a whole game can run without the GIL."""

from libc.stdint cimport int8_t, int16_t, int32_t, uint8_t, uint16_t, uint32_t, uint64_t
from sim.engine.rng cimport KEY_BOT, KEY_ENGINE, next_word, word_below

cdef enum:
    NPLAYERS = 2
    NLINES = 3
    MAXCARDS = 36          # 2 players x 3 protocols x 6 cards
    MAXOPT = 256
    NBOX = 3               # top, middle, bottom
    MAXCE = 128            # compile events kept per game
    MAXNOTE = 40

# -- compiled card vocabulary (see docs/cards.md) ---------------------------------------------
# The Verb and CountKind enums, the log kinds and their notes, the selector, trigger, passive,
# zone, phase, end reason, decision, restriction and event enums, the Step struct and the bots'
# default target per verb are generated from sim/cards/vocabulary/ (setup.py runs
# sim/engine/vocab_gen.py).
include "_vocab_decl.pxi"

cdef struct CardDef:
    int16_t protocol
    int8_t value
    uint8_t trig[3]
    uint8_t by_opp[3]        # after-triggers: 0 your action, 1 the opponent's, 2 either player's
    uint8_t during[3]        # after-triggers: 0 any turn, 1 your turn, 2 the opponent's turn
    uint8_t here[3]          # after_play: only plays into this card's line
    uint8_t cover_same[3]    # covered: only when covered by a face-up card of this protocol
    int16_t step_start[3]
    int16_t step_len[3]
    uint32_t passive[3]
    int8_t facedown_value
    int8_t line_value
    uint8_t line_value_opp
    uint8_t line_value_cond   # 1: only with a face-up card of another protocol in this stack
    int8_t per_facedown
    int8_t per_hand
    int8_t per_opp_card
    uint8_t self_play        # SelfPlay bits
    # a restriction per box (PA_DENY in passive[box]): the Deny action, whose cards (Whose), their
    # face (Face), who performs (Whose, relative to this card's side), 1: only in this card's line;
    # the card's value (bit v: value v; 0: any), protocol (1: this card's, 2: another; face-up
    # cards only), covered (1: covered only, 2: uncovered only; 0: either)
    uint8_t deny[3]
    uint8_t deny_whose[3]
    uint8_t deny_face[3]
    uint8_t deny_by[3]
    uint8_t deny_line[3]
    uint8_t deny_values[3]
    uint8_t deny_protocol[3]
    uint8_t deny_covered[3]
    # derived when the pool is loaded (CorePool), for the per-line cache (zones.pxi)
    uint32_t trig_bits       # bit t: one of the boxes has trigger t
    uint32_t any_passive     # union of passive[0..2]

# -- game state --------------------------------------------------------------------------------
# why game_run stopped before the game ended (State.halt; 0: it did not stop)
cdef enum Halt:
    HALT_NONE = 0
    HALT_PENDING = 1           # a decision needs an answer from outside (the script ran out)
    HALT_BAD_ANSWER = 2        # a scripted answer out of range
    HALT_VIOLATION = 3         # an invariant check failed (checking on)
    HALT_HORIZON = 4           # the horizon turn ended (lookahead, replay until a turn)
    HALT_PYTHON_ERROR = 5      # a Python strategy raised (the error waits in _python_errors)
    HALT_NO_MEMORY = 6         # an allocation failed inside nogil code (log, event buffer)

cdef enum Strategy:
    ST_RANDOM, ST_SCRIPT, ST_EXTERNAL, ST_PYTHON

# random streams of a game (State.ctr): the game's own, then one per seat's strategy
cdef enum:
    STREAM_GAME = 0

# "none" of the lookahead fields a bot sets on its copies (State.forced, State.horizon_turn)
cdef enum:
    NO_FORCED = -1
    NO_HORIZON = -1

cdef enum:
    NAVOID = 8
    MAXPROTO = 64

cdef struct EventRec:
    int16_t turn
    int8_t player          # drawer, player, owner of the deleted card, compiler, control taker
    int8_t kind
    int16_t card           # card def id (compile: protocol id; control: -1)
    int8_t line
    int8_t extra           # delete: 1 if by a compile; play: 1 if by an effect

# A seat's decision function (and a seat's draft hook): the chosen option among g.opts for the
# decision `kind` of `player`. `ctx` is the seat's opaque context, whatever its strategy set it to
# (its settings, evaluation, tables: strategies/); the engine only passes it along.
ctypedef int (*decide_fn_t)(const void* ctx, State* g, int player, int kind) noexcept nogil

# A seat's memory of its own recent action decisions (the bots' loop avoidance,
# strategies/_bots.pyx): a ring of hashes of what the seat saw and the action it took there, and
# how long the field has stood still.
# The engine only zeroes it with the game; lookahead copies leave it out (State's tail).
cdef enum:
    NRECENT = 8

cdef struct RecentActions:
    uint64_t seen[NRECENT]             # hash of the seat's view at the decision (0: empty slot)
    int32_t action[NRECENT]            # the action option it took there
    int32_t next                       # the slot the next decision overwrites
    uint64_t field                     # hash of the seat's view of the field at its last turn's first decision
    int32_t still                      # how many of its turns in a row found the field unchanged
    int16_t turn                       # the turn of its last decision

cdef struct SeatRestrictions:
    uint16_t restrict                  # Restrict bits
    int8_t restricted                  # any restriction at all (fast path for the common case)
    int16_t avoid_faceup[NAVOID]       # card def ids never played face-up (-1: unused)
    int16_t avoid_card[NAVOID]         # card def ids never played at all
    int16_t avoid_protocol[NAVOID]     # protocol ids whose cards are never played

cdef struct LogEntry:
    uint8_t kind
    int8_t depth
    int8_t player
    int8_t card
    int8_t target
    int8_t a
    int16_t b

cdef struct State:
    # compiled pool (owned by the Python Pool object)
    const CardDef* cdefs
    const Step* steps
    const int16_t* proto_cards      # nprotocols x 6 card-def ids, by value order
    int16_t nprotocols
    # randomness: one counter-based stream for the game, one per player's strategy
    uint64_t seed
    uint64_t ctr[3]
    # card instances
    int16_t def_id[MAXCARDS]
    int8_t owner[MAXCARDS]
    int8_t face_up[MAXCARDS]
    int8_t zone[MAXCARDS]
    int8_t side[MAXCARDS]
    int8_t line[MAXCARDS]
    # zones (decks: top card at the end)
    int8_t deck[2][MAXCARDS]
    int8_t ndeck[2]
    int8_t hand[2][MAXCARDS]
    int8_t nhand[2]
    int8_t trash[2][MAXCARDS]
    int8_t ntrash[2]
    int8_t stack[2][3][MAXCARDS]
    int8_t nstack[2][3]
    # protocols and turn
    int16_t proto[2][3]
    int8_t compiled[2][3]
    int16_t drafted[6]              # picks in draft order
    int16_t dealt[2][3]             # each side's protocols in draft order (the record's)
    int8_t ndrafted
    int8_t control                  # -1 neutral
    int8_t active
    int8_t first_player
    int8_t phase
    int16_t turn
    int16_t turn_cap
    int16_t no_compile_turn[2]
    int8_t winner                   # -1 none, 0/1, 2 draw
    int8_t end_reason
    int16_t loop_card               # definition whose text hit the loop bound (ER_LOOP_GUARD); -1 none
    # decisions
    int8_t strat[2]
    int8_t restricted[2]               # restrictions[p].restricted, here so that lookahead copies leave them out
    decide_fn_t decide[2]              # ST_EXTERNAL: the function that answers for this seat
    const void* seat_ctx[2]            # its context (ST_EXTERNAL); ST_PYTHON: a borrowed Python object with _choose()
    decide_fn_t turn_hook[2]           # real games only (NULL in lookahead copies): called at each turn's start
    const void* turn_ctx[2]            # with this context (the seat's own, which a wrapping decider leaves alone)
    int16_t hooked_turn                # the last turn whose start the hooks were told of (game_run, PH_START)
    int32_t forced                     # lookahead: the next action decision takes this option (NO_FORCED: none)
    int16_t horizon_turn               # lookahead: halt (HALT_HORIZON) when this turn ends; NO_HORIZON never
    int8_t cur_verb                    # verb of the step choosing targets (bots' context)
    int8_t cur_dec_src                 # card whose text asks the current decision
    int8_t cur_dec_box                 # and the box of that text (the page names both)
    int8_t halt                        # Halt
    int8_t dkind
    int8_t dplayer
    int8_t dsrc                        # the pending decision's asking card and box (cur_dec_*), -1: none
    int8_t dbox
    int16_t nopts
    const int32_t* script
    int32_t nscript
    int32_t script_pos
    # effect bookkeeping
    uint8_t ev[2]
    uint8_t evl[2]                  # lines each player played a card into (after_play "here")
    int32_t guard
    int8_t depth
    int8_t cur_src
    int8_t checking                 # run invariant checks (tests)
    int8_t violation
    int8_t compiling_line           # line being compiled: cards uncovered there resolve nothing (4.1)
    int8_t has_deny                 # a card of this game has a restriction (zones.pxi denied(); set when dealt)
    int16_t nce                     # compile events recorded (ce_* below)
    # derived from the field, recomputed lazily when field_ver moves on (zones.pxi)
    uint32_t field_ver
    uint32_t cache_ver
    uint32_t pas[2][3]                 # active passive flags per side and line
    int8_t perhand[2][3]               # Clarity 0: line bonus per card in that side's hand
    int8_t fdv[2][3]                   # face-down value in that stack (-1: the default 2)
    int16_t lval[2][3]                 # line values
    uint32_t trig_mask[2]              # bit t: a face-up card on that side has a box with trigger t
    uint32_t trig_line[2][3]           # the same per stack (trig_mask is their union)
    uint8_t stale_lines                # bit l: line l changed since the last refresh (0: all)
    # per-game events for the dataset (only when evbuf is set)
    EventRec* evbuf
    int32_t nev
    int32_t evcap
    # readable log (only when logging)
    int8_t logging
    LogEntry* log
    int32_t nlog
    int32_t caplog
    # tail left out of lookahead copies (copy_for_lookahead): the options of the current
    # decision (refilled before every decision), the cards' epochs (only compared with a value
    # the same game_run read from them), the statistics and the compile record (only counted
    # up and appended to, read for the real game's record), the draft hooks (lookahead starts
    # after the draft), the bots' recent actions (the real game's) and the seats' restrictions
    # (copied when a seat has them: State.restricted).
    # Keep opts first: the copy stops there.
    int32_t opts[MAXOPT]
    uint32_t epoch[MAXCARDS]           # bumped when a card's running text must stop (zones.pxi)
    # statistics for the record
    int16_t plays_up[2]
    int16_t plays_down[2]
    int16_t refreshes[2]
    int16_t control_gains[2]
    SeatRestrictions restrictions[2]
    RecentActions recent[2]            # per seat, for its bot (strategies/_bots.pyx)
    decide_fn_t draft_pick[2]          # a seat's own draft (strategies/_draft.pyx); NULL: its strategy drafts
    const void* draft_ctx[2]           # that draft's context (its tables)
    int16_t ce_turn[MAXCE]
    int8_t ce_player[MAXCE]
    int8_t ce_line[MAXCE]
    int16_t ce_proto[MAXCE]
    int8_t ce_recompile[MAXCE]

cdef void game_run(State* g) noexcept nogil
cdef int line_value(State* g, int p, int l) noexcept nogil
cdef void line_values(State* g, int lv[2][3]) noexcept nogil
cdef void copy_for_lookahead(State* dst, State* src) noexcept nogil
cdef int card_value(State* g, int c) noexcept nogil
cdef int apply_perm(State* g, int p, int perm) noexcept nogil
cdef int random_option(State* g, int player) noexcept nogil
cdef void shuffle_slots(State* g, int stream, int8_t* slots, int n) noexcept nogil
# honest determinization (hidden.pxi): shared by the bots and the engine's honesty test hook
cdef void redeal_hidden(State* src, State* dst, int p, uint64_t seed, uint64_t* counter,
                        uint64_t key) noexcept nogil
cdef void determinize(State* src, State* dst, int p, int stream) noexcept nogil


# -- a game's random streams (the words themselves: sim/engine/rng.pxd) -------------------------

cdef inline int seat_stream(int p) noexcept nogil:
    """The stream of seat p's strategy."""
    return 1 + p


cdef inline uint64_t rng_next(State* g, int stream) noexcept nogil:
    """The engine's next word on one of the game's streams."""
    return next_word(g.seed, &g.ctr[stream], KEY_ENGINE + stream)


cdef inline int rng_below(State* g, int stream, int n) noexcept nogil:
    """Uniform integer in [0, n) from the engine's draws on a stream."""
    return word_below(rng_next(g, stream), n)


cdef inline int bot_below(State* g, int stream, int n) noexcept nogil:
    """Uniform integer in [0, n) from a bot's private draws: the seat's counter, another key, so a
    bot's own choices never replay the engine's words."""
    return word_below(next_word(g.seed, &g.ctr[stream], KEY_BOT + stream), n)


# -- the pending decision ------------------------------------------------------------------------

cdef inline bint has_option(State* g, int32_t opt) noexcept nogil:
    """Whether opt is one of the pending decision's options (a planned or recorded answer still legal)."""
    cdef int i
    for i in range(g.nopts):
        if g.opts[i] == opt:
            return True
    return False


cdef class SeatConfig:
    """How one seat decides: the engine's random player, a decision function with its context
    (a C bot of strategies/), or a Python object; plus the restrictions wrapped around it and a
    draft hook. The engine knows no strategy: each installs itself with set_decider/set_draft_hook."""
    cdef int8_t strat
    cdef decide_fn_t decide
    cdef const void* ctx
    cdef object owner                  # keeps ctx alive (the strategy's settings object, or the Python strategy)
    cdef SeatRestrictions restrictions
    cdef decide_fn_t draft_pick
    cdef const void* draft_ctx
    cdef decide_fn_t turn_hook
    cdef const void* turn_ctx
    cdef object draft_owner            # keeps draft_ctx alive
    cdef public str spec
    cdef void set_decider(self, decide_fn_t decide, const void* ctx, object owner)
    cdef void set_draft_hook(self, decide_fn_t pick, const void* ctx, object owner)
    cdef void set_turn_hook(self, decide_fn_t hook, const void* ctx)
