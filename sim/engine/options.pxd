# cython: language_level=3
"""The one encoding of decision options (the int32 values in State.opts that strategies return).
The engine packs them, the bots and sim/describe.py (through _core's `unpack_*` functions) read
them back; every pack and unpack goes through these helpers, so the layout lives here only.

    action / play        card | line << 8 | face-up << 10 | opponent's side << 11; OPT_REFRESH
    order (noted texts)  card * 4 + box
    rearrange            side * 8 + permutation index (PERMS in turn.pxi); OPT_SKIP
    discard_more         a card, or OPT_DONE
    everything else      the plain card, line, protocol, number or index the decision is about"""

from libc.stdint cimport int32_t

cdef enum:
    OPT_SKIP = 99              # control rearrange: keep the order
    OPT_DONE = 255             # discard more: stop
    OPT_REFRESH = 1 << 12      # the refresh action among action options
    PLAY_LINE_SHIFT = 8
    PLAY_UP_SHIFT = 10
    PLAY_SIDE_SHIFT = 11
    PLAY_CARD_MASK = 0xFF
    PLAY_PLACE_MASK = 0xF00    # line, face and side: where and how, without the card


# -- plays ------------------------------------------------------------------------------------

cdef inline int32_t play_option(int card, int line, int face_up, int opp_side) noexcept nogil:
    """A play of `card` into `line`, face-up or not, on the player's own or the opponent's side."""
    return card | (line << PLAY_LINE_SHIFT) | (face_up << PLAY_UP_SHIFT) | (opp_side << PLAY_SIDE_SHIFT)


cdef inline int play_card_of(int32_t opt) noexcept nogil:
    return opt & PLAY_CARD_MASK


cdef inline int play_line_of(int32_t opt) noexcept nogil:
    return (opt >> PLAY_LINE_SHIFT) & 3


cdef inline int play_face_up(int32_t opt) noexcept nogil:
    return (opt >> PLAY_UP_SHIFT) & 1


cdef inline int play_opp_side(int32_t opt) noexcept nogil:
    """1 when the card lands on the opponent's side."""
    return (opt >> PLAY_SIDE_SHIFT) & 1


cdef inline int32_t play_placement(int32_t opt) noexcept nogil:
    """Line, face and side of a play, card left out (plays alike for someone who cannot see it)."""
    return opt & PLAY_PLACE_MASK


# -- noted texts (the order of simultaneous triggers) ----------------------------------------

cdef inline int32_t noted_option(int card, int box) noexcept nogil:
    return card * 4 + box


cdef inline int noted_card(int32_t opt) noexcept nogil:
    return opt >> 2


cdef inline int noted_box(int32_t opt) noexcept nogil:
    return opt & 3


# -- rearrangements ---------------------------------------------------------------------------

cdef inline int32_t rearrange_option(int side, int perm) noexcept nogil:
    return side * 8 + perm


cdef inline int rearrange_side(int32_t opt) noexcept nogil:
    return opt >> 3


cdef inline int rearrange_perm(int32_t opt) noexcept nogil:
    return opt & 7
