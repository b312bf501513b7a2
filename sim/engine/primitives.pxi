# Primitive changes of the game state the verbs are made of: draw, discard, flip, delete, return,
# shift, rearrange. Each does one thing and resolves the middle text it uncovers (2.3, 7.1).

cdef int discard_whole_hand(State* g, int p) noexcept nogil:
    """Discard every card in hand at once (Chaos 4, Fear 1, Peace 1)."""
    cdef int k = g.nhand[p], i, c
    for i in range(k):
        c = g.hand[p][i]
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, LN_DISCARD_HAND, 0)
    g.nhand[p] = 0
    if k:
        g.ev[p] |= EV_DISCARD
    return k

cdef int discard_random(State* g, int p, int n) noexcept nogil:
    """Fear 4: cards leave the hand at random (the game's stream, never a player's choice)."""
    cdef int k = 0, c
    while k < n and g.nhand[p] > 0:
        c = g.hand[p][rng_below(g, STREAM_GAME, g.nhand[p])]
        list_remove(g.hand[p], &g.nhand[p], c)
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, LN_DISCARD_RANDOM, 0)
        k += 1
    if k:
        g.ev[p] |= EV_DISCARD
    return k

cdef int has_trigger(State* g, int c, int trig) noexcept nogil:
    """The box of card c with this trigger if that box is active now, else -1."""
    cdef const CardDef* d = cdef_of(g, c)
    cdef int box
    for box in range(3):
        if d.trig[box] == trig and box_active(g, c, box):
            return box
    return -1

cdef void uncovered(State* g, int s, int l) noexcept nogil:
    """The card now at the end of this stack was just uncovered: its middle text resolves."""
    cdef int t = top_card(g, s, l)
    if l == g.compiling_line:
        return
    if t >= 0 and g.face_up[t]:
        resolve_middle(g, t)

cdef int draw_cards(State* g, int p, int n) noexcept nogil:
    cdef int i, c, got = 0
    if n > 0 and draw_blocked(g, p):
        return 0
    for i in range(n):
        if g.ndeck[p] == 0:
            if g.ntrash[p] == 0:
                break
            reshuffle_trash(g, p)
        g.ndeck[p] -= 1
        c = g.deck[p][g.ndeck[p]]
        put_hand(g, p, c)
        ev_rec(g, EK_DRAW, p, g.def_id[c], -1, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DRAW
        log_add(g, LG_DRAW, p, -1, -1, got, LN_DRAW_DECK)
    return got

cdef void reshuffle_trash(State* g, int p) noexcept nogil:
    cdef int i, c
    for i in range(g.ntrash[p]):
        c = g.trash[p][i]
        g.deck[p][g.ndeck[p]] = c
        g.ndeck[p] += 1
        g.zone[c] = Z_DECK
        g.face_up[c] = 0
    g.ntrash[p] = 0
    shuffle_deck(g, p)
    if g.ndeck[p] > 1:
        g.ev[p] |= EV_SHUFFLE          # shuffling 0 or 1 cards changes nothing (Time 2 ruling)
    log_add(g, LG_SHUFFLE, p, -1, -1, LN_SHUFFLE_TRASH_INTO_DECK, 0)

cdef int draw_from_opponent(State* g, int p) noexcept nogil:
    """Draw the top card of the opponent's deck: it becomes yours (9.1)."""
    cdef int o = 1 - p, c
    if g.ndeck[o] == 0:
        if g.ntrash[o] == 0:
            return 0
        reshuffle_trash(g, o)
    g.ndeck[o] -= 1
    c = g.deck[o][g.ndeck[o]]
    g.owner[c] = p
    put_hand(g, p, c)
    ev_rec(g, EK_DRAW, p, g.def_id[c], -1, 1)
    g.ev[p] |= EV_DRAW
    log_add(g, LG_TAKE, p, -1, c, LN_TAKE_DECK_TOP, 0)
    return 1

cdef int discard_cards(State* g, int p, int n, bint one_or_more, bint any_number=False,
                       bint into_opp=False) noexcept nogil:
    """Player p discards n cards of their choice (or 1 or more / any number, stopping at
    "done"); `into_opp` puts them in the opponent's trash, who then owns them (Assimilation 1)."""
    cdef int i, k, c, got = 0
    while got < n and g.nhand[p] > 0 and not stopped(g):
        for i in range(g.nhand[p]):
            g.opts[i] = g.hand[p][i]
        k = g.nhand[p]
        if (one_or_more and got >= 1) or any_number:
            g.opts[k] = OPT_DONE
            k += 1
        g.nopts = k
        c = ask(g, p, D_DISCARD_MORE if (one_or_more or any_number) else D_DISCARD)
        if c < 0 or c == OPT_DONE:
            break
        list_remove(g.hand[p], &g.nhand[p], c)
        if into_opp:
            g.owner[c] = 1 - p
        put_trash(g, c)
        log_add(g, LG_DISCARD, p, -1, c, LN_DISCARD_INTO_OPP if into_opp else LN_DISCARD_HAND, 0)
        got += 1
    if got:
        g.ev[p] |= EV_DISCARD
    return got

cdef int flip_card(State* g, int c, int actor) noexcept nogil:
    return flip_card_ex(g, c, actor, True)

cdef int flip_card_ex(State* g, int c, int actor, bint with_middle) noexcept nogil:
    cdef int box, epoch
    if not on_field(g, c) or unflippable(g, c) or field_denied(g, V_FLIP, actor, c, g.line[c]):
        return 0
    if g.face_up[c]:
        box = has_trigger(g, c, TR_COVERED_OR_FLIPPED)
        if box >= 0:               # "First, ..." resolves before the flip (5.3); then the flip,
            epoch = g.epoch[c]         # unless its text moved, flipped or covered it (Metal 6 left:
            run_box(g, c, box)         # the flip is used up, even on a card played back from the trash)
            if stopped(g) or g.epoch[c] != epoch or not on_field(g, c) or unflippable(g, c) \
                    or field_denied(g, V_FLIP, actor, c, g.line[c]):
                return 1
    turn_over(g, c)
    bump(g, c)
    log_add(g, LG_FLIP, actor, g.cur_src, c, g.face_up[c], 0)
    if with_middle and g.face_up[c] and is_uncovered(g, c):
        resolve_middle(g, c)
    return 1

cdef int delete_card(State* g, int c, int actor) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c) or field_denied(g, V_DELETE, actor, c, l):
        return 0
    was_top = stack_remove(g, c)
    bump(g, c)
    put_trash(g, c)
    log_add(g, LG_DELETE, actor, g.cur_src, c, LN_DELETE_BY_TEXT, 0)
    ev_rec(g, EK_DELETE, g.owner[c], g.def_id[c], l, 0)
    g.ev[actor] |= EV_DELETE
    if was_top:
        uncovered(g, s, l)
    return 1

cdef int return_card(State* g, int c, int actor) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c) or field_denied(g, V_RETURN, actor, c, l):
        return 0
    was_top = stack_remove(g, c)
    bump(g, c)
    put_returned(g, c)
    log_add(g, LG_RETURN, actor, g.cur_src, c, LN_RETURN_TO_HAND, 0)
    if was_top:
        uncovered(g, s, l)
    return 1

cdef void put_returned(State* g, int c) noexcept nogil:
    """A returned card goes to its owner's hand (6.7), or face-down on top of their deck when
    the other player has an active Corruption 1."""
    cdef int o = g.owner[c]
    if has_passive(g, 1 - o, PA_RETURN_TO_DECK, -1):
        g.deck[o][g.ndeck[o]] = c
        g.ndeck[o] += 1
        g.zone[c] = Z_DECK
        g.side[c] = o
        g.face_up[c] = 0
        log_add(g, LG_RETURN, 1 - o, -1, c, LN_RETURN_TO_DECK, 0)
        return
    put_hand(g, o, c)

cdef int take_from_field(State* g, int c, int p) noexcept nogil:
    """Assimilation 0: put a card from the field into p's hand; p owns it from now on (9.1)."""
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c):
        return 0
    was_top = stack_remove(g, c)
    bump(g, c)
    g.owner[c] = p
    put_hand(g, p, c)
    log_add(g, LG_TAKE, p, g.cur_src, c, LN_TAKE_FIELD, 0)
    if was_top:
        uncovered(g, s, l)
    return 1

cdef int shift_card(State* g, int c, int dest, int actor) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c) or dest == l or field_denied(g, V_SHIFT, actor, c, l) \
            or denied(g, DN_SHIFT_TO, actor, s, c, dest):
        return 0
    was_top = stack_remove(g, c)
    g.zone[c] = Z_TRANSIT
    before_cover(g, s, dest, c)
    stack_put(g, c, s, dest, -1)
    log_add(g, LG_SHIFT, actor, g.cur_src, c, dest, l)
    if was_top:
        uncovered(g, s, l)
    elif g.face_up[c] and is_uncovered(g, c):
        resolve_middle(g, c)       # a covered card shifted to become uncovered (2.3)
    return 1

cdef int control_card(State* g, int c, int p) noexcept nogil:
    """Gain control (9.2): card c leaves its stack for p's side of the same line, keeping its face
    and its owner (9.1, 9.4), and lands on top. As for a shift (6.6, 2.3): the card it would cover
    resolves its cover text first (5.3), the card beneath it on the old side is uncovered, and a
    covered card that arrives uncovered resolves its middle text; the moved card's own text is not
    interrupted (7.2)."""
    cdef int s = g.side[c], l = g.line[c]
    cdef bint was_top
    if not on_field(g, c) or s == p:
        return 0
    was_top = stack_remove(g, c)
    g.zone[c] = Z_TRANSIT
    before_cover(g, p, l, c)
    stack_put(g, c, p, l, -1)
    log_add(g, LG_GAIN_CONTROL, p, g.cur_src, c, l, 0)
    if was_top:
        uncovered(g, s, l)
    elif g.face_up[c] and is_uncovered(g, c):
        resolve_middle(g, c)
    return 1

cdef int apply_perm(State* g, int p, int perm) noexcept nogil:
    cdef int16_t pr[3]
    cdef int8_t cp[3]
    cdef int i
    for i in range(3):
        pr[i] = g.proto[p][PERMS[perm][i]]
        cp[i] = g.compiled[p][PERMS[perm][i]]
    for i in range(3):
        g.proto[p][i] = pr[i]
        g.compiled[p][i] = cp[i]
    return 1

cdef int rearrange(State* g, int dec, int target) noexcept nogil:
    """Rearrange one side's protocols into a different order (4.4)."""
    cdef int k, n = 0
    if denied(g, DN_REARRANGE, dec, target, -1, -1):
        return 0
    for k in range(1, 6):              # every non-identity order differs: a side's protocols are distinct
        g.opts[n] = rearrange_option(target, k)
        n += 1
    g.nopts = n
    k = ask(g, dec, D_REARRANGE)
    if k < 0:
        return 0
    apply_perm(g, target, rearrange_perm(k))
    log_add(g, LG_REARRANGE, dec, -1, -1, target, rearrange_perm(k))
    return 1

cdef int swap_protocols(State* g, int dec) noexcept nogil:
    cdef int k
    if denied(g, DN_REARRANGE, dec, dec, -1, -1):
        return 0
    g.opts[0] = rearrange_option(dec, 1)    # swap middle and right
    g.opts[1] = rearrange_option(dec, 2)    # swap left and middle
    g.opts[2] = rearrange_option(dec, 5)    # swap left and right
    g.nopts = 3
    k = ask(g, dec, D_REARRANGE)
    if k < 0:
        return 0
    apply_perm(g, dec, rearrange_perm(k))
    log_add(g, LG_REARRANGE, dec, -1, -1, dec, rearrange_perm(k))
    return 1
