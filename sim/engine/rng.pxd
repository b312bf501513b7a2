# cython: language_level=3
"""The one definition of the engine's randomness: splitmix64 (its golden-ratio increment and its
finaliser) and the counter-based streams built on it. Plain values, no game state, so the engine,
the bots (strategies/*.pyx) and the Python seed derivation (protolab/experiment/seeds.py, through the
engine's `mix64_array` / `splitmix64_array`) all draw from this file and cannot drift apart.

A stream draw is value = mix(mix(seed * gamma + key) ^ counter * STEP): nothing global, nothing
platform-dependent, so a seed gives the same numbers on every machine and in every worker. The
State-level wrappers (which counter, which key) are in _core.pxd."""

from libc.stdint cimport uint64_t

cdef enum StreamKey:
    KEY_ENGINE = 1     # the engine's draws on stream s use key s + 1 (rng_next, _core.pxd)
    KEY_BOT = 101      # the bots' private draws on the same counters use key s + 101 (bot_below)


cdef inline uint64_t mix64(uint64_t z) noexcept nogil:
    """splitmix64's finaliser: a bijection on 64-bit words that spreads every input bit."""
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t times_gamma(uint64_t x) noexcept nogil:
    """x times splitmix64's golden-ratio increment (wrapping): consecutive x land far apart."""
    return x * <uint64_t>0x9E3779B97F4A7C15ULL


cdef inline uint64_t splitmix64(uint64_t state) noexcept nogil:
    """splitmix64's output for a state: mix64(state + gamma) (the experiments' master key)."""
    return mix64(state + times_gamma(1))


cdef inline uint64_t stream_word(uint64_t seed, uint64_t key, uint64_t counter) noexcept nogil:
    """Word number `counter` of the stream (seed, key)."""
    return mix64(mix64(times_gamma(seed) + key) ^ (counter * <uint64_t>0xD6E8FEB86659FD93ULL))


cdef inline uint64_t next_word(uint64_t seed, uint64_t* counter, uint64_t key) noexcept nogil:
    """The next word of the stream (seed, key), advancing its counter."""
    cdef uint64_t c = counter[0]
    counter[0] = c + 1
    return stream_word(seed, key, c)


cdef inline int word_below(uint64_t word, int n) noexcept nogil:
    """A uniform integer in [0, n) from a word (multiply-shift on its high 32 bits)."""
    return <int>(((word >> 32) * <uint64_t>n) >> 32)


cdef inline double word_unit(uint64_t word) noexcept nogil:
    """A uniform double in [0, 1) from a word (its high 53 bits)."""
    return <double>(word >> 11) * (1.0 / 9007199254740992.0)
