# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""`ismcts`: single-observer information-set Monte Carlo tree search (Cowling, Powley & Whitehouse,
"Information Set Monte Carlo Tree Search", IEEE TCIAIG 2012), a strong player that owes nothing to
greedy's hand-tuned evaluation weights.

One tree over the searching player's information sets. Each iteration draws a fresh honest
determinization (the engine's `determinize`, sim/engine/hidden.pxi: everything the searcher cannot
see is re-dealt from the bot's own stream after a canonical sort), walks the tree by UCB1 with availability counts,
expands one untried action, plays the game out to its end with a rollout policy, and backs the
result up (win 1, draw 0.5, loss 0, from the point of view of the player who moved into each node).

What goes through the tree: the turn's *action* decisions of both players. The engine resolves
effects recursively on the C stack, so a copy of the game taken inside an effect cannot be resumed;
only action decisions (top of the turn loop) are restartable. Choices inside effects (targets,
"may", order, discards, compile line) use a cheap fixed rule policy: the documented default
heuristic shared with the other bots (rules, no weights) and, for rearrangements, a weight-free
rule (see `rearrange_rule`).

Tree keys are what the searcher observes: its own plays by card identity, line and face; the
opponent's face-up plays by identity, line and face; the opponent's face-down plays by line only
(the card is hidden); refresh. So branches mean the same thing in every determinization.

The tree walk runs inside the engine: the copy's decision function is `walk_decide`, whose context
is the `Walk` (the copy, the arena and where the walk stands). The seat's own context is its
`IsmctsSettings` (iterations, exploration constant, rollout policy).

Memory: a node arena per seat index (0, 1), thread-local, allocated (and checked) at configure time
to hold `iters` + 1 nodes and reused by every decision; no allocation during play.
"""

from libc.math cimport log, sqrt
from libc.stdlib cimport realloc
from libc.string cimport memcpy
from libc.stdint cimport int8_t, int32_t
from sim.engine._core cimport (
    State, SeatConfig, game_run, line_value, apply_perm, random_option, bot_below, seat_stream,
    ST_RANDOM, D_ACTION, D_CONTROL_REARRANGE, D_REARRANGE, NO_FORCED, NO_HORIZON, MAXOPT,
)
from sim.engine.options cimport (
    OPT_REFRESH, OPT_SKIP, play_card_of, play_face_up, play_line_of, play_opp_side, play_placement,
    rearrange_perm, rearrange_side,
)
from strategies._bots cimport prepare_copy, heuristic, takes_lead
from strategies._explain cimport Explanation, register_explainer, M_VISITS
from strategies._declared cimport MAXPLAN
from strategies._learned cimport (
    Mlp, Settings, NOANS, PLAN_TURN, fill_mlp, follow_plan, plan_turn, plan_ahead, plan_holds, settle_plan,
    win_probability,
)
from strategies.declared import ISMCTS, ISMCTS_MODEL_C, by_key

cdef enum Rollout:
    RO_RANDOM = 0          # uniform over the legal options, every decision (pure Monte Carlo)
    RO_RULES = 1           # the cheap rule policy below (no evaluation weights)

ROLLOUTS = ("random", "rules")

cdef enum Leaf:
    LEAF_ROLLOUT = 0       # play the game out from the new node (the rollout policy)
    LEAF_MODEL = 1         # stop at the end of the new node's turn; the model's win probability

LEAVES = ("rollout", "model")
DEFAULT_LEAF = "rollout"

cdef enum Choices:
    CHOICES_RULES = 0      # the seat's choices inside effects by the weight-free rule (rules_sub)
    CHOICES_MODEL = 1      # every choice of the real game: the learned player's planner (its turn, before its action, theirs)

CHOICES = ("rules", "model")
DEFAULT_CHOICES = "rules"  # leaf=model plays choices=model unless told (strategies/spec.py)
# the numbers: strategies/declared.py (ISMCTS; leaf=model's exploration constant ISMCTS_MODEL_C)
DEFAULT_ITERS = int(by_key(ISMCTS)["iters"].default)
DEFAULT_C = by_key(ISMCTS)["c"].default
DEFAULT_MODEL_C = ISMCTS_MODEL_C
DEFAULT_ROLLOUT = "rules"
MAX_ITERS = int(by_key(ISMCTS)["iters"].hi)     # a tree of MAX_ITERS + 1 nodes (1.2 MB per seat index) at most

cdef enum Mode:
    M_TREE = 0             # descending the tree
    M_LEAVING = 1          # the expanded action is resolving (its choices use the rule policy)
    M_ROLLOUT = 2          # past the tree: the rollout policy plays to the end


cdef struct Node:
    int32_t key            # the observed action that leads here (action_key)
    int32_t parent
    int32_t child          # first child
    int32_t sibling        # next child of the same parent
    int32_t visits
    int32_t avail          # iterations in which this action was legal at the parent
    int32_t stamp          # last iteration that counted avail (legal options can repeat a key)
    int8_t player          # who took the action
    double reward          # summed results for `player`


cdef struct IsmctsSettings:
    int32_t iters           # iterations per action decision
    float c                 # UCB1's exploration constant (single precision, as it has always been kept)
    int8_t policy           # Rollout
    int8_t leaf             # Leaf
    const Mlp* mlp          # the model (leaf = model), owned by the seat's Ismcts object
    Settings* choices       # choices=model: the model's planner for the choices inside the turn (else NULL)


cdef struct Walk:
    State sim               # the iteration's copy; its seats' context is this Walk
    Node* nodes
    int32_t nnodes
    int32_t cap
    int32_t cur
    int32_t iter
    int8_t mode
    int8_t searcher
    int8_t policy
    int8_t leaf
    const Mlp* mlp
    double c


cdef extern from *:
    """
    static __thread void* ismcts_arena[2] = {0, 0};
    static __thread int ismcts_arena_cap[2] = {0, 0};
    """
    void* ismcts_arena[2]
    int ismcts_arena_cap[2]


# -- the rule policy (no evaluation weights) ---------------------------------------------------

cdef int nearest_open(State* g, int s) noexcept nogil:
    """Value of side s's highest line whose protocol is not compiled yet."""
    cdef int l, v, best = 0
    for l in range(3):
        if not g.compiled[s][l]:
            v = line_value(g, s, l)
            if v > best:
                best = v
    return best


cdef int rearrange_rule(State* g, int q) noexcept nogil:
    """Rearrangements: the order that leaves q's best open line highest and the opponent's lowest
    (an uncompiled protocol on q's biggest stack, a compiled one on theirs); skip on ties."""
    cdef State sim
    cdef int i, opt, best = 0, sc, bs = -1000
    for i in range(g.nopts):
        opt = g.opts[i]
        memcpy(&sim, g, sizeof(State))
        if opt != OPT_SKIP:
            apply_perm(&sim, rearrange_side(opt), rearrange_perm(opt))
        sc = nearest_open(&sim, q) - nearest_open(&sim, 1 - q)
        if sc > bs:
            bs = sc
            best = i
    return g.opts[best]


cdef int rules_sub(State* g, int q, int kind) noexcept nogil:
    """Choices inside effects: the shared rule heuristic, the weight-free rearrangement rule."""
    if kind == D_CONTROL_REARRANGE or kind == D_REARRANGE:
        return rearrange_rule(g, q)
    return heuristic(g, q, kind)


cdef int play_score(State* g, int q, int32_t opt) noexcept nogil:
    """How much a play helps q, by rule (no weights): the points it adds to q's own lines
    (face-down counts 2), less in a line whose protocol is already compiled; points given to the
    opponent count against; refresh only when nothing else is legal. (A variant that also rewarded
    making a line ready to compile played no better: docs/strategies.md.)"""
    cdef int l, v
    if opt == OPT_REFRESH:
        return -1000
    l = play_line_of(opt)
    v = g.cdefs[g.def_id[play_card_of(opt)]].value if play_face_up(opt) else 2
    if play_opp_side(opt):
        return -10 * v
    return 10 * v - (15 if g.compiled[q][l] else 0)


cdef int rules_action(State* g, int q) noexcept nogil:
    """Rollout action: one time in eight a uniform option, otherwise the best `play_score`,
    random among ties."""
    cdef int i, ties = 0, best = 0
    cdef double bs = -100000
    if bot_below(g, seat_stream(q), 8) == 0:
        return random_option(g, q)
    for i in range(g.nopts):
        if takes_lead(g, q, play_score(g, q, g.opts[i]), &bs, &ties):
            best = i
    return g.opts[best]


# -- the tree --------------------------------------------------------------------------------

cdef inline int32_t action_key(State* g, int q, int searcher, int32_t opt) noexcept nogil:
    """The action as the searcher observes it: player, line, face, side, and the card's identity
    unless the opponent plays it face-down."""
    cdef int32_t ident = 0
    if opt == OPT_REFRESH:
        return q | OPT_REFRESH
    if q == searcher or play_face_up(opt):
        ident = g.def_id[play_card_of(opt)] + 1
    return q | play_placement(opt) | (ident << 13)


cdef int option_of(State* g, int q, int searcher, int32_t key) noexcept nogil:
    """A legal option with this key; several (the opponent's hidden face-down plays into one
    line): one of them at random from q's stream."""
    cdef int i, n = 0, k
    for i in range(g.nopts):
        if action_key(g, q, searcher, g.opts[i]) == key:
            n += 1
    if n == 0:
        return g.opts[0]
    k = bot_below(g, seat_stream(q), n) if n > 1 else 0
    for i in range(g.nopts):
        if action_key(g, q, searcher, g.opts[i]) == key:
            if k == 0:
                return g.opts[i]
            k -= 1
    return g.opts[0]


cdef inline int32_t find_child(Node* nodes, int32_t parent, int32_t key) noexcept nogil:
    cdef int32_t ch = nodes[parent].child
    while ch >= 0 and nodes[ch].key != key:
        ch = nodes[ch].sibling
    return ch


cdef int32_t add_child(Walk* w, int32_t parent, int32_t key, int q) noexcept nogil:
    cdef int32_t ch = w.nnodes
    cdef Node* n = &w.nodes[ch]
    w.nnodes += 1
    n.key = key
    n.parent = parent
    n.child = -1
    n.sibling = w.nodes[parent].child
    n.visits = 0
    n.avail = 1
    n.stamp = w.iter
    n.player = q
    n.reward = 0
    w.nodes[parent].child = ch
    return ch


cdef int tree_step(Walk* w, int q) noexcept nogil:
    """Selection at the current node: count availability of every legal child, expand one untried
    action at random if any (and the arena has room), else take the UCB1 best."""
    cdef State* g = &w.sim
    cdef Node* nodes = w.nodes
    cdef Node* n
    cdef int32_t untried[256]
    cdef int i, j, nunt = 0, dup
    cdef int32_t k, ch, best = -1
    cdef double v, bv = -1e300
    for i in range(g.nopts):
        k = action_key(g, q, w.searcher, g.opts[i])
        ch = find_child(nodes, w.cur, k)
        if ch < 0:
            dup = 0
            for j in range(nunt):
                if untried[j] == k:
                    dup = 1
                    break
            if not dup:
                untried[nunt] = k
                nunt += 1
        elif nodes[ch].stamp != w.iter:
            n = &nodes[ch]
            n.stamp = w.iter
            n.avail += 1
            v = n.reward / n.visits + w.c * sqrt(log(<double>n.avail) / n.visits)
            if v > bv:
                bv = v
                best = ch
    if nunt > 0 and w.nnodes < w.cap:
        k = untried[bot_below(g, seat_stream(q), nunt)]
        w.cur = add_child(w, w.cur, k, q)
        w.mode = M_LEAVING
        if w.leaf == LEAF_MODEL:
            g.horizon_turn = g.turn        # the model scores the position where this turn ends
        return option_of(g, q, w.searcher, k)
    if best < 0:                       # arena full and nothing tried here: leave the tree
        w.mode = M_LEAVING
        if w.leaf == LEAF_MODEL:
            g.horizon_turn = g.turn
        return random_option(g, q) if w.policy == RO_RANDOM else rules_action(g, q)
    w.cur = best
    return option_of(g, q, w.searcher, nodes[best].key)


cdef int walk_decide(const void* ctx, State* g, int q, int kind) noexcept nogil:
    """Every decision of both players inside an iteration's copy (g is ctx's sim)."""
    cdef Walk* w = <Walk*>ctx
    if kind != D_ACTION:
        if w.mode == M_ROLLOUT and w.policy == RO_RANDOM:
            return random_option(g, q)
        return rules_sub(g, q, kind)
    if w.mode == M_TREE:
        return tree_step(w, q)
    if w.mode == M_LEAVING:
        w.mode = M_ROLLOUT
        if w.policy == RO_RANDOM:          # the engine's own random player is the fastest rollout
            g.strat[0] = ST_RANDOM
            g.strat[1] = ST_RANDOM
    if w.policy == RO_RANDOM:
        return random_option(g, q)
    return rules_action(g, q)


cdef double first_seat_result(Walk* w) noexcept nogil:
    """The iteration's result for seat 0: the game's (win 1, draw or no result 0.5, loss 0), or,
    where the copy stopped at the new node's turn end (leaf = model), the model's win probability
    from the searcher's view."""
    cdef int winner = w.sim.winner
    cdef double v
    if winner < 0 and w.leaf == LEAF_MODEL:
        v = win_probability(w.mlp, &w.sim, w.searcher)
        return v if w.searcher == 0 else 1.0 - v
    return 1.0 if winner == 0 else (0.0 if winner == 1 else 0.5)


cdef void backpropagate(Walk* w) noexcept nogil:
    """Count the iteration on the path from the last node reached up to the root, each node
    scoring the result for the player who moved into it."""
    cdef double v0 = first_seat_result(w)
    cdef int32_t i = w.cur
    cdef Node* n
    while i >= 0:
        n = &w.nodes[i]
        n.visits += 1
        if i != 0:
            n.reward += v0 if n.player == 0 else 1.0 - v0
        i = n.parent


cdef bint grow_tree(State* g, int p, const IsmctsSettings* settings, Walk* w) noexcept nogil:
    """The root's tree for p's action decision in g: `iters` iterations (False: no arena in this
    thread, configure was not called here)."""
    cdef int it, iters = settings.iters
    cdef Node* n
    if ismcts_arena[p] == NULL or ismcts_arena_cap[p] < 2:
        return False
    w.nodes = <Node*>ismcts_arena[p]
    w.cap = ismcts_arena_cap[p]
    if iters > w.cap - 1:
        iters = w.cap - 1
    w.c = settings.c
    w.policy = settings.policy
    w.leaf = settings.leaf
    w.mlp = settings.mlp
    w.searcher = p
    w.nnodes = 1
    n = &w.nodes[0]
    n.key = -1
    n.parent = -1
    n.child = -1
    n.sibling = -1
    n.visits = 0
    n.avail = 0
    n.stamp = 0
    n.player = 1 - p
    n.reward = 0
    for it in range(iters):
        prepare_copy(g, &w.sim, p, seat_stream(p))
        w.sim.decide[0] = walk_decide
        w.sim.decide[1] = walk_decide
        w.sim.seat_ctx[0] = w
        w.sim.seat_ctx[1] = w
        w.sim.forced = NO_FORCED
        w.sim.horizon_turn = NO_HORIZON
        w.cur = 0
        w.iter = it + 1
        w.mode = M_TREE
        game_run(&w.sim)
        backpropagate(w)
    return True


cdef int32_t most_visited(Walk* w, int p) noexcept nogil:
    """The root's most visited action of p (ties: better mean, then the first found); -1 if none."""
    cdef int32_t ch = w.nodes[0].child, best = -1
    cdef Node* n
    while ch >= 0:
        n = &w.nodes[ch]
        if n.player == p and (best < 0 or n.visits > w.nodes[best].visits or
                              (n.visits == w.nodes[best].visits and
                               n.reward * w.nodes[best].visits > w.nodes[best].reward * n.visits)):
            best = ch
        ch = n.sibling
    return best


cdef int ismcts_decide(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """The root: `iters` iterations, then the most visited action. ctx: the seat's IsmctsSettings."""
    cdef const IsmctsSettings* st = <const IsmctsSettings*>ctx
    cdef Walk w
    cdef int32_t best, action
    if kind != D_ACTION:
        if st.choices != NULL and plan_holds(&st.choices.plan, g, p):
            if st.choices.plan.origin == PLAN_TURN:
                settle_plan(st.choices, p)
            action = follow_plan(&st.choices.plan, g, kind)
            if action != NOANS:
                return action
        return rules_sub(g, p, kind)
    if not grow_tree(g, p, st, &w):
        action = rules_action(g, p)
    else:
        best = most_visited(&w, p)
        action = rules_action(g, p) if best < 0 else option_of(g, p, p, w.nodes[best].key)
    if st.choices != NULL:
        plan_turn(st.choices, g, p, action)
    return action


cdef int ismcts_turn(const void* ctx, State* g, int p, int kind) noexcept nogil:
    """A guided seat's turn hook (choices=model): the model plans the choices asked before its action."""
    cdef const IsmctsSettings* st = <const IsmctsSettings*>ctx
    if st.choices != NULL:
        plan_ahead(st.choices, g, p)
    return 0


cdef int first_option(State* g, int p, int32_t key) noexcept nogil:
    """The first legal option with this key (how an alternative reads; the choice is option_of's)."""
    cdef int i
    for i in range(g.nopts):
        if action_key(g, p, p, g.opts[i]) == key:
            return g.opts[i]
    return g.opts[0]


cdef int ismcts_explain(const void* ctx, State* g, int p, Explanation* out) noexcept nogil:
    """An ismcts seat's action decision as ismcts_decide weighs it: each root action's visits
    and mean result (a win 1, a draw 0.5). Without a tree (no arena here): no alternatives."""
    cdef const IsmctsSettings* st = <const IsmctsSettings*>ctx
    cdef Walk w
    cdef int32_t best, ch
    cdef Node* n
    out.n = 0
    out.nplan = 0
    out.measure = M_VISITS
    if not grow_tree(g, p, st, &w) or most_visited(&w, p) < 0:
        out.chosen = rules_action(g, p)
        tell_plan(st, g, p, out)
        return out.chosen
    best = most_visited(&w, p)
    out.chosen = option_of(g, p, p, w.nodes[best].key)
    ch = w.nodes[0].child
    while ch >= 0 and out.n < MAXOPT:
        n = &w.nodes[ch]
        if n.player == p:
            out.alt[out.n].option = out.chosen if ch == best else first_option(g, p, n.key)
            out.alt[out.n].count = n.visits
            out.alt[out.n].score = n.reward / n.visits if n.visits > 0 else 0
            out.alt[out.n].first = out.alt[out.n].score
            out.alt[out.n].allowed = 1
            out.n += 1
        ch = n.sibling
    tell_plan(st, g, p, out)
    return out.chosen


cdef void tell_plan(const IsmctsSettings* st, State* g, int p, Explanation* out) noexcept nogil:
    """With choices=model: the answers the model plans for the chosen action's turn (plan_turn, as
    ismcts_decide makes them after choosing)."""
    cdef int k
    if st.choices == NULL:
        return
    plan_turn(st.choices, g, p, out.chosen)
    out.nplan = st.choices.plan.n
    for k in range(out.nplan):
        out.plan_kind[k] = st.choices.plan.kind[k]
        out.plan_answer[k] = st.choices.plan.answer[k]


register_explainer(ismcts_decide, ismcts_explain)


# -- Python-facing configuration ----------------------------------------------------------------

cdef void ensure_arena(int nodes) except *:
    """Grow both seat indices' arenas in this thread to hold `nodes` nodes (never shrinks)."""
    cdef int p
    cdef void* mem
    for p in range(2):
        if ismcts_arena_cap[p] >= nodes:
            continue
        mem = realloc(ismcts_arena[p], nodes * sizeof(Node))
        if mem == NULL:
            raise MemoryError(f"ismcts: cannot allocate a tree of {nodes} nodes")
        ismcts_arena[p] = mem
        ismcts_arena_cap[p] = nodes


def arena_nodes() -> tuple:
    """Capacity (nodes) of this thread's two arenas (tests)."""
    return (ismcts_arena_cap[0], ismcts_arena_cap[1])


cdef class Ismcts:
    """An ismcts seat's settings (its context), with the model's network when its leaves are
    scored by the model."""
    cdef IsmctsSettings settings
    cdef Settings model           # the network, and the planner's settings and plan (choices=model)
    cdef public str model_hash

    def __cinit__(self, int iters, double c, int policy, int leaf, int choices, layers, str model_hash,
                  int inner, int branch):
        self.settings.iters = iters
        self.settings.c = c
        self.settings.policy = policy
        self.settings.leaf = leaf
        self.settings.mlp = NULL
        self.settings.choices = NULL
        self.model_hash = model_hash
        if layers:
            fill_mlp(&self.model.mlp, layers)
        if leaf == LEAF_MODEL:
            self.settings.mlp = &self.model.mlp
        if choices == CHOICES_MODEL:
            # the learned player's planner for one action (`inner` points, `branch` runs)
            self.model.sims = 1
            self.model.depth = 0
            self.model.inner = inner
            self.model.branch = branch
            self.model.top = 1
            self.model.reply = 0
            self.model.explore = 0
            self.model.plan.turn = -1
            self.settings.choices = &self.model


def configure(SeatConfig seat, int iters=DEFAULT_ITERS, double c=DEFAULT_C, str rollout=DEFAULT_ROLLOUT,
              str leaf=DEFAULT_LEAF, layers=None, str model_hash="", str choices=DEFAULT_CHOICES,
              int inner=0, int branch=0):
    """Make `seat` play ismcts with `iters` iterations per action decision, exploration constant
    `c`, a rollout policy ('random' or 'rules') and a leaf evaluation: 'rollout' (play the game
    out) or 'model' (the win probability of a model, `layers` as strategies/model.py gives them,
    where the new node's turn ends); its own choices inside the turn of the action it chose by
    'rules' (the weight-free rule) or by 'model' (the learned player's planner with that model,
    branching at `inner` decision points within `branch` runs: strategies/spec.py passes the learned
    player's defaults)."""
    cdef Ismcts settings
    if not 1 <= iters <= MAX_ITERS:
        raise ValueError(f"ismcts: iters must be 1..{MAX_ITERS}, got {iters}")
    if not 0 <= c <= 100:
        raise ValueError(f"ismcts: c must be 0..100, got {c}")
    if rollout not in ROLLOUTS:
        raise ValueError(f"ismcts: rollout must be one of {', '.join(ROLLOUTS)}, got {rollout!r}")
    if leaf not in LEAVES:
        raise ValueError(f"ismcts: leaf must be one of {', '.join(LEAVES)}, got {leaf!r}")
    if choices not in CHOICES:
        raise ValueError(f"ismcts: choices must be one of {', '.join(CHOICES)}, got {choices!r}")
    if (leaf == "model" or choices == "model") and not layers:
        raise ValueError("ismcts: leaf=model and choices=model need a model's layers")
    if choices == "model" and not (1 <= inner <= MAXPLAN and branch >= 1):
        raise ValueError(f"ismcts: choices=model needs the planner's inner (1..{MAXPLAN}) and branch (1 or more), "
                         f"got {inner} and {branch}")
    ensure_arena(iters + 1)
    settings = Ismcts(iters, c, ROLLOUTS.index(rollout), LEAVES.index(leaf), CHOICES.index(choices), layers,
                      model_hash, inner, branch)
    seat.set_decider(ismcts_decide, &settings.settings, settings)
    if choices == "model":
        seat.set_turn_hook(ismcts_turn, &settings.settings)
