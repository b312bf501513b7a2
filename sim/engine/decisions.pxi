# Every choice is a decision: the engine fills g.opts with the legal options and asks the player's
# strategy (11.2). A decision with one option is taken without asking.

from libc.stdlib cimport realloc

cdef enum LogKind:
    LG_TURN = 1
    LG_DECISION
    LG_PLAY
    LG_DRAW
    LG_DISCARD
    LG_FLIP
    LG_DELETE
    LG_RETURN
    LG_SHIFT
    LG_COMPILE
    LG_CONTROL
    LG_REFRESH
    LG_REARRANGE
    LG_TRIGGER
    LG_WIN
    LG_REVEAL
    LG_GIVE
    LG_TAKE
    LG_CANCEL
    LG_DRAFT
    LG_PHASE
    LG_SHUFFLE
    LG_DENY
    LG_SKIP

cdef void log_add(Game* g, int kind, int player, int card, int target, int a, int b) noexcept nogil:
    cdef LogEntry* e
    if not g.logging:
        return
    if g.nlog >= g.caplog:
        g.caplog = g.caplog * 2 if g.caplog > 0 else 256
        g.log = <LogEntry*>realloc(g.log, g.caplog * sizeof(LogEntry))
    e = &g.log[g.nlog]
    g.nlog += 1
    e.kind = kind
    e.depth = g.depth
    e.player = player
    e.card = card
    e.target = target
    e.a = a
    e.b = b

cdef void ev_rec(Game* g, int kind, int player, int card, int line, int extra) noexcept nogil:
    """Append a dataset event (plays, draws, deletes, compiles, control) when recording."""
    cdef EventRec* e
    if g.evbuf == NULL:
        return
    if g.nev >= g.evcap:
        g.evcap = g.evcap * 2
        g.evbuf = <EventRec*>realloc(g.evbuf, g.evcap * sizeof(EventRec))
    e = &g.evbuf[g.nev]
    g.nev += 1
    e.turn = g.turn
    e.player = player
    e.kind = kind
    e.card = card
    e.line = line
    e.extra = extra

cdef int ask(Game* g, int player, int kind) noexcept nogil:
    """Answer the decision in g.opts for player; returns the chosen option, or -1 when there is
    none or when the game halts to wait for an answer from outside (g.halt)."""
    cdef int k, n = g.nopts
    if g.halt or n <= 0:
        return -1
    if g.checking:
        k = check_invariants(g, False)
        if k:
            g.violation = k
            g.halt = 3
            return -1
    if n == 1:
        return g.opts[0]
    if g.strat[player] == ST_SCRIPT:
        if g.script_pos >= g.nscript:
            g.halt = 1
            g.dkind = kind
            g.dplayer = player
            return -1
        k = g.script[g.script_pos]
        g.script_pos += 1
        if k < 0 or k >= n:
            g.halt = 2          # an answer out of range: stop, the caller reports it
            g.dkind = kind
            g.dplayer = player
            return -1
    else:
        k = rng_below(g, 1 + player, n)
    log_add(g, LG_DECISION, player, -1, -1, kind, <int16_t>g.opts[k])
    return g.opts[k]
