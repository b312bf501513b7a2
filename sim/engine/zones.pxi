# Where cards are: stacks, hands, decks, trashes; which text is active; values (rules 2, 6.7).

cdef enum:
    BOX_TOP = 0
    BOX_MIDDLE = 1
    BOX_BOTTOM = 2

cdef inline bint on_field(State* g, int c) noexcept nogil:
    return g.zone[c] == Z_FIELD

cdef inline int stack_pos(State* g, int c) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c], i
    for i in range(g.nstack[s][l]):
        if g.stack[s][l][i] == c:
            return i
    return -1

cdef inline int top_card(State* g, int s, int l) noexcept nogil:
    cdef int n = g.nstack[s][l]
    return g.stack[s][l][n - 1] if n > 0 else -1

cdef inline bint is_uncovered(State* g, int c) noexcept nogil:
    return g.zone[c] == Z_FIELD and top_card(g, g.side[c], g.line[c]) == c

cdef inline bint box_active(State* g, int c, int box) noexcept nogil:
    """Top text is active while face-up; bottom text only while face-up and uncovered (2.3)."""
    if g.zone[c] != Z_FIELD or not g.face_up[c]:
        return False
    if box == BOX_BOTTOM:
        return is_uncovered(g, c)
    return True

cdef inline void bump(State* g, int c) noexcept nogil:
    """A card's text is interrupted when its epoch changes (7.2): flipped, covered or moved out."""
    g.epoch[c] += 1

cdef bint stack_remove(State* g, int c) noexcept nogil:
    """Take a card out of its stack; returns whether it was the uncovered card."""
    cdef int s = g.side[c], l = g.line[c], n = g.nstack[s][l]
    cdef bint was_top = n > 0 and g.stack[s][l][n - 1] == c
    if compact_out(g.stack[s][l], n, c) == n:
        return False
    g.nstack[s][l] = n - 1
    if not take_from_fresh_cache(g, c, s, l):
        touch_line(g, l)
    return was_top

cdef void stack_put(State* g, int c, int s, int l, int idx) noexcept nogil:
    """Put a card into a stack at position idx (-1: on top, covering the previous top card)."""
    cdef int n = g.nstack[s][l], i
    if idx < 0 or idx > n:
        idx = n
    if idx == n and n > 0:
        bump(g, g.stack[s][l][n - 1])      # the old uncovered card becomes covered
    i = n
    while i > idx:
        g.stack[s][l][i] = g.stack[s][l][i - 1]
        i -= 1
    g.stack[s][l][idx] = c
    g.nstack[s][l] = n + 1
    g.zone[c] = Z_FIELD
    g.side[c] = s
    g.line[c] = l
    if not add_to_fresh_cache(g, c, s, l):
        touch_line(g, l)

cdef inline int compact_out(int8_t* arr, int n, int c) noexcept nogil:
    """Copy every card of arr[:n] but c down over it, in order; returns how many are left (n
    when c was not there). One pass with no branch on where c is (a select beats a guess), and
    no call: the usual list is a few cards, too short for memmove."""
    cdef int i, k = 0, x
    for i in range(n):
        x = arr[i]
        arr[k] = x
        k += x != c
    return k

cdef void list_remove(int8_t* arr, int8_t* n, int c) noexcept nogil:
    """Take card c out of a list (a hand, a trash, a deck), keeping the order of the others."""
    n[0] = compact_out(arr, n[0], c)

cdef inline void put_hand(State* g, int p, int c) noexcept nogil:
    g.hand[p][g.nhand[p]] = c
    g.nhand[p] += 1
    g.zone[c] = Z_HAND
    g.side[c] = p
    g.face_up[c] = 0

cdef inline void put_trash(State* g, int c) noexcept nogil:
    cdef int p = g.owner[c]
    g.trash[p][g.ntrash[p]] = c
    g.ntrash[p] += 1
    g.zone[c] = Z_TRASH
    g.side[c] = p
    g.face_up[c] = 1

cdef inline const CardDef* cdef_of(State* g, int c) noexcept nogil:
    return &g.cdefs[g.def_id[c]]

# -- passives and values, cached per field version and line --------------------------------------------
#
# Everything below depends only on the field (which cards, where, which face). Every change to the
# field bumps g.field_ver and marks its line stale (stack_put, stack_remove, turn_over: touch_line;
# swapping stacks: touch); the first query after a change recomputes the stale lines' passives,
# triggers and values. The exception is a line without any active passive, while the cache is
# fresh: a card without passives put into it, a card taken out of it, or such a card flipped in
# it changes the cache in place (add_to_fresh_cache, take_from_fresh_cache, turn_over).

cdef inline void touch(State* g) noexcept nogil:
    """Something anywhere on the field changed: every line's cache is stale."""
    g.field_ver += 1
    g.stale_lines = 7

cdef inline void touch_line(State* g, int l) noexcept nogil:
    """A stack of line l changed: only that line is recomputed (a card's passives, triggers and
    value reach no further than its own line)."""
    g.field_ver += 1
    g.stale_lines |= 1 << l

cdef inline uint32_t line_passives(State* g, int l) noexcept nogil:
    """The passives active anywhere in line l, either side (the cache must be fresh)."""
    return g.pas[0][l] | g.pas[1][l]

cdef inline bint plain_line(State* g, int l) noexcept nogil:
    """Is the cache fresh and line l without any active passive? A change there by a card
    without passives can then be applied to the cache itself."""
    return g.cache_ver == g.field_ver and line_passives(g, l) == 0

cdef inline void still_fresh(State* g) noexcept nogil:
    """The field changed and the cache was updated with it: a new version, still fresh."""
    g.field_ver += 1
    g.cache_ver = g.field_ver

cdef inline uint32_t live_triggers(const CardDef* d, int face_up) noexcept nogil:
    """The triggers a card carries on the field: all of its boxes' face-up, none face-down
    (selected, not branched on: faces interleave at random)."""
    return d.trig_bits & (0u - <uint32_t>(face_up != 0))

cdef inline bint add_to_fresh_cache(State* g, int c, int s, int l) noexcept nogil:
    """Card c was just put into stack (s, l): when the cache was fresh and the line has no
    active passive, and c brings none, the card only adds its value (2 face-down) and its
    triggers; the cache is updated in place and stays fresh, instead of recomputing the line at
    the next query (the usual play). Returns whether it did (otherwise the line must be touched).
    Covering a card only deactivates its bottom box, and that box has no passive here."""
    cdef const CardDef* d = cdef_of(g, c)
    cdef int fu = g.face_up[c] != 0
    if not plain_line(g, l) or ((d.any_passive != 0) & fu):
        return False
    g.lval[s][l] += d.value if fu else 2
    g.trig_line[s][l] |= live_triggers(d, fu)
    g.trig_mask[s] |= live_triggers(d, fu)
    still_fresh(g)
    return True

cdef inline bint take_from_fresh_cache(State* g, int c, int s, int l) noexcept nogil:
    """Card c was just taken out of stack (s, l): when the cache was fresh, the line has no
    active passive and the stack's uncovered card has no bottom passive (it may just have been
    uncovered), the card only takes its value (2 face-down) away, and a face-up card its
    triggers: the stack's triggers are gathered again. Returns whether it did (otherwise the
    line must be touched)."""
    cdef int n = g.nstack[s][l], t
    if not plain_line(g, l):
        return False
    if n > 0:
        t = g.stack[s][l][n - 1]
        if g.face_up[t] and cdef_of(g, t).passive[BOX_BOTTOM]:
            return False
    if g.face_up[c]:
        g.lval[s][l] -= cdef_of(g, c).value
        regather_triggers(g, s, l)
    else:
        g.lval[s][l] -= 2
    still_fresh(g)
    return True

cdef inline void regather_triggers(State* g, int s, int l) noexcept nogil:
    """The triggers of stack (s, l) gathered again after a face-up card left it or turned
    face-down (a union cannot take one card's bits away)."""
    cdef int i, x
    cdef uint32_t trig = 0
    for i in range(g.nstack[s][l]):
        x = g.stack[s][l][i]
        trig |= live_triggers(cdef_of(g, x), g.face_up[x])
    g.trig_line[s][l] = trig
    g.trig_mask[s] = g.trig_line[s][0] | g.trig_line[s][1] | g.trig_line[s][2]

cdef inline void turn_over(State* g, int c) noexcept nogil:
    """Flip card c on the field. In a line without any active passive, while the cache is
    fresh, a card without passives only changes its value (printed face-up, 2 face-down) and
    its stack's triggers: the cache is updated in place; otherwise the line is touched."""
    cdef int s = g.side[c], l = g.line[c]
    cdef const CardDef* d = cdef_of(g, c)
    g.face_up[c] = 1 - g.face_up[c]
    if not plain_line(g, l) or d.any_passive:
        touch_line(g, l)
        return
    if g.face_up[c]:
        g.lval[s][l] += d.value - 2
        g.trig_line[s][l] |= d.trig_bits
        g.trig_mask[s] |= d.trig_bits
    else:
        g.lval[s][l] -= d.value - 2
        regather_triggers(g, s, l)
    still_fresh(g)

cdef inline bint other_protocol_up_in_stack(State* g, int s, int l, int c) noexcept nogil:
    """Is there a face-up card of another protocol than card c in this stack (Diversity 3)?"""
    cdef int i, x
    for i in range(g.nstack[s][l]):
        x = g.stack[s][l][i]
        if g.face_up[x] and cdef_of(g, x).protocol != cdef_of(g, c).protocol:
            return True
    return False

cdef void refresh_cache(State* g) noexcept nogil:
    """Recompute the stale lines (all of them when none is marked: a version bump alone), then
    the trigger masks from the per-stack ones."""
    cdef int l, s
    cdef uint8_t lines = g.stale_lines if g.stale_lines else 7
    if lines & (lines - 1) == 0:
        refresh_line(g, lines >> 1)    # one stale line, the usual case: bit 1, 2, 4 -> line 0, 1, 2
    else:
        for l in range(3):
            if lines & (1 << l):
                refresh_line(g, l)
    for s in range(2):
        g.trig_mask[s] = g.trig_line[s][0] | g.trig_line[s][1] | g.trig_line[s][2]
    g.stale_lines = 0
    g.cache_ver = g.field_ver

cdef void refresh_line(State* g, int l) noexcept nogil:
    """One pass over each stack of line l for its passives, triggers and base value (face-up
    values plus face-down cards at the stack's face-down value), then the rare line-wide value
    passives."""
    cdef int s, i, c, n, box, ndown = 0, down, up, fu
    cdef uint32_t flags, trig, passives
    cdef const CardDef* d
    for s in range(2):
        flags = 0
        trig = 0
        passives = 0
        up = 0
        down = 0
        g.fdv[s][l] = -1
        g.perhand[s][l] = 0
        n = g.nstack[s][l]
        for i in range(n):
            # face-up and face-down cards interleave at random: no branch on the face here
            c = g.stack[s][l][i]
            fu = g.face_up[c] != 0
            d = cdef_of(g, c)
            down += 1 - fu
            up += d.value * fu
            trig |= live_triggers(d, fu)
            passives |= d.any_passive & (0u - <uint32_t>fu)
        if passives:                   # rare: a second pass, in the same order, for the passives
            for i in range(n):
                c = g.stack[s][l][i]
                d = cdef_of(g, c)
                if not (g.face_up[c] and d.any_passive):
                    continue
                for box in range(3):
                    if d.passive[box] and (box != BOX_BOTTOM or i == n - 1):
                        flags |= d.passive[box]
                        if d.passive[box] & PA_FACEDOWN_VALUE:
                            g.fdv[s][l] = d.facedown_value
                        if d.passive[box] & PA_PER_HAND:
                            g.perhand[s][l] += d.per_hand
        g.pas[s][l] = flags
        g.trig_line[s][l] = trig
        g.lval[s][l] = up + down * (g.fdv[s][l] if g.fdv[s][l] >= 0 else 2)
        ndown += down
    if not (line_passives(g, l) & (PA_LINE_VALUE | PA_PER_FACEDOWN | PA_PER_OPP_CARD)):
        return
    for s in range(2):
        n = g.nstack[s][l]
        for i in range(n):
            c = g.stack[s][l][i]
            if not g.face_up[c]:
                continue
            d = cdef_of(g, c)
            for box in range(3):
                if d.passive[box] == 0 or (box == BOX_BOTTOM and i != n - 1):
                    continue
                if d.passive[box] & PA_LINE_VALUE:
                    if not d.line_value_cond or other_protocol_up_in_stack(g, s, l, c):
                        g.lval[1 - s if d.line_value_opp else s][l] += d.line_value
                if d.passive[box] & PA_PER_FACEDOWN:
                    g.lval[s][l] += d.per_facedown * ndown
                if d.passive[box] & PA_PER_OPP_CARD:
                    g.lval[s][l] += d.per_opp_card * g.nstack[1 - s][l]

cdef inline bint may_trigger(State* g, uint32_t mask) noexcept nogil:
    """Could any face-up card on the field have a box with one of these triggers?"""
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    return ((g.trig_mask[0] | g.trig_mask[1]) & mask) != 0

cdef inline bint has_passive(State* g, int s, int flag, int l) noexcept nogil:
    """Does a face-up card on side s (in line l, or anywhere if l < 0) have this passive active?"""
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    if l >= 0:
        return (g.pas[s][l] & flag) != 0
    return ((g.pas[s][0] | g.pas[s][1] | g.pas[s][2]) & flag) != 0

cdef inline bint middle_ignored(State* g, int c) noexcept nogil:
    """Apathy 2: middle commands of cards in a line with an active ignore passive do nothing."""
    cdef int l = g.line[c]
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    return (line_passives(g, l) & PA_IGNORE_MIDDLE) != 0

cdef bint middle_suppressed(State* g, int c) noexcept nogil:
    """Fear 0: during its owner's turn, the opponent's cards have no middle text at all."""
    return g.owner[c] != g.active and has_passive(g, g.active, PA_NO_OPP_MIDDLE, -1)

cdef bint unflippable(State* g, int c) noexcept nogil:
    """Ice 4: a card whose active text says it cannot be flipped."""
    cdef const CardDef* d = cdef_of(g, c)
    cdef int box
    if not g.face_up[c] or not ((d.passive[0] | d.passive[1] | d.passive[2]) & PA_UNFLIPPABLE):
        return False
    for box in range(3):
        if (d.passive[box] & PA_UNFLIPPABLE) and box_active(g, c, box):
            return True
    return False

cdef inline bint draw_blocked(State* g, int p) noexcept nogil:
    """Ice 6: a player holding cards cannot draw (checked once per batch of draws)."""
    return (g.nhand[p] > 0 and has_passive(g, p, PA_NO_DRAW_WITH_HAND, -1)) or denied(g, DN_DRAW, p, -1, -1, -1)

# -- restrictions (a passive `deny`, docs/cards.md "Restrictions") ---------------------------------
# The per-game table of active restrictions is the line cache: PA_DENY in g.pas[s][l] marks the
# stacks holding an active one (2.3: top text while face-up, bottom text while also uncovered);
# g.has_deny says whether the game holds a restricting card at all, so a game without one (every
# official card) pays one byte test per check.

cdef void note_restrictions(State* g) noexcept nogil:
    """Set g.has_deny from the game's cards (their identities are fixed when dealt or placed)."""
    cdef int c
    g.has_deny = 0
    for c in range(MAXCARDS):
        if g.cdefs[g.def_id[c]].any_passive & PA_DENY:
            g.has_deny = 1

cdef inline bint deny_covers(int r, int a) noexcept nogil:
    """Does restricted action r include the action a asked about (play covers both faces, ...)?"""
    return (r == a or (r == DN_PLAY and (a == DN_PLAY_UP or a == DN_PLAY_DOWN))
            or (r == DN_FLIP and (a == DN_FLIP_UP or a == DN_FLIP_DOWN))
            or (r == DN_SHIFT and (a == DN_SHIFT_FROM or a == DN_SHIFT_TO)))

cdef inline bint whose_fits(int w, int s, int p) noexcept nogil:
    """Whose-selector w, of a card on side s, about player (or side) p."""
    return w == W_ANY or (w == W_YOU) == (p == s)

cdef bint deny_fits(State* g, const CardDef* d, int box, int s, int rl, int action, int by,
                    int side, int c, int l) noexcept nogil:
    """Does box `box` of a restricting card on side s, line rl, forbid this action?"""
    if not deny_covers(d.deny[box], action) or not whose_fits(d.deny_by[box], s, by):
        return False
    if side >= 0 and not whose_fits(d.deny_whose[box], s, side):
        return False
    if c >= 0 and d.deny_face[box] != F_ANY and (d.deny_face[box] == F_UP) != (g.face_up[c] != 0):
        return False
    if c >= 0 and (d.deny_values[box] or d.deny_protocol[box] or d.deny_covered[box]) \
            and not deny_selects(g, d, box, c):
        return False
    return not d.deny_line[box] or l == rl

cdef bint deny_selects(State* g, const CardDef* d, int box, int c) noexcept nogil:
    """The value, protocol and covered selectors of a restriction on card c (the verbs' own
    meanings: the current value, 6.7; a face-down card has no protocol)."""
    cdef int v
    if d.deny_values[box]:
        v = card_value(g, c)
        if v < 0 or v > 7 or not ((d.deny_values[box] >> v) & 1):
            return False
    if d.deny_protocol[box]:
        if not g.face_up[c] or (cdef_of(g, c).protocol == d.protocol) != (d.deny_protocol[box] == 1):
            return False
    if d.deny_covered[box]:
        if is_uncovered(g, c) != (d.deny_covered[box] == 2):
            return False
    return True

cdef bint denied_active(State* g, int action, int by, int side, int c, int l) noexcept nogil:
    """The slow half of denied(): look through the stacks the line cache marks."""
    cdef int s, rl, i, n, rc, box
    cdef const CardDef* d
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    for s in range(2):
        for rl in range(3):
            if not (g.pas[s][rl] & PA_DENY):
                continue
            n = g.nstack[s][rl]
            for i in range(n):
                rc = g.stack[s][rl][i]
                d = cdef_of(g, rc)
                if not g.face_up[rc] or not (d.any_passive & PA_DENY):
                    continue
                for box in range(3):
                    if (d.passive[box] & PA_DENY) and (box != BOX_BOTTOM or i == n - 1) \
                            and deny_fits(g, d, box, s, rl, action, by, side, c, l):
                        return True
    return False

cdef inline bint denied(State* g, int action, int by, int side, int c, int l) noexcept nogil:
    """May player `by` not do this Deny action? `side`: whose cards (or protocols) it acts on,
    `c`: the card (its face is checked; -1: none), `l`: the line (-1: none). The one check every
    action calls where the engine makes it legal; "cannot" always wins (docs/cards.md)."""
    return g.has_deny != 0 and denied_active(g, action, by, side, c, l)

cdef inline bint field_denied(State* g, int verb, int by, int c, int l) noexcept nogil:
    """A field verb's restriction on card c in line l (flip either way, shift out, delete, return)."""
    if verb == V_FLIP:
        return denied(g, DN_FLIP_DOWN if g.face_up[c] else DN_FLIP_UP, by, g.side[c], c, l)
    if verb == V_DELETE:
        return denied(g, DN_DELETE, by, g.side[c], c, l)
    if verb == V_RETURN:
        return denied(g, DN_RETURN, by, g.side[c], c, l)
    if verb == V_SHIFT:
        return denied(g, DN_SHIFT_FROM, by, g.side[c], c, l)
    return False

# -- values (2.2, 2.4) -------------------------------------------------------------------------

cdef int card_value(State* g, int c) noexcept nogil:
    """Current value: printed when face-up on the field or in the trash; 2 face-down (or the
    value a passive in the same stack gives); 2 for a card that is hidden (hand, deck)."""
    cdef int z = g.zone[c]
    if z == Z_TRASH:
        return cdef_of(g, c).value
    if z != Z_FIELD:
        return 2
    if g.face_up[c]:
        return cdef_of(g, c).value
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    return g.fdv[g.side[c]][g.line[c]] if g.fdv[g.side[c]][g.line[c]] >= 0 else 2

cdef int line_value(State* g, int p, int l) noexcept nogil:
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    if g.perhand[p][l]:
        return g.lval[p][l] + g.perhand[p][l] * g.nhand[p]     # Clarity 0 follows the hand
    return g.lval[p][l]

cdef void line_values(State* g, int lv[2][3]) noexcept nogil:
    """All six line values at once (one call for a bot's evaluation instead of six)."""
    cdef int p, l
    if g.cache_ver != g.field_ver:
        refresh_cache(g)
    for p in range(2):
        for l in range(3):
            lv[p][l] = g.lval[p][l] + g.perhand[p][l] * g.nhand[p]

cdef inline int line_cards(State* g, int l) noexcept nogil:
    return g.nstack[0][l] + g.nstack[1][l]

# -- playing restrictions (5.1, passives) --------------------------------------------------------

cdef int welcome_protocol(State* g, int s, int l) noexcept nogil:
    """Unity 1: the protocol whose cards may be played face-up in line l because of an active
    text in stack (s, l), or -1."""
    cdef int i, c, box, n = g.nstack[s][l]
    cdef const CardDef* d
    if not has_passive(g, s, PA_PROTO_FACEUP_HERE, l):
        return -1
    for i in range(n):
        c = g.stack[s][l][i]
        d = cdef_of(g, c)
        if not g.face_up[c]:
            continue
        for box in range(3):
            if (d.passive[box] & PA_PROTO_FACEUP_HERE) and (box != BOX_BOTTOM or i == n - 1):
                return d.protocol
    return -1

cdef bint line_has_facedown(State* g, int l) noexcept nogil:
    cdef int s, i
    for s in range(2):
        for i in range(g.nstack[s][l]):
            if not g.face_up[g.stack[s][l][i]]:
                return True
    return False

cdef bint can_play_down_into(State* g, int p, int l) noexcept nogil:
    return not has_passive(g, 1 - p, PA_DENY_ANY_LINE, l) and not has_passive(g, 1 - p, PA_DENY_FACEDOWN_LINE, l)
