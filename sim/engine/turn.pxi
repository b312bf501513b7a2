# The turn structure (rules 1, 3, 4): draft, start, control, compile, action, cache, end.

cdef int PERMS[6][3]
PERMS[0][0] = 0; PERMS[0][1] = 1; PERMS[0][2] = 2      # unchanged
PERMS[1][0] = 0; PERMS[1][1] = 2; PERMS[1][2] = 1      # swap middle and right
PERMS[2][0] = 1; PERMS[2][1] = 0; PERMS[2][2] = 2      # swap left and middle
PERMS[3][0] = 1; PERMS[3][1] = 2; PERMS[3][2] = 0
PERMS[4][0] = 2; PERMS[4][1] = 0; PERMS[4][2] = 1
PERMS[5][0] = 2; PERMS[5][1] = 1; PERMS[5][2] = 0      # swap left and right


# -- draft and deal (1.1, 1.2) -------------------------------------------------------------------

cdef void run_draft(State* g) noexcept nogil:
    """A picks 1, B 2, A 2, B 1 (A = first player); protocols go left to right in pick order."""
    cdef int order[6]
    cdef int i, k, p, pr, n, taken
    cdef int a = g.first_player
    order[0] = a; order[1] = 1 - a; order[2] = 1 - a; order[3] = a; order[4] = a; order[5] = 1 - a
    while g.ndrafted < 6 and not stopped(g):
        p = order[g.ndrafted]
        n = 0
        for pr in range(g.nprotocols):
            taken = 0
            for i in range(g.ndrafted):
                if g.drafted[i] == pr:
                    taken = 1
            if not taken and g.proto_cards[pr * 6] >= 0:
                g.opts[n] = pr
                n += 1
        g.nopts = n
        k = ask(g, p, D_DRAFT)
        if k < 0:
            return
        g.drafted[g.ndrafted] = k
        g.ndrafted += 1
        log_add(g, LG_DRAFT, p, -1, -1, 0, k)
    n = 0
    for i in range(6):
        p = order[i]
        k = 0
        while g.proto[p][k] >= 0:
            k += 1
        g.proto[p][k] = g.drafted[i]
    deal(g)

cdef void deal(State* g) noexcept nogil:
    """Build both 18-card decks from the protocols in play, shuffle, draw 5 each (1.2)."""
    cdef int p, k, j, c
    for p in range(2):
        for k in range(3):
            g.dealt[p][k] = g.proto[p][k]
        g.ndeck[p] = 0
        for k in range(3):
            for j in range(6):
                c = p * 18 + k * 6 + j
                g.def_id[c] = g.proto_cards[g.proto[p][k] * 6 + j]
                g.owner[c] = p
                g.side[c] = p
                g.face_up[c] = 0
                g.zone[c] = Z_DECK
                g.deck[p][g.ndeck[p]] = c
                g.ndeck[p] += 1
        shuffle_deck(g, p)
    note_restrictions(g)
    for p in range(2):
        draw_cards(g, p, 5)
        g.ev[p] = 0
    g.active = g.first_player
    g.turn = 1
    g.phase = PH_START
    log_add(g, LG_TURN, g.active, -1, -1, 0, g.turn)

cdef inline void turn_started(State* g) noexcept nogil:
    """A turn's start (a restartable point): the seats that asked for it are told (State.turn_hook),
    once per turn (State.hooked_turn), whichever path started the game (a batch's deal, a replay
    from its snapshot) and however often a halted game is resumed."""
    if g.hooked_turn == g.turn:
        return
    g.hooked_turn = g.turn
    if g.turn_hook[0] != NULL:
        g.turn_hook[0](g.turn_ctx[0], g, 0, -1)
    if g.turn_hook[1] != NULL:
        g.turn_hook[1](g.turn_ctx[1], g, 1, -1)

# -- phases ---------------------------------------------------------------------------------------

cdef inline void phase_triggers(State* g, int trig) noexcept nogil:
    """Start/End (3.1, 3.6): inline, so that a phase where no face-up card has the trigger (the
    usual case) costs a mask test and no call."""
    if may_trigger(g, 1u << trig):
        resolve_phase_triggers(g, trig)

cdef void resolve_phase_triggers(State* g, int trig) noexcept nogil:
    """Note the active player's active commands with this trigger, resolve them in their order."""
    cdef int32_t note[MAXNOTE]
    cdef int nn = 0, s, l, i, c, box
    cdef const CardDef* d
    for s in range(2):
        for l in range(3):
            if not (g.trig_line[s][l] & (1u << trig)):
                continue                   # no face-up card of this stack has the trigger
            for i in range(g.nstack[s][l]):
                c = g.stack[s][l][i]
                if g.owner[c] != g.active or not g.face_up[c]:
                    continue
                d = cdef_of(g, c)
                for box in range(3):
                    if d.trig[box] == trig and box_active(g, c, box) and nn < MAXNOTE:
                        note[nn] = noted_option(c, box)
                        nn += 1
    resolve_noted(g, note, nn)

cdef void check_control(State* g) noexcept nogil:
    cdef int p = g.active, l, ahead = 0
    for l in range(3):
        if line_value(g, p, l) > line_value(g, 1 - p, l):
            ahead += 1
    if ahead >= 2 and g.control != p:
        g.control = p
        g.control_gains[p] += 1
        log_add(g, LG_CONTROL, p, -1, -1, LN_CONTROL_TAKEN, 0)
        ev_rec(g, EK_CONTROL, p, -1, -1, 0)

cdef bint check_compile(State* g) noexcept nogil:
    """Returns True if the active player compiled (their action for the turn)."""
    cdef int p = g.active, l, n = 0, k
    if g.no_compile_turn[p] == g.turn:
        return False
    for l in range(3):
        if line_value(g, p, l) >= 10 and line_value(g, p, l) > line_value(g, 1 - p, l) \
                and not denied(g, DN_COMPILE, p, -1, -1, l):
            g.opts[n] = l
            n += 1
    if n == 0:
        return False
    g.nopts = n
    k = ask(g, p, D_COMPILE_LINE)
    if k < 0:
        return False
    compile_line(g, p, k)
    return True

cdef void control_rearrange(State* g, int p) noexcept nogil:
    """Spending the control component: return it to neutral, may rearrange one player's
    protocols (4.1, 4.5)."""
    cdef int n = 0, t, k
    g.control = -1
    log_add(g, LG_CONTROL, p, -1, -1, LN_CONTROL_NEUTRAL, 0)
    g.opts[n] = OPT_SKIP
    n += 1
    for t in range(2):
        if denied(g, DN_REARRANGE, p, t, -1, -1):
            continue
        for k in range(1, 6):
            g.opts[n] = rearrange_option(t, k)
            n += 1
    g.nopts = n
    k = ask(g, p, D_CONTROL_REARRANGE)
    if k < 0 or k == OPT_SKIP:
        return
    apply_perm(g, rearrange_side(k), rearrange_perm(k))
    log_add(g, LG_REARRANGE, p, -1, -1, rearrange_side(k), rearrange_perm(k))

cdef void compile_line(State* g, int p, int l) noexcept nogil:
    """Compile (4.1): spend control, delete every card in the line at once (no middle text from
    uncovering), mark the protocol Compiled or recompile, win with three (4.3)."""
    cdef Scope outer
    outer = scope_open(g)
    compile_body(g, p, l)
    if not stopped(g):
        g.ev[p] |= EV_COMPILE          # "After your opponent compiles" (War 2), once it is all done
    scope_close(g, outer)

cdef void compile_body(State* g, int p, int l) noexcept nogil:
    cdef int32_t cards[MAXCARDS]
    cdef int n = 0, s, i, c, box
    cdef Scope sc
    log_add(g, LG_COMPILE, p, -1, -1, l, g.compiled[p][l])
    if g.control == p:
        control_rearrange(g, p)
        if stopped(g):
            return
    for s in range(2):
        for i in range(g.nstack[s][l]):
            cards[n] = g.stack[s][l][i]
            n += 1
    sc = scope_open(g)
    g.compiling_line = l
    for i in range(n):
        c = cards[i]
        box = has_trigger(g, c, TR_COMPILE_DELETE)
        if box >= 0:
            run_box(g, c, box)         # Speed 2: shifts instead of being deleted
            if stopped(g):
                return
    g.compiling_line = -1
    for i in range(n):
        c = cards[i]
        if g.zone[c] == Z_FIELD and g.line[c] == l:
            stack_remove(g, c)
            bump(g, c)
            put_trash(g, c)
            log_add(g, LG_DELETE, p, -1, c, LN_DELETE_BY_COMPILE, 0)
            ev_rec(g, EK_DELETE, g.owner[c], g.def_id[c], l, 1)
            g.ev[p] |= EV_DELETE
    scope_close(g, sc)
    if stopped(g):
        return
    ev_rec(g, EK_RECOMPILE if g.compiled[p][l] else EK_COMPILE, p, g.proto[p][l], l, 0)
    record_compile(g, p, l, g.compiled[p][l])
    if g.compiled[p][l]:
        sc = scope_open(g)
        draw_from_opponent(g, p)
        scope_close(g, sc)
    else:
        g.compiled[p][l] = 1
    check_win(g, p)

cdef void record_compile(State* g, int p, int l, int recompile) noexcept nogil:
    cdef int k = g.nce
    if k < MAXCE:
        g.ce_turn[k] = g.turn
        g.ce_player[k] = p
        g.ce_line[k] = l
        g.ce_proto[k] = g.proto[p][l]
        g.ce_recompile[k] = recompile
        g.nce += 1

cdef void check_win(State* g, int p) noexcept nogil:
    """A player with all three protocols Compiled wins at once (4.3)."""
    if g.compiled[p][0] and g.compiled[p][1] and g.compiled[p][2]:
        g.winner = p
        g.end_reason = ER_COMPILED
        g.phase = PH_OVER
        log_add(g, LG_WIN, p, -1, -1, 0, 0)

cdef int do_refresh(State* g, int p) noexcept nogil:
    """Refresh (3.4, 4.5): draw up to 5; not allowed when it would draw nothing."""
    if not can_refresh(g, p):
        return 0
    g.refreshes[p] += 1
    g.ev[p] |= EV_REFRESH
    log_add(g, LG_REFRESH, p, -1, -1, 0, 0)
    if g.control == p:
        control_rearrange(g, p)
        if stopped(g):
            return 1
    draw_cards(g, p, 5 - g.nhand[p])
    return 1

cdef inline bint can_refresh(State* g, int p) noexcept nogil:
    """A refresh must draw at least one card: fewer than 5 in hand and a card in deck or trash."""
    return (g.nhand[p] < 5 and g.ndeck[p] + g.ntrash[p] > 0 and not draw_blocked(g, p)
            and not denied(g, DN_REFRESH, p, -1, -1, -1))

cdef int action_options(State* g, int p) noexcept nogil:
    cdef int n = play_options(g, p, -1, -1, False)
    if can_refresh(g, p):
        g.opts[n] = OPT_REFRESH
        n += 1
    return n

cdef void do_action(State* g) noexcept nogil:
    cdef int p = g.active, k, c
    cdef Scope sc
    if g.forced >= 0 and not g.checking:
        # lookahead copy: the action was picked from this very position's options, so listing
        # them again (a third of a one-ply evaluation) would change nothing; ask() would return it
        k = g.forced
        g.forced = NO_FORCED
    else:
        k = choose_action(g, p)
    if k < 0:
        return
    sc = scope_open(g)
    if k == OPT_REFRESH:
        do_refresh(g, p)
    else:
        commit_play(g, p, k)
    scope_close(g, sc)

cdef int choose_action(State* g, int p) noexcept nogil:
    """List the action options and ask the active player; -1 when there is none (a skip)."""
    g.nopts = action_options(g, p)
    if g.nopts == 0:
        log_add(g, LG_SKIP, p, -1, -1, LN_SKIP_NO_ACTION, 0)
        return -1
    return ask(g, p, D_ACTION)

cdef void check_cache(State* g) noexcept nogil:
    cdef int p = g.active, n
    cdef Scope sc
    if has_passive(g, p, PA_SKIP_CACHE, -1):
        return
    n = g.nhand[p] - 5
    if n <= 0 or denied(g, DN_DISCARD, p, -1, -1, -1):
        return                          # "cannot discard" stops the cache's discard too: the card wins
    sc = scope_open(g)
    if discard_cards(g, p, n, False) > 0:
        g.ev[p] |= EV_CLEAR_CACHE
    scope_close(g, sc)

cdef void next_turn(State* g) noexcept nogil:
    cdef int k
    if g.horizon_turn >= 0 and g.turn >= g.horizon_turn:
        g.halt = HALT_HORIZON      # lookahead horizon reached: stop at the end of this turn
        return
    if g.checking:
        k = check_invariants(g, True)
        if k:
            g.violation = k
            g.halt = HALT_VIOLATION
            return
    g.active = 1 - g.active
    g.turn += 1
    g.phase = PH_START
    if g.turn > g.turn_cap:
        g.winner = 2
        g.end_reason = ER_TURN_CAP
        g.phase = PH_OVER
        return
    log_add(g, LG_TURN, g.active, -1, -1, 0, g.turn)

cdef void game_run(State* g) noexcept nogil:
    """Play from the current phase until the game ends or a decision must come from outside.
    A turn's phases follow one another in one pass, each tested in order: no jump table on the
    phase, which the branch predictor would miss at every phase. A phase that stops the game
    keeps g.phase, so a resumed run starts there again."""
    while not stopped(g):
        if g.phase == PH_DRAFT:
            run_draft(g)
            continue
        if g.phase == PH_START:
            turn_started(g)
            phase_triggers(g, TR_START)
            if stopped(g):
                break
            g.phase = PH_CONTROL
        if g.phase == PH_CONTROL:
            check_control(g)
            g.phase = PH_COMPILE
            if stopped(g):
                break
        if g.phase == PH_COMPILE:
            if check_compile(g):
                if stopped(g):
                    break
                g.phase = PH_CACHE
            else:
                if stopped(g):
                    break
                g.phase = PH_ACTION
        if g.phase == PH_ACTION:
            do_action(g)
            if stopped(g):
                break
            g.phase = PH_CACHE
        if g.phase == PH_CACHE:
            check_cache(g)
            if stopped(g):
                break
            g.phase = PH_END
        if g.phase != PH_END:
            break                      # over, or no phase of a turn
        phase_triggers(g, TR_END)
        if stopped(g):
            break
        next_turn(g)
    if g.winner >= 0:
        g.phase = PH_OVER
