# Every choice is a decision: the engine fills g.opts with the legal options and asks the player's
# strategy (11.2). A decision with one option is taken without asking. Options are encoded as
# options.pxd says; a halt (Halt in _core.pxd) stops the game for the caller.

from libc.stdlib cimport realloc

# Log kinds (LG_*) are generated from sim/cards/vocabulary/ with the verbs (_vocab_decl.pxi).

cdef void log_add(State* g, int kind, int player, int card, int target, int a, int b) noexcept nogil:
    cdef LogEntry* e
    cdef int cap
    if not g.logging:
        return
    if g.nlog >= g.caplog:
        cap = g.caplog * 2 if g.caplog > 0 else 256
        e = <LogEntry*>realloc(g.log, cap * sizeof(LogEntry))
        if e == NULL:
            out_of_memory(g)
            return
        g.log = e
        g.caplog = cap
    e = &g.log[g.nlog]
    g.nlog += 1
    e.kind = kind
    e.depth = g.depth
    e.player = player
    e.card = card
    e.target = target
    e.a = a
    e.b = b

cdef void ev_rec(State* g, int kind, int player, int card, int line, int extra) noexcept nogil:
    """Append a dataset event (plays, draws, deletes, compiles, control) when recording."""
    cdef EventRec* e
    if g.evbuf == NULL:
        return
    if g.nev >= g.evcap:
        e = <EventRec*>realloc(g.evbuf, g.evcap * 2 * sizeof(EventRec))
        if e == NULL:
            out_of_memory(g)
            return
        g.evbuf = e
        g.evcap = g.evcap * 2
    e = &g.evbuf[g.nev]
    g.nev += 1
    e.turn = g.turn
    e.player = player
    e.kind = kind
    e.card = card
    e.line = line
    e.extra = extra

cdef void out_of_memory(State* g) noexcept nogil:
    """A buffer could not grow: stop the game (the buffer keeps what it had); the Python caller
    raises MemoryError."""
    g.halt = HALT_NO_MEMORY

cdef bint restricted(State* g, int player, int kind, int32_t opt) noexcept nogil:
    """Is this option forbidden by the player's restrictions (restricted play)?"""
    cdef const SeatRestrictions* sp = &g.restrictions[player]
    cdef int c, d, i
    if sp.restrict == 0 and sp.avoid_faceup[0] < 0 and sp.avoid_card[0] < 0 and sp.avoid_protocol[0] < 0:
        return False
    if kind != D_ACTION and kind != D_PLAY:
        return False
    if opt == OPT_REFRESH:
        return (sp.restrict & R_NO_REFRESH_WITH_CONTROL) != 0 and g.control == player
    c = play_card_of(opt)
    d = g.def_id[c]
    if play_face_up(opt):
        if sp.restrict & R_NO_FACEUP:
            return True
        for i in range(NAVOID):
            if sp.avoid_faceup[i] == d:
                return True
    elif sp.restrict & R_NO_FACEDOWN:
        return True
    for i in range(NAVOID):
        if sp.avoid_card[i] == d or (sp.avoid_protocol[i] >= 0 and sp.avoid_protocol[i] == g.cdefs[d].protocol):
            return True
    return False

cdef void apply_restrictions(State* g, int player, int kind) noexcept nogil:
    """Drop restricted options. If none is left the player passes (restricted play: the
    restricted player simply cannot do those things)."""
    cdef int i, k = 0
    cdef int32_t keep[MAXOPT]
    for i in range(g.nopts):
        if not restricted(g, player, kind, g.opts[i]):
            keep[k] = g.opts[i]
            k += 1
    if k < g.nopts:
        for i in range(k):
            g.opts[i] = keep[i]
        g.nopts = k

cdef int random_option(State* g, int player) noexcept nogil:
    return g.opts[rng_below(g, seat_stream(player), g.nopts)]

cdef size_t lookahead_bytes() noexcept nogil:
    """Bytes of a State up to its scratch tail (State.opts, see _core.pxd)."""
    cdef State probe            # only the addresses of its fields are taken
    return <size_t>(<char*>&probe.opts[0] - <char*>&probe)

# The lookahead copy's length, held in a variable set at import: with a length known only at run
# time the C compiler calls the C library's memcpy (vector moves) instead of inlining `rep movsq`,
# which is slower for a copy this size.
cdef size_t LOOKAHEAD_BYTES = lookahead_bytes()

cdef void copy_for_lookahead(State* dst, State* src) noexcept nogil:
    """Copy a game for a lookahead run: everything but the scratch tail (see State in _core.pxd):
    the option list, which the engine always writes before it reads; the cards' epochs, which a
    run only compares with values it read itself; the record's statistics and compile record,
    only counted up and appended to. About a quarter of the bytes of a whole copy, and bots make one
    per candidate action. The seats' restrictions come along only when a seat plays restricted
    (ask reads them in the copy)."""
    memcpy(dst, src, LOOKAHEAD_BYTES)
    dst.turn_hook[0] = NULL                # a copy's turns are not the seats' real turns
    dst.turn_hook[1] = NULL
    if src.restricted[0] | src.restricted[1]:
        memcpy(dst.restrictions, src.restrictions, sizeof(src.restrictions))

cdef int ask(State* g, int player, int kind) noexcept nogil:
    """Answer the decision in g.opts for player; returns the chosen option, or -1 when there is
    none or when the game halts to wait for an answer from outside (g.halt)."""
    cdef int k, n, choice
    if g.halt or g.nopts <= 0:
        return -1
    if g.checking:
        k = check_invariants(g, False)
        if k:
            g.violation = k
            g.halt = HALT_VIOLATION
            return -1
    if kind == D_DRAFT and g.draft_pick[player] != NULL and g.strat[player] != ST_SCRIPT:
        return g.draft_pick[player](g.draft_ctx[player], g, player, kind)
    if kind == D_ACTION and g.forced >= 0:
        choice = g.forced                  # lookahead: the action being evaluated
        g.forced = NO_FORCED
        return choice
    if g.restricted[player] and g.strat[player] != ST_SCRIPT:
        apply_restrictions(g, player, kind)
    n = g.nopts
    if n == 0:
        return -1
    if n == 1:
        return g.opts[0]
    if g.strat[player] == ST_EXTERNAL:
        g.dkind = kind
        choice = g.decide[player](g.seat_ctx[player], g, player, kind)
        log_add(g, LG_DECISION, player, -1, -1, kind, <int16_t>choice)
        return choice
    if g.strat[player] == ST_PYTHON:
        choice = ask_python(g, player, kind)
        if choice < 0:
            g.halt = HALT_PYTHON_ERROR
            return -1
        log_add(g, LG_DECISION, player, -1, -1, kind, <int16_t>choice)
        return choice
    if g.strat[player] == ST_SCRIPT:
        if g.script_pos >= g.nscript:
            g.halt = HALT_PENDING
            g.dkind = kind
            g.dplayer = player
            g.dsrc = g.cur_dec_src
            g.dbox = g.cur_dec_box
            return -1
        k = g.script[g.script_pos]
        g.script_pos += 1
        if k < 0 or k >= n:
            g.halt = HALT_BAD_ANSWER    # an answer out of range: stop, the caller reports it
            g.dkind = kind
            g.dplayer = player
            return -1
    else:
        k = rng_below(g, seat_stream(player), n)
    log_add(g, LG_DECISION, player, -1, -1, kind, <int16_t>g.opts[k])
    return g.opts[k]


cdef int ask_python(State* g, int player, int kind) noexcept nogil:
    """A user strategy written in Python (slower: the GIL is taken for each decision)."""
    with gil:
        try:
            return _call_python_strategy(g, player, kind)
        except BaseException as e:          # reported by the caller, never swallowed silently
            _python_errors.append(e)
            return -1
