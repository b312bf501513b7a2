# Where cards are: stacks, hands, decks, trashes; which text is active; values (rules 2, 6.7).

cdef enum:
    BOX_TOP = 0
    BOX_MIDDLE = 1
    BOX_BOTTOM = 2

cdef inline bint on_field(Game* g, int c) noexcept nogil:
    return g.zone[c] == Z_FIELD

cdef inline int stack_pos(Game* g, int c) noexcept nogil:
    cdef int s = g.side[c], l = g.line[c], i
    for i in range(g.nstack[s][l]):
        if g.stack[s][l][i] == c:
            return i
    return -1

cdef inline int top_card(Game* g, int s, int l) noexcept nogil:
    cdef int n = g.nstack[s][l]
    return g.stack[s][l][n - 1] if n > 0 else -1

cdef inline bint is_uncovered(Game* g, int c) noexcept nogil:
    return g.zone[c] == Z_FIELD and top_card(g, g.side[c], g.line[c]) == c

cdef inline bint box_active(Game* g, int c, int box) noexcept nogil:
    """Top text is active while face-up; bottom text only while face-up and uncovered (2.3)."""
    if g.zone[c] != Z_FIELD or not g.face_up[c]:
        return False
    if box == BOX_BOTTOM:
        return is_uncovered(g, c)
    return True

cdef inline void bump(Game* g, int c) noexcept nogil:
    """A card's text is interrupted when its epoch changes (7.2): flipped, covered or moved out."""
    g.epoch[c] += 1

cdef bint stack_remove(Game* g, int c) noexcept nogil:
    """Take a card out of its stack; returns whether it was the uncovered card."""
    cdef int s = g.side[c], l = g.line[c], n = g.nstack[s][l], i, k = -1
    for i in range(n):
        if g.stack[s][l][i] == c:
            k = i
            break
    if k < 0:
        return False
    for i in range(k, n - 1):
        g.stack[s][l][i] = g.stack[s][l][i + 1]
    g.nstack[s][l] = n - 1
    return k == n - 1

cdef void stack_put(Game* g, int c, int s, int l, int idx) noexcept nogil:
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

cdef void list_remove(int8_t* arr, int8_t* n, int c) noexcept nogil:
    cdef int i, k = -1
    for i in range(n[0]):
        if arr[i] == c:
            k = i
            break
    if k < 0:
        return
    for i in range(k, n[0] - 1):
        arr[i] = arr[i + 1]
    n[0] -= 1

cdef inline void put_hand(Game* g, int p, int c) noexcept nogil:
    g.hand[p][g.nhand[p]] = c
    g.nhand[p] += 1
    g.zone[c] = Z_HAND
    g.side[c] = p
    g.face_up[c] = 0

cdef inline void put_trash(Game* g, int c) noexcept nogil:
    cdef int p = g.owner[c]
    g.trash[p][g.ntrash[p]] = c
    g.ntrash[p] += 1
    g.zone[c] = Z_TRASH
    g.side[c] = p
    g.face_up[c] = 1

cdef inline const CardDef* cdef_of(Game* g, int c) noexcept nogil:
    return &g.cdefs[g.def_id[c]]

# -- passives ----------------------------------------------------------------------------------

cdef int passive_card(Game* g, int s, int flag, int l) noexcept nogil:
    """A face-up card on side s (in line l, or anywhere if l < 0) with an active passive flag."""
    cdef int ll, i, c, box
    cdef const CardDef* d
    for ll in range(3):
        if l >= 0 and ll != l:
            continue
        for i in range(g.nstack[s][ll]):
            c = g.stack[s][ll][i]
            if not g.face_up[c]:
                continue
            d = cdef_of(g, c)
            for box in range(3):
                if (d.passive[box] & flag) and box_active(g, c, box):
                    return c
    return -1

cdef bint middle_ignored(Game* g, int c) noexcept nogil:
    """Apathy 2: middle commands of cards in a line with an active ignore passive do nothing."""
    cdef int l = g.line[c]
    return passive_card(g, 0, PA_IGNORE_MIDDLE, l) >= 0 or passive_card(g, 1, PA_IGNORE_MIDDLE, l) >= 0

# -- values (2.2, 2.4) -------------------------------------------------------------------------

cdef int card_value(Game* g, int c) noexcept nogil:
    """Current value: printed when face-up on the field or in the trash; 2 face-down (or the
    value a passive in the same stack gives); 2 for a card that is hidden (hand, deck)."""
    cdef int z = g.zone[c], m
    if z == Z_TRASH:
        return cdef_of(g, c).value
    if z != Z_FIELD:
        return 2
    if g.face_up[c]:
        return cdef_of(g, c).value
    m = passive_card(g, g.side[c], PA_FACEDOWN_VALUE, g.line[c])
    if m >= 0:
        return cdef_of(g, m).facedown_value
    return 2

cdef int line_value(Game* g, int p, int l) noexcept nogil:
    cdef int v = 0, i, c, s, box, ndown = 0
    cdef const CardDef* d
    for i in range(g.nstack[p][l]):
        v += card_value(g, g.stack[p][l][i])
    for s in range(2):
        for i in range(g.nstack[s][l]):
            c = g.stack[s][l][i]
            if not g.face_up[c]:
                ndown += 1
    for s in range(2):
        for i in range(g.nstack[s][l]):
            c = g.stack[s][l][i]
            if not g.face_up[c]:
                continue
            d = cdef_of(g, c)
            for box in range(3):
                if d.passive[box] == 0 or not box_active(g, c, box):
                    continue
                if d.passive[box] & PA_LINE_VALUE:
                    if (d.line_value_opp and s != p) or (not d.line_value_opp and s == p):
                        v += d.line_value
                if (d.passive[box] & PA_PER_FACEDOWN) and s == p:
                    v += d.per_facedown * ndown
    return v

cdef inline int line_cards(Game* g, int l) noexcept nogil:
    return g.nstack[0][l] + g.nstack[1][l]

# -- playing restrictions (5.1, passives) --------------------------------------------------------

cdef bint can_play_face(Game* g, int p, int c, int l, bint face_up) noexcept nogil:
    """May player p play card c into line l of their own side with this face?"""
    cdef int o = 1 - p
    cdef int pr
    if passive_card(g, o, PA_DENY_ANY_LINE, l) >= 0:
        return False
    if face_up:
        if passive_card(g, o, PA_DENY_FACEUP, -1) >= 0:
            return False
        pr = cdef_of(g, c).protocol
        if pr != g.proto[p][l] and pr != g.proto[o][l] and passive_card(g, p, PA_FACEUP_ANYWHERE, -1) < 0:
            return False
        return True
    return passive_card(g, o, PA_DENY_FACEDOWN_LINE, l) < 0

cdef bint can_play_down_into(Game* g, int p, int l) noexcept nogil:
    return passive_card(g, 1 - p, PA_DENY_ANY_LINE, l) < 0 and passive_card(g, 1 - p, PA_DENY_FACEDOWN_LINE, l) < 0
